"""The real objects a command needs, built once at the edge: the project (lock and patch sets),
the tree to work on, and where base blobs can be found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from patchkit.cache import Cache
from patchkit.model import Lock, LockEntry, PatchMeta, PatchSet, SourceKind
from patchkit.ops.fetch import fetch_shared
from patchkit.project.lock import find_lock, load_lock, target
from patchkit.project.sets import load_patchsets, select_patches
from patchkit.workspace.tree import Tree, checkout_tree

if TYPE_CHECKING:
    from patchkit.engine.series import Blobs


@dataclass(frozen=True)
class Project:
    """A patch repository: its lock and its patch sets."""

    root: Path
    lock: Lock
    sets: tuple[PatchSet, ...]

    def entry(self, name: str) -> LockEntry:
        return target(self.lock, name)

    def patches(
        self, name: str, *, include: tuple[str, ...] = (), only: tuple[str, ...] = ()
    ) -> list[PatchMeta]:
        return select_patches(list(self.sets), name, include=include, only=only)

    def listed(self, name: str) -> list[PatchMeta]:
        """Every patch for the target, opt-in ones included (for status and reports)."""
        return [p for s in self.sets for p in s.for_target(name)]

    def patch(self, patch_id: str) -> PatchMeta:
        for patch_set in self.sets:
            for meta in patch_set.patches:
                if meta.id == patch_id:
                    return meta
        from patchkit.errors import ConfigError, shown

        raise ConfigError(
            f"no patch {shown(patch_id)} in the patch sets under {self.root}/patchsets"
        )


def load_project(start: Path, sets: list[str] | None = None) -> Project:
    lock_path = find_lock(start.resolve())
    root = lock_path.parent
    return Project(root, load_lock(lock_path), tuple(load_patchsets(root, sets)))


def open_checkout(entry: LockEntry, checkout: Path | None) -> Tree:
    """The checkout given, or the locked tree patchkit fetched into its cache."""
    if checkout is not None:
        return checkout_tree(checkout, entry.name)
    if entry.source.kind is SourceKind.PATH and entry.source.path:
        return checkout_tree(Path(entry.source.path), entry.name)
    return checkout_tree(fetch_shared(entry).path, entry.name)


@dataclass(frozen=True)
class Where:
    """Which tree of a target a verb works on: a ``checkout``, the distribution installed for
    ``python`` (``installed``), or (neither) the locked tree in patchkit's cache."""

    checkout: Path | None = None
    installed: bool = False
    python: str | None = None  # the interpreter whose site-packages hold the installed target


CACHED = Where()  # the locked tree in patchkit's cache


def open_tree(entry: LockEntry, where: Where = CACHED) -> Tree:
    """The tree ``where`` names, opened."""
    if where.installed:
        from patchkit.workspace.installed import open_installed

        return open_installed(entry, Path(where.python) if where.python else None)
    return open_checkout(entry, where.checkout)


def blobs_for(entry: LockEntry, tree: Tree) -> Blobs:
    """Base blobs come from the tree's own repository, then from patchkit's cache of upstream."""
    repos = []
    if (tree.root / ".git").exists():
        repos.append(tree.root)
    cached = Cache.current().repo(entry.name)
    if cached.is_dir():
        repos.append(cached)
    from patchkit.engine.series import Blobs

    return Blobs(repos)
