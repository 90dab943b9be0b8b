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
