"""Which of many paths someone changed: asked of git by name, or (above a few hundred names)
by one status of the whole tree, filtered; both answers are the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.workspace import treecheck
from patchkit.workspace.tree import checkout_tree
from testing.builders import Upstream, run_git


def test_the_whole_tree_answer_is_the_named_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    up = Upstream(tmp_path / "up")
    up.commit({f"d{i % 7}/f{i}.txt": f"{i}\n" for i in range(40)}, "base")
    (up.path / "d1" / "f1.txt").write_text("edited\n")
    run_git(up.path, "mv", "d2/f2.txt", "d2/moved.txt")  # a staged rename: both paths changed
    (up.path / "d3" / "new.txt").write_text("untracked\n")
    (up.path / "d4" / "f4.txt").unlink()
    (up.path / "d5" / "f5.txt").write_text("not asked\n")
    tree = checkout_tree(up.path, "demo")
    asked = [f"d{i % 7}/f{i}.txt" for i in range(40) if i != 5] + ["d3/new.txt", "d2/moved.txt"]
    by_name = treecheck.changed_files(tree, asked)
    monkeypatch.setattr(treecheck, "WHOLE_TREE_ABOVE", 3)
    assert treecheck.changed_files(tree, asked) == by_name
    assert by_name == ["d1/f1.txt", "d2/f2.txt", "d2/moved.txt", "d3/new.txt", "d4/f4.txt"]


def test_a_rename_git_sees_in_the_work_tree_changes_both_paths(tmp_path: Path) -> None:
    """A file moved and added with intent (``git add -N``): git reports `` R new\\0old``; the old
    path is a change too, and is not read as an entry of its own."""
    from patchkit.gitrepo import GitRepo

    up = Upstream(tmp_path / "up")
    up.commit({"a.txt": "line1\nline2\nline3\nline4\n", "keep.txt": "x\n"}, "base")
    (up.path / "a.txt").rename(up.path / "b.txt")
    run_git(up.path, "add", "-N", "b.txt")
    with GitRepo(up.path) as repo:
        assert sorted(repo.dirty_paths()) == ["a.txt", "b.txt"]
        assert sorted(repo.dirty_paths(["a.txt", "keep.txt"])) == ["a.txt"]
