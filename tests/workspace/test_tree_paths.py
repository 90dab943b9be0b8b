"""A tree checks where a repository path lives once per command, but whether the file is a
symlink every time it is read or written: a link swapped in after the first look is refused,
and nothing outside the tree is read or written through it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.engine.series import touched_paths
from patchkit.errors import TreeError, UnsafePathError
from patchkit.workspace.journal import Write
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree, write_file
from patchkit.workspace.txn import commit
from testing.builders import Scenario


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("a\n")
    (tmp_path / "outside.txt").write_text("keep\n")
    return Tree(root, tmp_path / "state", "demo")


def _swap_for_link(tree: Tree) -> Path:
    """Replace pkg/a.py by a symlink to a file beside the tree, after the tree looked at it."""
    outside = tree.root.parent / "outside.txt"
    (tree.root / "pkg" / "a.py").unlink()
    os.symlink(outside, tree.root / "pkg" / "a.py")
    return outside


def test_a_link_swapped_in_after_the_first_read_is_refused_when_read(tree: Tree) -> None:
    assert tree.read("pkg/a.py") == b"a\n"  # the place is checked and remembered
    assert tree.mode("pkg/a.py") == 0o100644
    _swap_for_link(tree)
    with pytest.raises(UnsafePathError, match="symlink"):
        tree.read("pkg/a.py")
    with pytest.raises(UnsafePathError, match="symlink"):
        tree.mode("pkg/a.py")
    with pytest.raises(UnsafePathError, match="symlink"):
        tree.disk_path("pkg/a.py")


def test_a_link_swapped_in_before_the_write_is_refused_and_nothing_outside_changes(
    tree: Tree,
) -> None:
    store = StateStore(tree.state_dir)
    assert tree.read("pkg/a.py") == b"a\n"
    commit(tree, store, [Write("pkg/a.py", b"b\n")], None)  # the place is remembered now
    outside = _swap_for_link(tree)
    with pytest.raises(UnsafePathError, match="symlink"):
        commit(tree, store, [Write("pkg/a.py", b"evil\n")], None)
    assert outside.read_text() == "keep\n"
    assert os.path.islink(tree.root / "pkg" / "a.py")


def test_places_are_checked_once_but_refusals_stay_refusals(tree: Tree) -> None:
    for _ in range(2):  # the second ask is answered from what the first found
        with pytest.raises(UnsafePathError, match=r"inside \.git"):
            tree.read(".git/config")
    assert tree.place("pkg/a.py") is tree.place("pkg/a.py")


def test_a_directory_is_not_read_as_a_file(tree: Tree) -> None:
    with pytest.raises(TreeError, match="is a directory"):
        tree.read("pkg")
    assert tree.read("pkg/missing.py") is None
    assert tree.read("pkg/a.py/under") is None  # a parent that is a file: nothing lives there


def test_a_temporary_file_planted_as_a_link_is_never_written_through(tree: Tree) -> None:
    outside = tree.root.parent / "outside.txt"
    os.symlink(outside, tree.root / "pkg" / ".a.py.patchkit-tmp")
    write_file(tree.root / "pkg" / "a.py", b"new\n", None)
    assert outside.read_text() == "keep\n"
    assert (tree.root / "pkg" / "a.py").read_bytes() == b"new\n"
    assert not os.path.lexists(tree.root / "pkg" / ".a.py.patchkit-tmp")


def test_write_file_keeps_the_mode_makes_directories_and_sets_a_given_mode(tree: Tree) -> None:
    target = tree.root / "pkg" / "a.py"
    os.chmod(target, 0o755)
    write_file(target, b"kept\n", None)
    assert os.stat(target).st_mode & 0o777 == 0o755
    write_file(target, b"plain\n", 0o100644)
    assert os.stat(target).st_mode & 0o777 == 0o644
    write_file(tree.root / "new" / "deep" / "b.py", b"b\n", 0o100755)
    assert os.stat(tree.root / "new" / "deep" / "b.py").st_mode & 0o777 == 0o755


def test_a_patch_file_edited_between_two_reads_is_parsed_again(tmp_path: Path) -> None:
    """Diffs are parsed once per content, not once per path: an edited patch is read anew."""
    s = Scenario(tmp_path, {"a.txt": "a\n", "b.txt": "b\n"})
    patch = s.add("p", {"a.txt": "A\n"})
    assert touched_paths(s.patches()[0]) == ["a.txt"]
    patch.write_bytes(patch.read_bytes().replace(b"a.txt", b"b.txt").replace(b"-a\n", b"-b\n"))
    assert touched_paths(s.patches()[0]) == ["b.txt"]
    assert [r.outcome.ok for r in s.apply().results] == [True]
    assert s.read("b.txt") == b"A\n" and s.read("a.txt") == b"a\n"
