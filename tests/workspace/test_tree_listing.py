"""A tree lists the files under a directory (what a searching rewrite reads), never git's or
patchkit's own files."""

from __future__ import annotations

from pathlib import Path

from patchkit.workspace.tree import Tree


def test_files_under_lists_repository_paths_and_skips_git_and_state(tmp_path: Path) -> None:
    for name in ("pkg/a.py", "pkg/sub/b.py", "other/c.py", ".git/HEAD", "pkg/.git/x"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    state = tmp_path / "pkg" / "state"
    state.mkdir()
    (state / "s.json").write_text("{}")
    tree = Tree(tmp_path, state, "demo")
    assert tree.files_under("pkg") == ["pkg/a.py", "pkg/sub/b.py"]
    assert tree.files_under("") == ["other/c.py", "pkg/a.py", "pkg/sub/b.py"]
    assert tree.files_under("missing") == []


def test_a_mapper_that_does_not_hold_a_file_hides_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x\n")
    (tmp_path / "pkg" / "b.py").write_text("x\n")
    tree = Tree(
        tmp_path, tmp_path / ".state", "demo", mapper=lambda p: None if p.endswith("b.py") else p
    )
    assert tree.files_under("pkg") == ["pkg/a.py"]
