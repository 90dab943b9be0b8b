"""``patchkit fetch``: the locked upstream tree of a target, materialised in the cache; the
cache's shared tree follows the lock (the patches of an older lock reset first)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from patchkit import progress
from patchkit.errors import TreeError
from patchkit.gitrepo import is_repo
from patchkit.model import LockEntry
from patchkit.project.load import Project
from patchkit.targets import commits_match
from patchkit.workspace.locks import writing
from patchkit.workspace.reset import reset
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree, checkout_tree
from patchkit.workspace.treecheck import tree_commit

if TYPE_CHECKING:
    from patchkit.upstream.repo import FetchedTree

log = logging.getLogger("patchkit.ops.fetch")


def fetch_target(*, project: Project, target: str) -> FetchedTree:
    """A git tree of ``target`` at its locked commit in patchkit's cache (made or moved there)."""
    return fetch_shared(project.entry(target))


def fetch_shared(entry: LockEntry) -> FetchedTree:
    """The cache's shared tree of ``entry`` at the locked commit, made or moved there while
    no other patchkit process writes it (a ``fetch`` beside an ``apply`` waits its turn)."""
    from patchkit.upstream.sources import UpstreamRepo, fetch  # the index client: not for status

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
