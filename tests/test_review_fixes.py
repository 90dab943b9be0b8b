"""Small robustness fixes from the session's review: each test fails without its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.export.upstream_test import _outcome
from patchkit.project.sets import _hardware
from patchkit.workspace.locks import exclusive


def test_other_libraries_dataclasses_keep_real_annotations_after_import_patchkit(
    tmp_path: Path,
) -> None:
    """patchkit routes only its own modules' dataclass code through its cache; a foreign
    module's ``__init__`` annotations are real types, not strings the cache's flags made."""
    (tmp_path / "foreign.py").write_text(
        "import dataclasses\n\n@dataclasses.dataclass\nclass C:\n    a: int\n"
    )
    code = (
        "import patchkit.model, typing, foreign\nprint(typing.get_type_hints(foreign.C.__init__))\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{Path.cwd()}"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert "<class 'int'>" in out


def test_a_run_where_every_case_was_skipped_is_not_run_not_failed(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase classname="t" name="a"><skipped message="gpu"/>'
        '</testcase><testcase classname="t" name="b"><skipped message="gpu"/></testcase>'
        "</testsuite></testsuites>"
    )
    result, detail = _outcome(0, junit.read_text(), "", None)
    assert result == "not run" and "2 skipped" in detail


def test_hardware_that_is_not_a_list_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be a list"):
        _hardware({"hardware": 12.1}, tmp_path / "p.toml")


def test_a_lock_the_file_system_cannot_take_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NFS without lock support says ENOLCK: a configuration error naming the lock, not a
    traceback (exit 70)."""
    import errno
    import fcntl

    def no_locks(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with pytest.raises(ConfigError, match="cannot lock the tree"):  # noqa: SIM117
        with exclusive(tmp_path / "t", "the tree", "patchkit apply"):
            pass


def test_an_upstream_test_given_as_a_rewrite_is_refused_clearly(tmp_path: Path) -> None:
    from patchkit.project.exportspec import _test

    (tmp_path / "t.py").write_text("# a rewrite\n")
    with pytest.raises(ConfigError, match="is a rewrite"):
        _test({"test": {"file": "t.py", "run": ["tests/t.py"]}}, tmp_path / "p.toml", tmp_path)


def test_a_recorded_pr_the_search_cannot_look_up_is_kept() -> None:
    from patchkit.model import PrState, UpstreamPr
    from patchkit.upstream.duplicates import decide

    other = UpstreamPr("https://github.com/other/fork/pull/7", PrState.OPEN, "2026-11-01")
    assert decide([], "2026-11-23", other) == UpstreamPr(other.pr, PrState.OPEN, "2026-11-23")
    assert decide([], "2026-11-23").state is PrState.NONE
