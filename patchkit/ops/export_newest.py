"""Before ``export-pr``: what upstream already has at its newest release.

A patch made against an old pin may have been fixed upstream since (the same change, or one
that makes it hold): a PR for it is a duplicate a maintainer closes at once. Each patch is
judged at the release (``latest`` by default on the command line) as a matrix cell is, against
the lock; ``upstreamed`` ones are left out (refused when named), ``partly-upstreamed`` ones are
said. Cells a ``patchkit matrix`` run computed are reused. Not being able to look (offline, no
such release) is said in the report, not fatal: the check is advice, the export still stands.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.errors import ConfigError, PatchkitError, SourceError
from patchkit.export.prtext import project_name
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry, PatchMeta, SourceKind
from patchkit.ops.matrix import cells_at
from patchkit.outcome import Outcome
from patchkit.project.load import Project
from patchkit.upstream.sources import GitMirror, ReleaseStore, package_of

log = logging.getLogger("patchkit.export")


@dataclass(frozen=True)
class NewestCheck:
    kept: list[PatchMeta]  # still to export
    left_out: tuple[str, ...]  # "<id>: upstream <target> <release> already has this change"
    note: str  # what was checked, for the report ("" when not asked)


def not_absorbed(
    project: Project, target: str, metas: list[PatchMeta], ref: str | None, *, named: bool
) -> NewestCheck:
    if ref is None or not metas:
        return NewestCheck(metas, (), "")
    try:
        label, cells = cells_at(project=project, target=target, ref=ref, patch_ids=_ids(metas))
    except PatchkitError as err:
        return NewestCheck(metas, (), f"not checked against upstream {target} {ref}: {err}")
    took = [m for m in metas if cells[m.id].outcome == Outcome.UPSTREAMED.value]
    partly = [m.id for m in metas if cells[m.id].outcome == Outcome.PARTLY_UPSTREAMED.value]
    if named and took:
        raise ConfigError(
            f"upstream {target} {label} already has the change of "
            + ", ".join(m.id for m in took)
            + ": a PR for it would be a duplicate",
            hint=f"retire it by moving the pin (patchkit rebase --target {target} --onto {label}),"
            " or export anyway with --check-against none",
        )
    said = [f"already there: {', '.join(m.id for m in took)} (left out)"] if took else []
    if partly:
        said.append(f"partly there: {', '.join(partly)} (base the branch there: --onto {label})")
    others = len(metas) > len(took) + len(partly)
    rest = ["none of the others is there yet"] if said and others else []
    note = f"checked against upstream {target} {label}: " + "; ".join(
        [*said, *rest] if said else ["none of these changes is there yet"]
    )
    gone = tuple(f"{m.id}: upstream {target} {label} already has this change" for m in took)
    return NewestCheck([m for m in metas if m not in took], gone, note)


def _ids(metas: Sequence[PatchMeta]) -> list[str]:
    return [m.id for m in metas]


# -- onto upstream's newest commit -------------------------------------------------------------
NEWEST = "newest"
PIN = "pin"


@dataclass(frozen=True)
class Newest:
    commit: str
    label: str  # "FlashInfer main at fb28d7242b35 (upstream's newest)"


def newest_base(entry: LockEntry, repo: GitRepo, *, cache_tree: bool) -> Newest:
    """Upstream's newest commit: a git source's default branch (fetched now; offline, as last
    fetched), a clone's ``origin/HEAD`` (else its ``HEAD``), or for an index source the newest
    release the cache holds (no download: ``patchkit fetch --version V`` adds a newer one)."""
    name = project_name(entry.name)
    if entry.source.kind is SourceKind.GIT and cache_tree:
        return _git_newest(entry, repo, name)
    if entry.source.kind is SourceKind.INDEX and cache_tree:
        with ReleaseStore(entry.name, package_of(entry)) as store:
            version = max(v for v in store.fetched() if not v.is_prerelease)
            release = store.ensure_release(str(version))  # fetched: no download
            upstream = store.upstream_commit(str(version)) or ""
        named = f"commit {upstream[:12]}; " if upstream else ""
        return Newest(release, f"{name} {version} ({named}the newest release fetched)")
    for rev in ("refs/remotes/origin/HEAD", "HEAD"):
        commit = repo.resolve(rev)
        if commit:
            where = "origin's default branch" if "origin" in rev else "this clone's HEAD"
            return Newest(commit, f"{name} at {commit[:12]} ({where})")
    raise SourceError(f"{repo.path} has no HEAD to export onto")


def _git_newest(entry: LockEntry, repo: GitRepo, name: str) -> Newest:
    url = entry.source.url or entry.repository
    fresh = "upstream's newest"
    try:
        with GitMirror(entry.name, url) as mirror:
            mirror.refresh()
    except PatchkitError as err:  # offline: what was fetched last, said
        log.warning("could not fetch %s (%s): upstream's newest as last fetched", url, err)
        fresh = "upstream's newest as last fetched"
    branch = _default_branch(repo, url)
    commit = repo.resolve(f"refs/upstream/heads/{branch}")
    if commit is None:
        raise SourceError(f"{url} has no branch {branch} after fetching it")
    return Newest(commit, f"{name} {branch} at {commit[:12]} ({fresh})")


def _default_branch(repo: GitRepo, url: str) -> str:
    """The remote's default branch (``ls-remote --symref``), else ``main``."""
    try:
        out = repo.text("ls-remote", "--symref", url, "HEAD")
    except PatchkitError:
        return "main"
    for line in out.splitlines():
        if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
            return line[len("ref: refs/heads/") : -len("\tHEAD")]
    return "main"
