"""``verify --bench``'s unpatched tree: a worktree of the checkout at its commit (patchkit's edits
are uncommitted, so it holds upstream's bytes), removed afterwards; or ``--baseline``."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import TreeError
from patchkit.ops.verify_bench import unpatched_tree
from patchkit.workspace.installed import InstalledTree
from patchkit.workspace.tree import Tree
from testing.builders import Upstream, run_git


def test_the_unpatched_tree_is_a_worktree_at_the_checkouts_commit(tmp_path: Path) -> None:
    upstream = Upstream(tmp_path / "checkout")
    upstream.commit({"kernel.py": "GROUPS = (1, 2, 4, 8)\n"})
    (upstream.path / "kernel.py").write_text("GROUPS = (1, 2, 4, 8, 16)\n")  # the patched bytes
    tree = Tree(upstream.path, tmp_path / "state", "demo")
    with unpatched_tree(tree, None) as before:
        assert before != upstream.path
        assert (before / "kernel.py").read_text() == "GROUPS = (1, 2, 4, 8)\n"
    assert not before.exists()
    assert (upstream.path / "kernel.py").read_text() == "GROUPS = (1, 2, 4, 8, 16)\n"
    assert len(run_git(upstream.path, "worktree", "list").splitlines()) == 1  # none left


def test_a_baseline_is_used_as_given_and_an_install_needs_one(tmp_path: Path) -> None:
    installed = InstalledTree(tmp_path / "site", tmp_path / "state", "demo")
    with unpatched_tree(installed, tmp_path / "unpatched") as before:
        assert before == (tmp_path / "unpatched").resolve()
    with (
        pytest.raises(TreeError, match="no unpatched tree") as raised,
        unpatched_tree(installed, None),
    ):
        pass
    assert "--baseline" in (raised.value.hint or "")
