"""The releases an imported patch may have been made for, nearest the lock first.

For a target whose source is the package index these are the releases in patchkit's cache
repository (one commit each, tagged ``v<version>``) and, when a patch matches none of them,
releases fetched from the index, as many as the caller's budget allows. For a git checkout
(a path or git source) they are its tags. Nothing here decides what matches: that is
:mod:`patchkit.importers.base`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from patchkit.errors import SourceError
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry
from patchkit.upstream.index import PackageIndex
from patchkit.upstream.refs import resolve_release_ref
from patchkit.upstream.sources import (
    ReleaseStore,
    available_releases,
    package_of,
)


@dataclass(frozen=True)
class Release:
    label: str  # "0.19.0", "v1.1", or a commit id
    commit: str  # full commit id in the repository


def _key(label: str) -> Version | None:
    with contextlib.suppress(InvalidVersion):
        return Version(label.removeprefix("v"))
    return None


@dataclass
class Releases:
    repo: GitRepo
    lock: Release
    local: list[Release]  # available without fetching, the lock among them
    remote: Callable[[], list[str]] | None = None  # versions the source offers (network)
    fetch_one: Callable[[str], Release] | None = None
    fetched: list[str] = field(default_factory=list)  # what this import fetched
    # the import is one series: files as the patches imported before this one left them,
    # per commit (a mod's second sed on a file is made on top of its first)
    earlier: dict[str, dict[str, bytes | None]] = field(default_factory=dict)

    def nearest(self, labels: list[str]) -> list[str]:
        """``labels`` ordered by distance from the lock (the lock first), newer first on ties."""
        order = sorted(labels, key=lambda x: (_key(x) is None, _key(x) or Version("0")))
        here = next((i for i, x in enumerate(order) if x == self.lock.label), len(order))
        return sorted(order, key=lambda x: (abs(order.index(x) - here), -order.index(x)))

    def in_order(self) -> list[Release]:
        by_label = {r.label: r for r in self.local}
        return [by_label[x] for x in self.nearest(list(by_label))]

    def unfetched(self) -> list[str]:
        """Versions the source offers that are not local, nearest the lock first."""
        if self.remote is None:
            return []
        have = {_key(r.label) for r in self.local}
        offered = [v for v in self.remote() if _key(v) not in have]
        return [v for v in self.nearest([*offered, self.lock.label]) if v != self.lock.label]

    def fetch(self, version: str) -> Release:
        if self.fetch_one is None:
            raise SourceError(f"{version} cannot be fetched from this source")
        release = self.fetch_one(version)
        self.local.append(release)
        self.fetched.append(version)
        return release

    def resolve(self, ref: str) -> Release:
        """A release by version (``0.19.0``), tag (``v0.19.0``), the upstream commit it names
        (or a prefix), or any commit of the repository; fetched when it is a version not here."""
        commit = resolve_release_ref(self.repo, ref)
        if commit is None and self.fetch_one is not None and "." in ref and _key(ref):
            return self.fetch(ref)
        if commit is None:
            raise SourceError(
                f"--base {ref}: no such release or commit in {self.repo.path}",
                hint="give a release version, its tag, or a commit id",
            )
        known = next((r for r in self.local if r.commit == commit), None)
        return known or Release(ref, commit)


def from_repository(repo: GitRepo, lock_rev: str, lock_label: str) -> Releases:
    """The tags of a git repository (a path or git source) as releases."""
    lock_commit = repo.resolve(lock_rev)
    if lock_commit is None:
        raise SourceError(f"the locked commit {lock_rev} is not in {repo.path}")
    local = [Release(lock_label, lock_commit)]
    for tag in repo.tags():
        commit = repo.resolve(tag)
        if commit and commit != lock_commit:
            local.append(Release(tag, commit))
    return Releases(repo, local[0], local)


def from_index(entry: LockEntry, index: PackageIndex | None = None) -> Releases:
    """The releases of an index-sourced target in patchkit's cache (the locked one fetched if
    it is not there yet); more come from the index only when asked for."""
    store = ReleaseStore(entry.name, package_of(entry), index=index)
    lock_commit = store.ensure_release(entry.version)
    local = []
    for version, tag in sorted(store.fetched().items()):
        commit = store.repo.resolve(tag)
        if commit:
            local.append(Release(str(version), commit))
    lock = next((r for r in local if r.commit == lock_commit), Release(entry.version, lock_commit))

    def fetch_one(version: str) -> Release:
        return Release(version, store.ensure_release(version))

    def remote() -> list[str]:
        return available_releases(entry, index=store.index)

    return Releases(store.repo, lock, local, remote, fetch_one)
