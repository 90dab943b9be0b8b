"""``export-pr --check-against``: a change upstream made already since the pin is no PR (a
duplicate a maintainer closes at once); not being able to look is said, not fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from tests.export.test_export import MOD, Case, vllm_case


def _upstream_release(case: Case, version: str, mod: str) -> None:
    """A later upstream release on a side branch; the checkout stays at the pin."""
    git = case.git
    git("checkout", "-q", "-b", f"rel-{version}")
    (case.upstream.path / "pkg" / "mod.py").write_text(mod)
    git("commit", "-qam", f"release {version}")
    git("tag", f"v{version}")
    git("checkout", "-q", "-")


def test_a_fix_upstream_made_since_the_pin_is_left_out_or_refused(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    _upstream_release(case, "2.0", "import os\n" + MOD.replace("x + 1", "x + 2"))
    report = case.export(check_against="v2.0")
    assert report.exports == ()
    assert report.left_out == ("fix-f: upstream vllm 2.0 already has this change",)
    # the only patch: no "none of the others" (there are none)
    assert report.checked == "checked against upstream vllm 2.0: already there: fix-f (left out)"
    with pytest.raises(ConfigError, match=r"upstream vllm 2\.0 already has the change of fix-f"):
        case.export("fix-f", check_against="v2.0")
    assert case.git("branch", "--list", "patchkit/*") == ""
    (export,) = case.export("fix-f", check_against=None).exports  # asked not to look
    assert export.files == ("pkg/mod.py",)


def test_a_release_without_the_fix_is_said_and_the_export_goes_on(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    _upstream_release(case, "2.0", "import os\n" + MOD)
    report = case.export("fix-f", check_against="v2.0")
    assert len(report.exports) == 1
    assert report.checked == (
        "checked against upstream vllm 2.0: none of these changes is there yet"
    )


def test_a_release_that_cannot_be_looked_at_is_said_not_fatal(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    report = case.export("fix-f", check_against="v9.9")
    assert len(report.exports) == 1
    assert report.checked.startswith("not checked against upstream vllm v9.9: ")


def test_the_command_line_looks_at_the_newest_by_default(tmp_path: Path) -> None:
    from patchkit.cli import build_parser

    args = build_parser().parse_args(["export-pr", "fix-f"])
    assert args.check_against == "latest"
