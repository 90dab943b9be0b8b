"""trust.paths: a path named by input resolves (symlinks included) inside its root and never
into a git directory; properties over a tree full of hostile links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchkit.errors import ConfigError, UnsafePathError
from patchkit.trust.paths import Fence, inside, names_git_dir, under


def hostile_tree(base: Path) -> tuple[Path, Path]:
    """A checkout-like root with links into its .git, out of it and up, and a git directory
    of a linked worktree kept outside it; (root, that git directory)."""
    root, outside = base / "root", base / "outside"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "a" / "b").mkdir(parents=True)
    (root / "sub" / ".git").mkdir(parents=True)  # a submodule's own git dir
    outside.mkdir()
    worktree_git = base / "main.git" / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    links = {
        "gitlink": ".git",
        "a/hooks": "../.git/hooks",
        "out": str(outside),
        "up": "..",
        "a/b/deep": "../../..",
        "wtgit": str(worktree_git),
        "subgit": "sub/.git",
        "self": ".",
        "loop": "loop",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root, worktree_git


def test_a_link_to_dot_git_is_refused(tmp_path: Path) -> None:
    root, _ = hostile_tree(tmp_path)
    with pytest.raises(UnsafePathError, match="inside a git directory"):
        under(root, "gitlink/hooks/post-checkout", what="x.patch")
    with pytest.raises(UnsafePathError, match="inside a git directory"):
        Fence.of(root).place("gitlink/config")


def test_a_fenced_git_dir_outside_the_root_is_refused(tmp_path: Path) -> None:
    root, wt_git = hostile_tree(tmp_path)
    fence = Fence.of(root, [wt_git, wt_git.parent.parent])
    with pytest.raises(UnsafePathError, match="outside"):
        fence.place("wtgit/HEAD")
    inner = Fence.of(tmp_path, [wt_git.parent.parent])
    with pytest.raises(UnsafePathError, match="never writes"):
        inner.place("main.git/config")


@pytest.mark.parametrize(
    "raw", ["/etc/passwd", "../x", "a/../../x", "x\0y", "", ".", "a/", "out/x", "up/x", "gitlink/x"]
)
def test_escapes_are_refused_with_the_callers_error(tmp_path: Path, raw: str) -> None:
    root, _ = hostile_tree(tmp_path)
    with pytest.raises(ConfigError, match=r"set\.toml: key `file`"):
        under(root, raw, what="set.toml: key `file`", error=ConfigError)


def test_ordinary_paths_pass(tmp_path: Path) -> None:
    root, _ = hostile_tree(tmp_path)
    assert under(root, "a/b/new.py", what="x") == (root / "a/b/new.py").resolve()
    assert Fence.of(root).place("self/a/x") == str(root.resolve() / "a/x")


PARTS = ["a", "b", "x", "..", ".", ".git", ".GIT", "gitlink", "out", "up", "deep", "wtgit", "hooks"]
PARTS += ["subgit", "sub", "self", "loop"]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(PARTS), min_size=1, max_size=6))
def test_no_accepted_path_resolves_outside_or_into_a_git_dir(
    tmp_path: Path, parts: list[str]
) -> None:
    base = tmp_path / "t"
    if not base.exists():
        base.mkdir()
        hostile_tree(base)
    root = base / "root"
    real_root = os.path.realpath(root)
    relative = "/".join(parts)
    for follow in (True, False):
        try:
            got = under(root, relative, what="p", follow=follow)
        except UnsafePathError:
            continue
        final = os.path.realpath(got) if follow else str(got)
        assert inside(final, real_root)
        assert not names_git_dir(final[len(real_root) :])
    try:
        placed = Fence.of(root).place(relative)
    except UnsafePathError:
        return
    parent = os.path.realpath(os.path.dirname(placed))
    assert inside(placed, real_root) and (parent == real_root or inside(parent, real_root))
    assert not names_git_dir(placed[len(real_root) :])
