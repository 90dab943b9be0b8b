"""``patchkit fetch``: the locked upstream tree of a target, materialised in the cache."""

from __future__ import annotations

from patchkit.ops.context import Project
from patchkit.upstream.sources import FetchedTree, fetch


def fetch_target(*, project: Project, target: str) -> FetchedTree:
    """A git tree of ``target`` at its locked commit in patchkit's cache (made or moved there)."""
    return fetch(project.entry(target))
