"""Upstream history: the points between the locked upstream and the one a rebase moves onto.

A :class:`History` lists source releases for index sources (fetched only when probed),
first-parent commits for git and path sources; ``same_files`` compares files at two of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from packaging.version import InvalidVersion, Version

from patchkit.errors import SourceError, shown
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry, SourceKind
from patchkit.targets import commits_match, profile
from patchkit.upstream.index import PackageIndex
from patchkit.upstream.refs import resolve_release_ref
from patchkit.upstream.sources import (
    GitMirror,
    ReleaseStore,
    available_releases,
    package_of,
)

_HEX = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class Point:
    """One place in upstream history: a release ("0.22.0") or a commit."""

    label: str  # what people read and metadata records: a version or a commit id
    ref: str  # what the history resolves: a version (index) or a full commit id (git)


class History(Protocol):
    repo: GitRepo  # holds every point once :meth:`commit` has been called for it

    def start(self) -> Point: ...
    def resolve(self, onto: str) -> Point: ...
    def between(self, old: Point, new: Point) -> list[Point]: ...
    def commit(self, point: Point) -> str: ...
    def lock_commit(self, point: Point) -> str: ...
    def version(self, point: Point) -> str: ...
    def close(self) -> None: ...


class IndexHistory:
    """Source releases from the package index, one commit each in the cache repository."""

    def __init__(self, entry: LockEntry, store: ReleaseStore, versions: Sequence[str]) -> None:
        self.entry, self.store, self.repo = entry, store, store.repo
        self.versions = list(versions)

    def start(self) -> Point:
        return Point(self.entry.version, self.entry.version)

    def resolve(self, onto: str) -> Point:
        if onto == "latest":
            final = [v for v in self.versions if not _parse(v).is_prerelease]
            if not final:
                raise SourceError(f"no release of {self.store.package} on the index")
            return Point(final[-1], final[-1])
        if _HEX.match(onto.lower()) and not _is_version(onto):
            return self._by_upstream_commit(onto)
        wanted = _parse(onto.removeprefix("v"))
        for version in self.versions:
            if _parse(version) == wanted:
                return Point(version, version)
        raise SourceError(
            f"{self.store.package} has no source release {onto} on the index",
            hint="pass one of the versions `pip index versions` lists, or `latest`",
        )

    def _by_upstream_commit(self, commit: str) -> Point:
        """The release whose upstream commit is ``commit`` (or starts with it): the locked one,
        or one already fetched (a release names its commit only once it is downloaded)."""
        if commits_match(commit, self.entry.commit):
            return self.start()
        for version in self.store.fetched():
            named = self.store.upstream_commit(str(version))
            if named and commits_match(commit, named):
                return Point(str(version), str(version))
        raise SourceError(
            f"no fetched release of {self.store.package} is upstream commit {commit}",
            hint="pass the release version (as `pip index versions` lists it) or `latest`; "
            "patchkit knows a release's upstream commit once it has fetched that release",
        )

    def between(self, old: Point, new: Point) -> list[Point]:
        low, high = _parse(old.ref), _parse(new.ref)
        inside = [v for v in self.versions if low < _parse(v) <= high]
        return [Point(v, v) for v in sorted(inside, key=_parse)]

    def commit(self, point: Point) -> str:
        return self.store.ensure_release(point.ref)

    def lock_commit(self, point: Point) -> str:
        """The upstream commit the release names (its commit message, else its version file);
        the cache's own commit only when the release names none."""
        local = self.commit(point)
        named = self.store.upstream_commit(point.ref)
        prof = profile(self.entry.name)
        if named is None and prof is not None:
            text = self.repo.read_file(local, prof.version_file)
            named = prof.commit_in(text.decode(errors="replace")) if text else None
        return named or local

    def version(self, point: Point) -> str:
        return point.label

    def close(self) -> None:
        self.store.close()


class GitHistory:
    """Commits of a git repository: the user's checkout (path source) or the cache's mirror."""

    def __init__(self, entry: LockEntry, repo: GitRepo, ensure: Callable[[str], str]) -> None:
        self.entry, self.repo, self._ensure = entry, repo, ensure

    def start(self) -> Point:
        return Point(self.entry.commit, self._ensure(self.entry.commit))

    def resolve(self, onto: str) -> Point:
        return Point(onto, self._ensure(onto))

    def between(self, old: Point, new: Point) -> list[Point]:
        return [Point(c, c) for c in self.repo.rev_list(old.ref, new.ref)]

    def commit(self, point: Point) -> str:
        return point.ref

    def lock_commit(self, point: Point) -> str:
        return point.ref

    def version(self, point: Point) -> str:
        """The tag on the point ("v1.2" → "1.2") if it has one, else the commit's first 12."""
        if not _HEX.match(point.label):
            return point.label.removeprefix("v")
        tags = self.repo.text("tag", "--points-at", point.ref).split()
        return tags[0].removeprefix("v") if tags else point.ref[:12]

    def close(self) -> None:
        self.repo.close()


def _is_version(text: str) -> bool:
    try:
        Version(text.removeprefix("v"))
    except InvalidVersion:
        return False
    return True


def _parse(version: str) -> Version:
    try:
        return Version(version)
    except InvalidVersion:
        raise SourceError(f"{shown(version)} is not a release version") from None


def open_history(entry: LockEntry, *, index: PackageIndex | None = None) -> History:
    """The history of ``entry``'s source (built at the edge; tests pass their own)."""
    kind = entry.source.kind
    if kind is SourceKind.INDEX:
        store = ReleaseStore(entry.name, package_of(entry), index=index)
        return IndexHistory(entry, store, available_releases(entry, index=index))
    if kind is SourceKind.GIT:
        mirror = GitMirror(entry.name, entry.source.url or entry.repository)
        return GitHistory(entry, mirror.repo, lambda rev: _mirror_rev(mirror, rev))
    return GitHistory(entry, GitRepo(Path(entry.source.path or "")), _local_rev(entry))


def _mirror_rev(mirror: GitMirror, rev: str) -> str:
    if _HEX.match(rev):
        return mirror.ensure_commit(rev)
    if not rev.startswith("v") and _is_version(rev):  # a release version names its tag v<version>
        try:
            return mirror.ensure_commit(f"refs/upstream/tags/v{rev}")
        except SourceError:
            pass
    return mirror.ensure_commit(f"refs/upstream/tags/{rev}")


def _local_rev(entry: LockEntry) -> Callable[[str], str]:
    def resolve(rev: str) -> str:
        with GitRepo(Path(entry.source.path or "")) as repo:
            found = resolve_release_ref(repo, rev)
        if found is None:
            raise SourceError(
                f"{rev} is not a commit, tag or release version of {entry.source.path}",
                hint="fetch it there first, or pass a commit that exists",
            )
        return found

    return resolve


# -- reading a point's files --------------------------------------------------------------
def same_files(repo: GitRepo, old: str, new: str, paths: Sequence[str]) -> bool:
    """The files are the same blobs at commits ``old`` and ``new`` (a patch on them applies as
    written: ``applied``, not ``carried``)."""
    return bool(paths) and repo.ls_tree(old, paths) == repo.ls_tree(new, paths)
