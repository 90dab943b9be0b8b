"""One table of exit codes, the same in every command: each case is run through ``main`` as a
person would, and must give the code the README documents for that kind of failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.errors import EXIT_CODES
from testing.builders import Scenario

FILES = {"a.txt": "a one\na two\n", "b.txt": "b one\nb two\n"}
BROKEN_DIFF = b"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a one\n-a two\n+a TWO\n"


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    return s


def run(s: Scenario, *args: str, checkout: bool = True) -> int:
    where = ["--checkout", str(s.root)] if checkout else []
    return main([args[0], "--target", "demo", "--project", str(s.project.path), *where, *args[1:]])


def break_patch(s: Scenario) -> Path:
    patch = s.set_root / "patches" / "p1.patch"
    patch.write_bytes(BROKEN_DIFF)  # a hunk that says 3 old lines and carries 2
    return patch


def test_the_table_has_one_meaning_per_code() -> None:
    assert sorted(EXIT_CODES) == [0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 70, 130]


def test_a_malformed_diff_is_6_in_apply_and_in_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    patch = break_patch(s)
    assert run(s, "apply") == 6
    assert main(["port", str(patch), "--base", s.base, "--checkout", str(s.root)]) == 6
    assert "not a valid unified diff" in capsys.readouterr().err


def test_nothing_to_abort_or_continue_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    assert run(s, "rebase", "--abort", checkout=False) == 2
    assert run(s, "rebase", "--continue", checkout=False) == 2
    assert "no rebase of demo is in progress" in capsys.readouterr().err


def test_an_unknown_target_or_patch_is_a_usage_error(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    assert main(["status", "--target", "nope", "--project", str(s.project.path)]) == 2
    assert main(["show", "nope", "--project", str(s.project.path)]) == 2


def test_a_tree_with_edits_in_patched_files_is_refused_with_4(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    (s.root / "a.txt").write_text("edited by hand\n")
    assert run(s, "apply") == 4


def test_messages_show_values_not_python_reprs() -> None:
    from patchkit.errors import shown

    assert shown("a\x00b") == "'a<NUL>b'"
    assert shown(None) == "nothing"
    assert shown(b"x\ty") == "'x<TAB>y'"
    assert shown(3) == "3"


def test_a_nul_byte_in_a_patch_path_is_named_not_repred(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    patch = s.set_root / "patches" / "p1.patch"
    patch.write_bytes(b"--- a/a\x00.txt\n+++ b/a\x00.txt\n@@ -1 +1 @@\n-a one\n+A one\n")
    assert run(s, "apply") == 5
    err = capsys.readouterr().err
    assert "<NUL>" in err and "\\x00" not in err
