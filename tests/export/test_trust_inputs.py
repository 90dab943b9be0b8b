"""export-pr on hostile inputs: upstream's ``.pre-commit-config.yaml`` naming a rev that leaves
the tool cache, and an imported author spread over lines (forged trailers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.errors import ConfigError, FormatterUnavailable
from patchkit.export.identity import Identity
from tests.export.test_export import MOD, Case, only

RUFF_AT = "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: {rev}\n"


def test_tool_rev_leaving_the_cache_is_refused_and_nothing_outside_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_TOOLS_OFFLINE", "1")
    cache = Path(os.environ["PATCHKIT_CACHE"])
    (cache / "tools" / "ruff-1").mkdir(parents=True)  # an earlier export's tool
    victim = cache.parent / "victim"  # where `1/../../../victim` lands
    marker = tmp_path / "ran"
    (victim / "bin").mkdir(parents=True)
    (victim / "bin" / "ruff").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (victim / "bin" / "ruff").chmod(0o755)
    config = RUFF_AT.format(rev="v1/../../../victim")
    case = Case(tmp_path / "c", "vllm", {"pkg/mod.py": MOD, ".pre-commit-config.yaml": config})
    case.add("fix", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, 'title = "F"\nwhy = "f"\n')
    with pytest.raises(FormatterUnavailable) as e:
        case.export("fix")
    assert not marker.exists()  # the binary outside the cache never ran
    assert (victim / "bin" / "ruff").exists()  # and nothing outside was removed
    assert e.value.exit_code == 10
    assert "pre-commit-config.yaml: rev of ruff: version '1/../../../victim'" in str(e.value)


def test_multi_line_author_forges_no_trailer(tmp_path: Path) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    author = "Evil\\nSigned-off-by: Linus Torvalds\\nReviewed-by: A Maintainer\\n<evil@example.com>"
    meta = f'title = "F"\nwhy = "f"\nauthor = "{author}"\n'
    case.add("fix", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, meta)
    export = only(case.export("fix"))
    message = case.git("log", "-1", "--format=%B", export.commit)
    lines = message.splitlines()
    assert not any(line.startswith(("Signed-off-by: Linus", "Reviewed-by:")) for line in lines)
    assert "Co-authored-by: Evil" not in message
    assert lines[-1] == "Signed-off-by: Ada Lovelace <ada@example.com>"


@pytest.mark.parametrize(
    "text", ["Ada\nSigned-off-by: Bob <bob@example.com>", "Ada <ada@x.org>\n", "Ada\r<ada@x.org>"]
)
def test_identity_is_one_line(text: str) -> None:
    with pytest.raises(ConfigError, match="on one line"):
        Identity.parse(text)


@pytest.mark.parametrize("prefix", ["zz.lock/", "z..z/", "-z/", "a b/"])
def test_a_branch_prefix_git_refuses_moves_no_branch(tmp_path: Path, prefix: str) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD, "pkg/other.py": "Y = 1\n"})
    case.add("aaa", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, 'title = "A"\nwhy = "a"\n')
    case.git("config", "patchkit.branchPrefix", prefix)
    with pytest.raises(ConfigError, match=r"git refuses the branch names of aaa .*no branch was"):
        case.export("aaa")
    assert case.git("for-each-ref", "refs/heads/") == case.git("for-each-ref", "refs/heads/main")


def test_two_titles_that_make_one_branch_move_no_branch(tmp_path: Path) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD, "pkg/other.py": "Y = 1\n"})
    case.add("aaa", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, 'title = "Fix f"\nwhy = "a"\n')
    case.add("bbb", {"pkg/other.py": "Y = 2\n"}, 'title = "Fix: f!"\nwhy = "b"\n')
    with pytest.raises(
        ConfigError, match="aaa and bbb would both be exported to branch test/fix-f"
    ):
        case.export("aaa", "bbb")
    assert case.git("for-each-ref", "refs/heads/test/") == ""


def test_onto_that_looks_like_an_option_is_refused(tmp_path: Path) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    case.add("fix", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, 'title = "F"\nwhy = "f"\n')
    with pytest.raises(ConfigError, match="--onto: revision '--output="):
        case.export("fix", onto=f"--output={tmp_path / 'written'}")
    assert not (tmp_path / "written").exists()
