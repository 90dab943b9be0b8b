"""Which upstream versions are newer than the lock: index releases, a git source's tags, or
(``--onto BRANCH``) a branch's head.

A git source is fetched first (its mirror only refreshes on demand otherwise), so a tag pushed
upstream since the last run is seen. Pre-releases count only when ``onto`` names one.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from patchkit.gitrepo import GitRepo
from patchkit.upstream.history import History, IndexHistory, Point

LATEST = "latest"


def newer_points(history: History, onto: str = LATEST) -> list[Point]:
    """The points after the lock up to ``onto`` (``latest``: the newest release or tag), oldest
    first; empty when the lock is already there or past it."""
    start = history.start()
    if onto == LATEST and not isinstance(history, IndexHistory):
        newest = newest_tag(history.repo)
        if newest is None:
            return []
        onto = newest
    end = history.resolve(onto)
    if end.ref == start.ref or _not_after(history, start, end):
        return []
    return history.between(start, end)


def newest_tag(repo: GitRepo) -> str | None:
    """The tag with the highest final release version (``v1.2`` or ``1.2``), a mirror's
    (``refs/upstream/tags/``) or the repository's own; None without one."""
    refs = repo.text(
        "for-each-ref", "--format=%(refname)", "refs/tags/", "refs/upstream/tags/"
    ).split()
    best: tuple[Version, str] | None = None
    for ref in refs:
        name = ref.rsplit("/", 1)[-1]
        version = _version(name)
        if version is None or version.is_prerelease:
            continue
        if best is None or version > best[0]:
            best = (version, name)
    return best[1] if best else None


def _version(tag: str) -> Version | None:
    try:
        return Version(tag.removeprefix("v"))
    except InvalidVersion:
        return None


def _not_after(history: History, start: Point, end: Point) -> bool:
    """Whether ``end`` is the lock or older (a release below the lock, an ancestor commit)."""
    old, new = _version(history.version(start)), _version(history.version(end))
    if old is not None and new is not None:
        return new <= old
    return not history.between(start, end)
