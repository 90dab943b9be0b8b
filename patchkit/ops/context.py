"""The real objects a command needs besides the project (``project.load``), built once at the
edge: the tree to work on, and where base blobs can be found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from patchkit.cache import Cache
from patchkit.model import LockEntry, SourceKind
from patchkit.ops.fetch import fetch_shared
from patchkit.workspace.tree import Tree, checkout_tree

if TYPE_CHECKING:
    from patchkit.engine.series import Blobs


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
