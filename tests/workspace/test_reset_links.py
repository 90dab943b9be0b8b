"""``reset --force`` over a symbolic link a person made or retargeted after apply: their link is
put aside as a link (same target), the upstream file comes back in its place, nothing is
written through a link, and a failed or interrupted reset leaves their link as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.errors import TreeError, UnsafePathError
from patchkit.workspace import txn
from patchkit.workspace.state import StateStore
from patchkit.workspace.txn import recover
from testing.builders import Scenario
from tests.workspace.test_journal import killed, tree_args

FILES = {"a.txt": "one\n", "b.txt": "bee\n", "other.txt": "other\n"}


def linked_by_person(tmp_path: Path) -> Scenario:
    """a.txt and b.txt patched; then a person made a.txt a link to other.txt."""
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": "one\ntwo\n", "b.txt": "bee\nsting\n"})
    s.set_series(["p1"])
    s.apply()
    os.unlink(s.root / "a.txt")
    os.symlink("other.txt", s.root / "a.txt")
    return s


def saved(s: Scenario) -> list[Path]:
    return sorted((s.tree().state_dir / "saved").glob("*/*"))


def test_reset_force_puts_a_persons_link_aside_as_a_link_and_restores_the_file(
    tmp_path: Path,
) -> None:
    s = linked_by_person(tmp_path)
    report = s.reset(force=True)
    a = s.root / "a.txt"
    assert not a.is_symlink() and a.read_text() == "one\n"
    assert (s.root / "other.txt").read_text() == "other\n"  # never written through the link
    assert (s.root / "b.txt").read_text() == "bee\n"
    assert report.saved_aside is not None
    kept = report.saved_aside / "a.txt"
    assert kept.is_symlink() and os.readlink(kept) == "other.txt"


def test_reset_force_keeps_a_link_the_person_retargeted_as_a_link(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add_edit("p1", lambda root: os.symlink("a.txt", root / "l"))
    s.set_series(["p1"])
    s.apply()
    os.unlink(s.root / "l")
    os.symlink("other.txt", s.root / "l")
    report = s.reset(force=True)
    assert not (s.root / "l").is_symlink() and not (s.root / "l").exists()
    assert report.saved_aside is not None
    kept = report.saved_aside / "l"
    assert kept.is_symlink() and os.readlink(kept) == "other.txt"


def test_a_reset_that_fails_after_replacing_the_link_puts_the_link_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = linked_by_person(tmp_path)
    real, calls = txn._put_back, []

    def failing(*args: object, **kw: object) -> None:
        calls.append(args[1])
        if len(calls) == 2:  # a.txt replaced, then writing b.txt fails
            raise OSError(28, "No space left on device")
        real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(txn, "_put_back", failing)
    with pytest.raises(TreeError, match="every file was put back"):
        s.reset(force=True)
    a = s.root / "a.txt"
    assert a.is_symlink() and os.readlink(a) == "other.txt"
    assert (s.root / "b.txt").read_text() == "bee\nsting\n"


def test_a_reset_killed_after_replacing_the_link_is_rolled_back_to_the_link(
    tmp_path: Path,
) -> None:
    s = linked_by_person(tmp_path)
    killed("reset", "--force", *tree_args(s), after=1)
    a = s.root / "a.txt"
    assert not a.is_symlink() and a.read_text() == "one\n"  # the crash came after a.txt
    recovery = recover(s.tree(), StateStore(s.tree().state_dir))
    assert recovery is not None and "a.txt" in recovery.restored
    assert a.is_symlink() and os.readlink(a) == "other.txt"
    assert s.reset(force=True).restored == ("a.txt", "b.txt")
    assert a.read_text() == "one\n" and (s.root / "b.txt").read_text() == "bee\n"


def test_a_link_out_of_the_tree_is_refused_before_anything_is_saved(tmp_path: Path) -> None:
    s = linked_by_person(tmp_path)
    os.unlink(s.root / "a.txt")
    os.symlink(str(tmp_path / "elsewhere"), s.root / "a.txt")
    with pytest.raises(UnsafePathError, match=r"a\.txt"):
        s.reset(force=True)
    assert saved(s) == []
    assert os.readlink(s.root / "a.txt") == str(tmp_path / "elsewhere")


def test_a_directory_put_where_a_patched_file_was_is_refused_before_saving(
    tmp_path: Path,
) -> None:
    s = linked_by_person(tmp_path)
    os.unlink(s.root / "a.txt")
    (s.root / "a.txt").mkdir()
    (s.root / "b.txt").write_text("edited\n")
    with pytest.raises(TreeError, match=r"a\.txt"):
        s.reset(force=True)
    assert saved(s) == []
    assert (s.root / "b.txt").read_text() == "edited\n"
