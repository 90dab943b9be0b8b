"""``patchkit fetch``: the locked upstream tree of a target, materialised in the cache."""

from __future__ import annotations

from patchkit.ops.context import Project, fetch_shared
from patchkit.upstream.sources import FetchedTree


def fetch_target(*, project: Project, target: str) -> FetchedTree:
    """A git tree of ``target`` at its locked commit in patchkit's cache (made or moved there)."""
    return fetch_shared(project.entry(target))
