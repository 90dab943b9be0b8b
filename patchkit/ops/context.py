"""The real objects a command needs, built once at the edge: the project (lock and patch sets),
the tree to work on, and where base blobs can be found."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from patchkit.cache import Cache
from patchkit.gitrepo import is_repo
from patchkit.model import Lock, LockEntry, PatchMeta, PatchSet, SourceKind
from patchkit.project.lock import find_lock, load_lock, target
from patchkit.project.sets import load_patchsets, select_patches
from patchkit.workspace.locks import writing
from patchkit.workspace.tree import Tree, checkout_tree

if TYPE_CHECKING:
    from patchkit.engine.series import Blobs
    from patchkit.upstream.sources import FetchedTree

log = logging.getLogger("patchkit.ops.context")


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


def fetch_shared(entry: LockEntry) -> FetchedTree:
    """The cache's shared tree of ``entry`` at the locked commit, made or moved there while
    no other patchkit process writes it (a ``fetch`` beside an ``apply`` waits its turn)."""
    from patchkit.upstream.sources import UpstreamRepo, fetch

    shared = UpstreamRepo.shared_path(entry.name)
    if not shared.is_dir() or not is_repo(shared):  # an empty cache has no directory yet
        return fetch(entry)  # nobody can be writing a tree that is not there yet
    tree = checkout_tree(shared, entry.name)
    with writing(tree, "fetch"):
        _unpatch_for_new_lock(tree, entry)
        return fetch(entry)


def _unpatch_for_new_lock(tree: Tree, entry: LockEntry) -> None:
    """The cache's tree follows the lock. When the lock moved (a rebase) while the tree has
    the patches of the old lock applied, patchkit resets them (saying so) so the tree can
    move; a file edited since is never dropped: the move is refused, naming what to do."""
    from patchkit import progress
    from patchkit.errors import TreeError
    from patchkit.ops.reset import reset
    from patchkit.targets import commits_match
    from patchkit.workspace.state import StateStore
    from patchkit.workspace.treecheck import tree_commit

    state = StateStore(tree.state_dir).load()
    found = tree_commit(tree)
    if state is None or not state.patches or (found and commits_match(found, entry.commit)):
        return
    try:
        with progress.step(
            f"resetting the patches of {state.lock_version or found} in {tree.root}"
        ):
            done = reset(tree=tree)
    except TreeError as exc:
        raise TreeError(
            f"the cache's tree of {entry.name} ({tree.root}) has the patches of "
            f"{state.lock_version or found} applied, and {exc.message.split(': ', 1)[-1]} were "
            f"edited since; it cannot move to the locked {entry.version} without losing them",
            hint=f"`patchkit reset --target {entry.name} --checkout {tree.root} --force` saves "
            "them aside and resets the tree; then run the command again",
        ) from None
    log.warning(
        "the cache's tree of %s had the patches of %s applied: reset them (%d file(s)) to move "
        "it to the locked %s",
        entry.name,
        state.lock_version or found,
        len(done.restored),
        entry.version,
    )


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
