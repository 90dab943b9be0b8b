"""Symbolic links a write makes, retargets or removes inside a tree (``workspace.links``,
``workspace.places``): read as their target, never followed, written all or nothing, and
refused with the link and its target named wherever they would lead out of the tree or write
through a link."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from patchkit.errors import TreeError, UnsafePathError
from patchkit.workspace.journal import Write, save_journal
from patchkit.workspace.links import LINK, target_problem
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree
from patchkit.workspace.txn import _put_back, commit, recover
from testing.builders import snapshot


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.txt").write_text("a\n")
    (root / "notes.txt").write_text("notes\n")
    os.symlink("a.txt", root / "pkg" / "same")  # a link inside the tree
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("keep\n")
    return Tree(root, tmp_path / "state", "demo")


@pytest.mark.parametrize(
    ("link", "target", "why"),
    [
        ("l", b"/etc/passwd", "absolute"),
        ("pkg/l", b"../../x", "out of the tree"),
        ("l", b"a/../../x", "`..` after a name"),
        ("pkg/l", b"..", "the root or a directory above"),
        ("l", b"a\0b", "NUL"),
        ("l", b"a\nb", "newline"),
        ("l", b"x" * 5000, "longer than file systems allow"),
        ("l", b"a/" + b"y" * 300, "longer than file systems allow"),
        ("l", b"", "empty"),
        ("l", b".git/hooks/pre-commit", r"inside \.git"),
    ],
)
def test_a_target_that_leaves_the_tree_or_cannot_be_a_path_is_refused_by_its_text(
    link: str, target: bytes, why: str
) -> None:
    problem = target_problem(link, target)
    assert problem is not None and re.search(why, problem), problem


@pytest.mark.parametrize(
    ("link", "target"),
    [("l", b"notes.txt"), ("pkg/l", b"../notes.txt"), ("a/b/l", b"../../pkg/./a.txt")],
)
def test_a_target_inside_the_tree_passes(link: str, target: bytes) -> None:
    assert target_problem(link, target) is None


def test_a_link_is_read_as_its_target_and_never_followed(tree: Tree) -> None:
    assert tree.read("pkg/same") == b"a.txt"
    assert tree.mode("pkg/same") == LINK
    os.symlink("../../outside/secret.txt", tree.root / "pkg" / "out")
    with pytest.raises(UnsafePathError, match=r"pkg/out: is a symlink to '\.\./\.\./outside"):
        tree.read("pkg/out")
    with pytest.raises(UnsafePathError, match="symlink"):
        tree.mode("pkg/out")


def test_links_are_made_retargeted_and_removed_and_the_state_restores_them(tree: Tree) -> None:
    store = StateStore(tree.state_dir)
    before = snapshot(tree.root)
    writes = [
        Write("docs/new", b"../notes.txt", LINK),  # made, its directory too
        Write("pkg/same", b"../notes.txt", LINK),  # retargeted
    ]
    commit(tree, store, writes, None)
    assert os.readlink(tree.root / "docs" / "new") == "../notes.txt"
    assert os.readlink(tree.root / "pkg" / "same") == "../notes.txt"
    assert (tree.root / "pkg" / "same").read_text() == "notes\n"
    commit(tree, store, [Write("docs/new", None), Write("pkg/same", b"a.txt", LINK)], None)
    assert snapshot(tree.root) == before
    commit(tree, store, [Write("pkg/same", None)], None)
    assert not os.path.lexists(tree.root / "pkg" / "same")


def test_a_failed_write_puts_a_replaced_or_removed_link_back_exactly(tree: Tree) -> None:
    store = StateStore(tree.state_dir)
    os.symlink("pkg/a.txt", tree.root / "gone")
    before = snapshot(tree.root)

    def fail() -> None:
        raise OSError(28, "No space left on device")

    writes = [Write("pkg/same", b"../notes.txt", LINK), Write("gone", None)]
    with pytest.raises(OSError, match="No space"):
        commit(tree, store, writes, None, then=fail)
    assert snapshot(tree.root) == before
    assert os.readlink(tree.root / "gone") == "pkg/a.txt"


def test_an_interrupted_write_is_rolled_back_to_the_links_it_replaced(tree: Tree) -> None:
    """The journal names each link's target and mode 120000; the next writer puts it back."""
    store = StateStore(tree.state_dir)
    os.symlink("pkg/a.txt", tree.root / "gone")
    before = snapshot(tree.root)
    writes = [Write("pkg/same", b"../notes.txt", LINK), Write("gone", None)]
    save_journal(
        tree,
        store,
        writes,
        {w.path: (tree.read(w.path), tree.mode(w.path)) for w in writes},
        "port",
    )
    for w in writes:  # written, and the process dies before the commit point
        _put_back(tree, w.path, w.content, w.mode)
    assert os.readlink(tree.root / "pkg" / "same") == "../notes.txt"
    recovered = recover(tree, store)
    assert recovered is not None and recovered.restored == ("gone", "pkg/same")
    assert snapshot(tree.root) == before


@pytest.mark.parametrize(
    ("writes", "error", "message"),
    [
        ([Write("pkg", b"notes.txt", LINK)], TreeError, "it is a directory"),
        ([Write("notes.txt", b"pkg/a.txt", LINK)], TreeError, "it is a regular file"),
        ([Write("pkg/same", b"b\n")], UnsafePathError, "symlink .*does not write through"),
        ([Write("l", b"/etc/passwd", LINK)], UnsafePathError, "l: refused: .*absolute"),
        ([Write("l", b"out/secret.txt", LINK)], UnsafePathError, "outside"),
        ([Write("out/x.txt", b"x\n")], UnsafePathError, "outside .*through a symlink"),
        ([Write("in/x.txt", b"x\n")], UnsafePathError, "in is a symbolic link .*'pkg'"),
        (
            [Write("d", b"pkg", LINK), Write("d/x.txt", b"x\n")],
            UnsafePathError,
            "d is a symbolic link",
        ),
    ],
)
def test_what_would_leave_the_tree_or_write_through_a_link_is_refused_and_nothing_written(
    tree: Tree, writes: list[Write], error: type[Exception], message: str
) -> None:
    os.symlink("../outside", tree.root / "out")  # a link the tree has that leads out
    os.symlink("pkg", tree.root / "in")  # one that stays in
    before = snapshot(tree.root)
    with pytest.raises(error, match=message):
        commit(tree, StateStore(tree.state_dir), [Write("notes.txt", b"new\n"), *writes], None)
    assert snapshot(tree.root) == before
    assert (tree.root.parent / "outside" / "secret.txt").read_text() == "keep\n"


def test_an_interrupted_retarget_keeps_a_file_someone_put_where_the_link_was(tree: Tree) -> None:
    """A regular file with the bytes the write gave the link is theirs, not the link's: the
    roll-back keeps it (it never writes the old target into a regular file)."""
    store = StateStore(tree.state_dir)
    writes = [Write("pkg/same", b"../notes.txt", LINK)]
    save_journal(tree, store, writes, {"pkg/same": (b"a.txt", LINK)}, "port")
    _put_back(tree, "pkg/same", b"../notes.txt", LINK)
    (tree.root / "pkg" / "same").unlink()
    (tree.root / "pkg" / "same").write_bytes(b"../notes.txt")  # a person's file now
    recovered = recover(tree, store)
    assert recovered is not None and recovered.kept == ("pkg/same",)
    assert not os.path.islink(tree.root / "pkg" / "same")
    assert (tree.root / "pkg" / "same").read_bytes() == b"../notes.txt"
