"""The cache repository of one target (``<cache>/repos/<target>.git``) and the worktrees made
from it: the shared tree ``fetch`` keeps at the locked commit, and throwaway ones. What fills
the repository (source releases, git fetches) is :mod:`patchkit.upstream.sources`.

Git commands used here beyond :class:`GitRepo`'s own methods, all through ``GitRepo.git``:
``rev-parse --git-common-dir`` and ``worktree remove``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from filelock import FileLock

from patchkit import progress
from patchkit.cache import Cache
from patchkit.errors import TreeError
from patchkit.gitrepo import GitRepo, is_repo

_Repo = TypeVar("_Repo", bound="UpstreamRepo")


@dataclass(frozen=True)
class FetchedTree:
    path: Path  # a git worktree at the release (the user's own checkout for a path source)
    target: str
    version: str  # the release as the index spells it, or the locked version for git/path
    local_commit: str | None  # commit id in the cache repository; HEAD for a path source
    upstream_commit: str | None  # what the release names; None when it names nothing


class UpstreamRepo:
    """The bare repository of one target in the cache, and the worktrees made from it."""

    def __init__(self, target: str, *, path: Path | None = None) -> None:
        self.target = target
        self.path = path or Cache.current().repo(target)
        if not self.path.is_dir():
            with exclusive(self.path):
                if not self.path.is_dir():
                    _init_bare_atomically(self.path)
        self.repo = GitRepo(self.path)

    def close(self) -> None:
        self.repo.close()

    def __enter__(self: _Repo) -> _Repo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def shared_tree(self) -> Path:
        return self.shared_path(self.target)

    @staticmethod
    def shared_path(target: str) -> Path:
        """``<cache>/trees/<target>``: the tree ``fetch`` keeps at the locked commit."""
        return Cache.current().tree(target)

    def place_tree(self, commit: str, path: Path) -> Path:
        """A worktree at ``path`` detached at ``commit``: made, moved (if clean), or left; one
        process at a time (two fetches never make or move it together)."""
        with exclusive(self.path):
            return self._place_tree(commit, path)

    def _place_tree(self, commit: str, path: Path) -> Path:
        if not path.exists() or _is_empty_dir(path):
            return self.fresh_tree(commit, path)
        with self._own_tree(path) as tree:
            if tree.head() == commit:
                return path
            dirty = tree.dirty_paths()
            if dirty:
                raise TreeError(
                    f"{path} has local changes ({_sample(dirty)}) and is at {tree.head()}, "
                    f"not {commit}; refusing to move it",
                    hint=f"if those are the patches of the previous lock, `patchkit reset "
                    f"--target {self.target} --checkout {path}` first; or remove {path}",
                )
            with progress.step(f"moving the cache's tree of {self.target} to {commit[:12]}"):
                tree.checkout_detached(commit)
        return path

    def fresh_tree(self, commit: str, path: Path) -> Path:
        """A new worktree at ``path`` (absent or an empty directory), detached at ``commit``."""
        if path.exists() and not _is_empty_dir(path):
            raise TreeError(
                f"{path} already exists and is not empty", hint="pick another path or remove it"
            )
        if path.exists():
            path.rmdir()
        path.parent.mkdir(parents=True, exist_ok=True)
        with progress.step(f"checking out {self.target} at {commit[:12]} in {path}"):
            self.repo.add_worktree(path, commit)
        return path

    def remove_tree(self, path: Path) -> None:
        """Remove a worktree made by :meth:`fresh_tree`, local changes and all."""
        self.repo.git("worktree", "remove", "--force", str(path))

    def _own_tree(self, path: Path) -> GitRepo:
        common = None
        if is_repo(path):
            tree = GitRepo(path)
            common = Path(tree.text("rev-parse", "--path-format=absolute", "--git-common-dir"))
            if common.resolve() == self.path.resolve() and tree.toplevel() == path.resolve():
                return tree
            tree.close()
        raise TreeError(
            f"{path} is not a worktree of {self.path}",
            hint=f"move {path} away; patchkit recreates it on the next fetch",
        )


@contextlib.contextmanager
def exclusive(repo_path: Path) -> Iterator[None]:
    """One patchkit process at a time writes a cache repository (a file lock, re-entrant in
    one process; it waits as long as another process downloads or commits a release)."""
    with FileLock(repo_path.with_suffix(".lock"), is_singleton=True):
        yield


def _init_bare_atomically(path: Path) -> None:
    """Make a bare repository at ``path`` that other processes see whole or not at all: it is
    made beside ``path`` and renamed into place, so a reader never finds a half-made one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        GitRepo.init(staging, bare=True).close()
        os.rename(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())


def _sample(paths: list[str], n: int = 3) -> str:
    more = f" and {len(paths) - n} more" if len(paths) > n else ""
    return ", ".join(paths[:n]) + more
