"""Upstream sources as git trees in the cache, never in the project tree.

Each target has one bare repository, ``<cache>/repos/<target>.git``. Source releases from the
package index become one commit each there, tagged ``v<version>``, with the nearest lower
release already fetched as parent; a release fetched once is never fetched again. Git sources
are fetched into the same repository under ``refs/upstream/``. Callers patch a worktree of it,
``<cache>/trees/<target>``, or a throwaway one of their own (:meth:`UpstreamRepo.fresh_tree`).

The repository itself and its worktrees are :mod:`patchkit.upstream.repo`. Git commands used
here beyond :class:`GitRepo`'s own methods, all through ``GitRepo.git``: ``fetch``.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from patchkit import progress
from patchkit.cache import Cache
from patchkit.errors import ConfigError, GitError, SourceError, shown
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.model import LockEntry, SourceKind
from patchkit.targets import commits_match, profile, release_commit
from patchkit.trust.gitargs import check_url
from patchkit.upstream.index import PackageIndex, Release, parse_version
from patchkit.upstream.refs import TRAILER
from patchkit.upstream.repo import FetchedTree, UpstreamRepo, exclusive
from patchkit.upstream.sdist import extract_sdist

__all__ = [  # the repository and its trees live in upstream.repo; callers know them from here
    "TRAILER",
    "FetchedTree",
    "GitMirror",
    "ReleaseStore",
    "UpstreamRepo",
    "available_releases",
    "fetch",
    "package_of",
]

log = logging.getLogger("patchkit.upstream.sources")


# -- INDEX sources --------------------------------------------------------------------------------
class ReleaseStore(UpstreamRepo):
    """Source releases of one target, one commit each, tagged ``v<version>``."""

    def __init__(
        self,
        target: str,
        package: str,
        *,
        index: PackageIndex | None = None,
        path: Path | None = None,
    ) -> None:
        super().__init__(target, path=path)
        self.package = package
        self.index = index or PackageIndex()  # lazy: no network until a release is missing

    def fetched(self) -> dict[Version, str]:
        """Releases already in the repository: version -> tag."""
        found = {}
        for tag in self.repo.tags("v*"):
            with contextlib.suppress(InvalidVersion):
                found[Version(tag[1:])] = tag
        return found

    def tag_of(self, version: str) -> str | None:
        return self.fetched().get(parse_version(self.package, version))

    def ensure_release(self, version: str) -> str:
        """The local commit of ``version``, fetching and committing the release only once."""
        tag = self.tag_of(version)
        if tag:
            return self._commit_of(tag)
        with exclusive(self.path):  # another patchkit may be committing the same release
            tag = self.tag_of(version)
            if tag:
                return self._commit_of(tag)
            release = self.index.release(self.package, version)
            archive = self.index.download(release)
            commit = self._commit_release(release, archive)
            if archive.parent == Cache.current().downloads():
                archive.unlink(missing_ok=True)  # its commit holds it now: the cache stays lean
            return commit

    def upstream_commit(self, version: str) -> str | None:
        """The upstream commit the release names: recorded in its commit message, or read from
        its version file (for releases committed before patchkit knew that file's form)."""
        tag = self.release_tag(version)
        for line in self.repo.commit_message(tag).splitlines():
            if line.startswith(TRAILER):
                return line[len(TRAILER) :].strip()
        prof = profile(self.target)
        content = self.repo.read_file(tag, prof.version_file) if prof else None
        return prof.commit_in(content.decode(errors="replace")) if prof and content else None

    def worktree(self, version: str) -> Path:
        """The shared tree, ``<cache>/trees/<target>``, at ``version``."""
        return self.place_tree(self.ensure_release(version), self.shared_tree)

    def fresh_worktree(self, version: str, path: Path) -> Path:
        return self.fresh_tree(self.ensure_release(version), path)

    def release_tag(self, version: str) -> str:
        """The tag of a fetched release; SourceError if it has not been fetched."""
        tag = self.tag_of(version)
        if tag is None:
            raise SourceError(f"{self.package} {version} has not been fetched into {self.path}")
        return tag

    def _commit_of(self, tag: str) -> str:
        commit = self.repo.resolve(tag)
        assert commit is not None, tag  # listed by `git tag` a moment ago
        return commit

    def _commit_release(self, release: Release, archive: Path) -> str:
        with tempfile.TemporaryDirectory(prefix="patchkit-sdist-") as tmp:
            with progress.step(f"extracting {release.filename}"):
                sdist = extract_sdist(archive, Path(tmp))
            upstream = release_commit(sdist.root, self.target)
            message = self._message(release, upstream)
            parent = self._parent(release.parsed)
            date = release.git_date() or f"{sdist.mtime} +0000"
            with progress.step(f"committing {self.target} {release.version}"):
                commit = self.repo.commit_directory(
                    sdist.root, parent=parent, message=message, date=date
                )
        self.repo.tag(f"v{release.version}", commit)
        return commit

    def _parent(self, version: Version) -> str | None:
        fetched = self.fetched()
        lower = [v for v in fetched if v < version]
        return self._commit_of(fetched[max(lower)]) if lower else None

    def _message(self, release: Release, upstream: str | None) -> str:
        subject = f"{self.target} {release.version}"
        if upstream:
            subject += f" (upstream commit {upstream})"
        body = f"Source release {release.filename} sha256 {release.sha256 or 'unknown'}"
        trailer = f"\n{TRAILER} {upstream}" if upstream else ""
        return f"{subject}\n\n{body}{trailer}\n"


def package_of(entry: LockEntry) -> str:
    if entry.source.package:
        return entry.source.package
    prof = profile(entry.name)
    return prof.distribution if prof else entry.name


def available_releases(
    entry: LockEntry, include_prereleases: bool = False, *, index: PackageIndex | None = None
) -> list[str]:
    """Versions of ``entry``'s source releases on the index, oldest first."""
    index = index or PackageIndex()
    releases = index.releases(package_of(entry), include_prereleases=include_prereleases)
    return list(dict.fromkeys(r.version for r in releases))


# -- GIT sources ----------------------------------------------------------------------------------
class GitMirror(UpstreamRepo):
    """A git remote's branches and tags under ``refs/upstream/`` in the cache repository."""

    def __init__(self, target: str, url: str, *, path: Path | None = None) -> None:
        super().__init__(target, path=path)
        self.url = check_url(url, where=f"the git source of {target}")

    def ensure_commit(self, rev: str) -> str:
        """``rev`` (commit id, or ``refs/upstream/tags/...``) resolved; fetched only if missing."""
        found = self.repo.resolve(rev)
        if found:
            return found
        with exclusive(self.path):
            self._fetch()
        found = self.repo.resolve(rev)
        if found is None:
            raise SourceError(
                f"{rev} is not in {self.url} (fetched into {self.path})",
                hint="check the commit in upstream.lock and the source URL",
            )
        return found

    def refresh(self) -> None:
        """Fetch the remote's branches and tags now (``watch`` looks for new ones)."""
        with exclusive(self.path):
            self._fetch()

    def _fetch(self) -> None:
        refspecs = ["+refs/heads/*:refs/upstream/heads/*", "+refs/tags/*:refs/upstream/tags/*"]
        try:
            with progress.step(f"fetching {self.url}"):
                args = ("--quiet", "--prune", "--no-tags", "--end-of-options", self.url)
                self.repo.git("fetch", *args, *refspecs)
        except GitError as exc:
            raise SourceError(
                f"cannot fetch {self.target} from {self.url}: {exc.message}",
                hint="check the URL and the network, or use an index or path source",
            ) from exc


# -- the entry point -------------------------------------------------------------------------------
def fetch(
    entry: LockEntry,
    *,
    version: str | None = None,
    index: PackageIndex | None = None,
    into: Path | None = None,
) -> FetchedTree:
    """A tree of ``entry`` at its locked release (or at ``version``), checked against the lock:
    the shared tree in the cache, or (``into``) a new worktree there that the caller removes
    with ``UpstreamRepo(target).remove_tree``.

    The lock's commit is checked only for the locked version: another version is what a rebase
    asks for, and the lock does not describe it yet.
    """
    kind = entry.source.kind
    if kind is SourceKind.INDEX:
        return _fetch_index(entry, version, index, into)
    if kind is SourceKind.GIT:
        return _fetch_git(entry, version, into)
    return _fetch_path(entry, version)


def _place(repo: UpstreamRepo, commit: str, into: Path | None) -> Path:
    return repo.fresh_tree(commit, into) if into else repo.place_tree(commit, repo.shared_tree)


def _is_locked(entry: LockEntry, version: str | None) -> bool:
    if version is None:
        return True
    try:
        return Version(version) == Version(entry.version)
    except InvalidVersion:
        return version == entry.version


def _fetch_index(
    entry: LockEntry, version: str | None, index: PackageIndex | None, into: Path | None
) -> FetchedTree:
    want = version or entry.version
    with ReleaseStore(entry.name, package_of(entry), index=index) as store:
        local = store.ensure_release(want)
        upstream = store.upstream_commit(want)
        if _is_locked(entry, version):
            _check_commit(entry, upstream, f"release {store.package} {want}")
        path = _place(store, local, into)
        tag = store.release_tag(want)
    return FetchedTree(path, entry.name, tag[1:], local, upstream)


def _fetch_git(entry: LockEntry, version: str | None, into: Path | None) -> FetchedTree:
    url = entry.source.url or entry.repository
    locked = _is_locked(entry, version)
    rev = entry.commit if locked else f"refs/upstream/tags/v{version}"
    with GitMirror(entry.name, url) as mirror:
        local = mirror.ensure_commit(rev)
        if locked:
            _check_commit(entry, local, f"{url} at {rev}")
        path = _place(mirror, local, into)
    return FetchedTree(path, entry.name, version or entry.version, local, local)


def _fetch_path(entry: LockEntry, version: str | None) -> FetchedTree:
    path = Path(entry.source.path or "").expanduser().resolve()
    if not entry.source.path or not path.is_dir():
        raise SourceError(
            f"{entry.name}: the source path {shown(entry.source.path)} is not a directory",
            hint="fix `source.path` in upstream.lock, or clone the project there",
        )
    if not _is_locked(entry, version):
        raise SourceError(
            f"{entry.name} comes from your checkout {path}; patchkit does not move it",
            hint=f"check out {version} there yourself, or use an index or git source",
        )
    local = None
    if is_repo(path):
        with GitRepo(path) as repo:
            local = repo.head()
    upstream = local or release_commit(path, entry.name)
    _check_commit(entry, upstream, str(path))
    return FetchedTree(path, entry.name, entry.version, local, upstream)


def _check_commit(entry: LockEntry, upstream: str | None, where: str) -> None:
    if upstream is None:
        log.warning("%s names no upstream commit; cannot check it against %s", where, entry.commit)
    elif not commits_match(upstream, entry.commit):
        raise ConfigError(
            f"{entry.name}: {where} is upstream commit {upstream}, but upstream.lock pins "
            f"{entry.name} {entry.version} at {entry.commit}",
            hint="fix the commit or version in upstream.lock (or the source) so they agree",
        )
