"""Whether upstream already has a carried pull request, by the record of its merge: the PR's
merge commit (``[upstream] merge_commit``, recorded when a merged PR is imported) in the history
of the commit at hand (a git source holding it), or the release that has it
(``[upstream] released_in``) at or before the version at hand. Content is not looked at here
(rebase, watch and the matrix's cells judge by content): this says which PR absorbed a patch
even where upstream merged the change in another form."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from patchkit.cache import Cache
from patchkit.errors import GitError
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.model import LockEntry, SourceKind, UpstreamPr


@dataclass(frozen=True)
class Absorbed:
    pr: str  # the PR's URL
    by: str  # "its merge commit 1a2b3c4d5e6f is in 0.20.0" / "released in 0.20.0"

    def describe(self) -> str:
        number = self.pr.rstrip("/").rsplit("/", 1)[-1]
        return f"absorbed by PR #{number} ({self.by})"


def absorbed(
    upstream: UpstreamPr, *, repo: GitRepo | None, commit: str, version: str
) -> Absorbed | None:
    """The PR ``upstream`` carries, when the upstream at ``commit`` (release ``version``) has
    it; None when it does not, or when nothing here can tell."""
    if upstream.pr is None:
        return None
    merge = upstream.merge_commit
    if merge and repo is not None and contains(repo, merge, commit):
        return Absorbed(upstream.pr, f"its merge commit {merge[:12]} is in {version or commit}")
    if upstream.released_in and _at_or_after(version, upstream.released_in):
        return Absorbed(upstream.pr, f"released in {upstream.released_in}, at or before {version}")
    return None


def contains(repo: GitRepo, ancestor: str, commit: str) -> bool:
    """``ancestor`` is in the history of ``commit`` (False when either is not in ``repo``)."""
    try:
        repo.git("merge-base", "--is-ancestor", ancestor, commit)
    except GitError:
        return False
    return True


def _at_or_after(version: str, release: str) -> bool:
    try:
        return Version(version) >= Version(release)
    except InvalidVersion:
        return False


def history_repo(entry: LockEntry) -> GitRepo | None:
    """The repository holding the upstream history of ``entry`` as it is here, fetching
    nothing: a path source's own, a git source's mirror in the cache; None for the index
    (its releases are commits of their own, with no upstream history)."""
    if entry.source.kind is SourceKind.PATH and entry.source.path:
        path = Path(entry.source.path)
        return GitRepo(path) if is_repo(path) else None
    if entry.source.kind is SourceKind.GIT:
        mirror = Cache.current().repo(entry.name)
        return GitRepo(mirror) if mirror.is_dir() else None
    return None
