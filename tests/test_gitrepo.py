"""The one module that runs git: files of a commit read in the object session."""

from __future__ import annotations

from pathlib import Path

from patchkit.gitrepo import GitRepo
from testing.builders import Upstream, run_git


def test_read_files_keeps_the_files_asked_for_that_the_commit_holds(tmp_path: Path) -> None:
    up = Upstream(tmp_path / "up")
    first = up.commit({"a.py": "a\n", "pkg/b.py": "b\n", "odd\nname.txt": "odd\n"})
    up.commit({"a.py": "changed\n"})
    with GitRepo(up.path) as repo:
        found = repo.read_files(first, ["a.py", "pkg", "missing.py", "odd\nname.txt", "a.py"])
        assert found == {"a.py": b"a\n", "odd\nname.txt": b"odd\n"}  # a directory is no file
        assert repo.read_files("HEAD", ["a.py", "pkg/b.py"]) == {
            "a.py": b"changed\n",
            "pkg/b.py": b"b\n",
        }
        assert repo.read_files(first, []) == {}


def _git_says(path: Path) -> tuple[Path, Path] | None:
    from patchkit.gitrepo import checkout

    return checkout._ask_git_for_checkout(path)


def test_checkout_found_without_git_as_git_finds_it(tmp_path: Path) -> None:
    """Reading ``.git`` gives git's own answer for a checkout, a subdirectory of it, a linked
    worktree and a submodule-style ``gitdir:`` file; a path in no checkout or inside ``.git``
    gets git's answer too (None)."""
    import subprocess

    from patchkit.gitrepo import checkout

    up = Upstream(tmp_path / "up")
    up.commit({"pkg/a.py": "a\n"})
    subprocess.run(
        ["git", "-C", str(up.path), "worktree", "add", "-q", str(tmp_path / "linked")], check=True
    )
    moved = tmp_path / "moved"
    moved.mkdir()
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(tmp_path / "sep.git"), str(moved)],
        check=True,
    )
    alone = tmp_path / "alone"
    alone.mkdir()
    cases = [up.path, up.path / "pkg", tmp_path / "linked", tmp_path / "linked" / "pkg", moved]
    for path in cases:
        read = checkout._read_checkout(path)
        assert read is not None, path  # the plain case: no git process
        assert read == _git_says(path), path
        assert checkout.locate_checkout(path) == read
    for path in (up.path / ".git", up.path / ".git" / "refs"):
        assert checkout._read_checkout(path) is None  # left to git, which says no work tree
        assert checkout.locate_checkout(path) == _git_says(path) is None
    if _git_says(alone) is None:  # (tmp_path itself may sit in some checkout)
        assert checkout.locate_checkout(alone) is None


def test_a_checkout_configured_elsewhere_is_left_to_git(tmp_path: Path) -> None:
    """``core.worktree`` or a bare repository: git's rules, so git answers."""
    import subprocess

    from patchkit.gitrepo import checkout

    up = Upstream(tmp_path / "up")
    up.commit({"a.py": "a\n"})
    subprocess.run(["git", "-C", str(up.path), "config", "core.bare", "true"], check=True)
    assert checkout._read_checkout(up.path) is None
    assert checkout.locate_checkout(up.path) == _git_says(up.path)
    subprocess.run(["git", "-C", str(up.path), "config", "core.bare", "false"], check=True)
    subprocess.run(
        ["git", "-C", str(up.path), "config", "core.worktree", str(tmp_path)], check=True
    )
    assert checkout._read_checkout(up.path) is None
    assert checkout.locate_checkout(up.path) == _git_says(up.path)
    run_git(up.path, "config", "--unset", "core.worktree")
    assert checkout._read_checkout(up.path) is not None
    for key, value in (
        ("core.bare", "1"),
        ("core.bare", "yes"),
        ("extensions.worktreeConfig", "true"),
    ):
        run_git(up.path, "config", key, value)
        assert checkout._read_checkout(up.path) is None, (key, value)
        assert checkout.locate_checkout(up.path) == _git_says(up.path)
        run_git(up.path, "config", "--unset", key)


def test_resolve_answers_as_rev_parse_does(tmp_path: Path) -> None:
    """A full commit id is looked up in the object session; its answers are rev-parse's: the
    commit for a commit (or a tag object naming one), None for a blob, a tree or a missing id."""
    import patchkit.gitrepo as gitrepo

    up = Upstream(tmp_path / "up")
    first = up.commit({"a.py": "a\n"})
    run_git(up.path, "tag", "-a", "-m", "t", "t1", first)
    with GitRepo(up.path) as repo:
        tag = repo.text("rev-parse", "t1")
        tree = repo.text("rev-parse", f"{first}^{{tree}}")
        blob = repo.text("rev-parse", f"{first}:a.py")
        for rev in (first, tag, tree, blob, "0" * 40, "t1", "v9"):
            asked = gitrepo.run(
                ["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], cwd=up.path, ok_codes=(0, 1)
            )
            assert repo.resolve(rev) == (asked.stdout.decode().strip() or None), rev
        assert repo.resolve(first) == first and repo.resolve(blob) is None


def test_is_repo_of_a_missing_directory_or_a_file_is_false(tmp_path: Path) -> None:
    from patchkit.gitrepo import is_repo

    up = Upstream(tmp_path / "up")
    up.commit({"a.py": "a\n"})
    assert is_repo(up.path) and not is_repo(tmp_path / "gone")
    assert not is_repo(up.path / "a.py")
