"""Where exported branches start and what signs them: the base commit (the pinned upstream
commit, or a synthetic release commit of patchkit's cache standing for it, which is never
pushed), the identity and the fixed dates of each commit, and whether a branch may be moved.

Git commands used beyond :class:`GitRepo`'s methods (through ``GitRepo.text``):
``show -s --format=%cI`` (the base commit's date)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from patchkit.errors import ConfigError, TreeError
from patchkit.export.prtext import Identity
from patchkit.export.results import PatchExport
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.model import LockEntry, PatchMeta
from patchkit.targets import commits_match, profile
from patchkit.trust.gitargs import check_rev
from patchkit.upstream.sources import TRAILER


def names_upstream(repo: GitRepo, commit: str, entry: LockEntry) -> bool:
    """A synthetic release commit of patchkit's cache names the upstream commit it stands for."""
    for line in repo.commit_message(commit).splitlines():
        if line.startswith(TRAILER) and commits_match(line[len(TRAILER) :].strip(), entry.commit):
            return True
    prof = profile(entry.name)
    content = repo.read_file(commit, prof.version_file) if prof else None
    named = prof.commit_in(content.decode(errors="replace")) if prof and content else None
    return bool(named and commits_match(named, entry.commit))


PREFIX_KEY = "patchkit.branchPrefix"  # git config: the user's own prefix ("ada/", "fix/")
_BRANCH_CHARS = 48


def branch_prefix(repo: GitRepo, given: str | None) -> str:
    """``--branch-prefix``, else ``git config patchkit.branchPrefix`` as the checkout sees it
    (its own config, else the user's global one), else none."""
    return given if given is not None else (repo.config(PREFIX_KEY) or "")


def branch_name(prefix: str, meta: PatchMeta) -> str:
    """``prefix`` and the words of the patch's title, lowercase, joined by ``-`` and cut at a
    word to 48 characters (``fix/admit-sm12x-in-the-mxfp4-triton-moe-capability``): a fork's
    branch shows in the PR, so it says what the change is, never a patch id of ours."""
    words = re.findall(r"[a-z0-9]+", meta.title.lower()) or re.findall(r"[a-z0-9]+", meta.id)
    name = ""
    for word in words:
        if name and len(name) + 1 + len(word) > _BRANCH_CHARS:
            break
        name = f"{name}-{word}" if name else word[:_BRANCH_CHARS]
    return f"{prefix}{name}"


def refuse_bad_branches(repo: GitRepo, exports: Sequence[PatchExport]) -> None:
    """Every branch name git accepts and each once, checked before any branch moves: a prefix
    git refuses (``a..b/``, ``x.lock``) or two patches whose titles make the same branch stop
    the export with nothing moved."""
    refused = set(repo.refused_branches([e.branch for e in exports]))
    bad = [f"{e.patch_id} ({e.branch})" for e in exports if e.branch in refused]
    if bad:
        raise ConfigError(
            f"git refuses the branch names of {', '.join(bad)}; no branch was moved",
            hint=f"change the branch prefix (--branch-prefix, or git config {PREFIX_KEY}): no "
            "`..`, no trailing `.` or `.lock`",
        )
    seen: dict[str, str] = {}
    for e in exports:
        if e.branch in seen:
            raise ConfigError(
                f"{seen[e.branch]} and {e.patch_id} would both be exported to branch "
                f"{e.branch} (their titles begin alike); no branch was moved",
                hint="give one of them a title that says how it differs, or export them in "
                "separate runs with different --branch-prefix",
            )
        seen[e.branch] = e.patch_id


def base_commit(repo: GitRepo, entry: LockEntry, onto: str | None) -> tuple[str, bool]:
    """The commit to base branches on, and whether it is a real upstream commit (pushable)."""
    if onto:
        commit = repo.resolve(check_rev(onto, where="--onto"))
        if commit is None:
            raise TreeError(f"--onto {onto}: no such commit in {repo.path}")
        message = repo.commit_message(commit).splitlines()
        return commit, not any(line.startswith(TRAILER) for line in message)  # a stand-in?
    commit = repo.resolve(entry.commit)
    if commit:
        return commit, True
    for rev in (f"v{entry.version}", "HEAD"):
        commit = repo.resolve(rev)
        if commit and names_upstream(repo, commit, entry):
            return commit, False
    raise TreeError(
        f"{repo.path} has no commit for {entry.name} {entry.version} ({entry.commit})",
        hint="run `patchkit fetch`, or pass --checkout of a clone that has the pinned commit",
    )


def not_upstream_notice(entry: LockEntry, checkout: object) -> str:
    """Why branches made in ``checkout`` cannot become pull requests, and how to get ones
    that can: said before any work, and again in the report."""
    return (
        f"these branches cannot become pull requests: {checkout} has a commit made from the "
        f"{entry.name} {entry.version} source release, not {entry.repository}'s own history "
        "(the lock's source is the package index); the series is still written for review. "
        f"For PR branches on upstream's commit {entry.commit[:12]}: pass --checkout CLONE (a "
        f"clone of {entry.repository}), or set the lock's source to "
        '{ kind = "git", url = "..." } or { kind = "path", path = "..." } in upstream.lock'
    )


def commit_identity(repo: GitRepo, given: Identity | None, meta: PatchMeta) -> Identity:
    """``--identity``, else the patch's ``[export] identity``, else the checkout's git config
    (the user's own); an address at ``localhost`` is no person's and is refused."""
    found = _identity(repo, given, meta)
    if not found.is_a_person:
        raise ConfigError(
            f"{found} cannot sign the commit of {meta.id}: an upstream sign-off is a person's "
            "address",
            hint="pass --identity 'Your Name <you@example.com>', or set git config user.name and "
            "user.email",
        )
    return found


def _identity(repo: GitRepo, given: Identity | None, meta: PatchMeta) -> Identity:
    if given:
        return given
    if meta.export.identity:
        return Identity.parse(meta.export.identity)
    name, email = repo.config("user.name"), repo.config("user.email")
    if not name or not email:
        raise ConfigError(
            f"no identity for the commit of {meta.id} and its sign-off",
            hint="pass --identity 'Your Name <you@example.com>', set [export] identity in "
            f"{meta.meta_file}, or set git config user.name and user.email",
        )
    return Identity(name, email)


def commit_env(repo: GitRepo, base: str, given: Identity | None, meta: PatchMeta) -> dict[str, str]:
    """Identity and a fixed date: the patch's ``[export] date``, else the patch file's last
    commit, else the base commit's date."""
    date = meta.export.date
    if date is None and is_repo(meta.file.parent):
        with GitRepo(meta.file.parent) as project_repo:
            date = project_repo.last_commit_date(meta.file)
    date = date or repo.text("show", "-s", "--format=%cI", base)
    identity = commit_identity(repo, given, meta)
    name, email = identity.name, identity.email
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }


def branch_check(
    repo: GitRepo, export: PatchExport, exported: str | None, force: bool
) -> str | None:
    """The branch's commit now, after checking that patchkit may move it to ``export.commit``."""
    ref = f"refs/heads/{export.branch}"
    old = repo.resolve(ref)
    if old == export.commit:
        return old
    if old and old != exported and not force:
        raise TreeError(
            f"branch {export.branch} in {repo.path} is at {old[:12]}, which patchkit did not "
            "export; refusing to move it",
            hint="keep your commits elsewhere, or pass --force to replace the branch",
        )
    if ref in repo.checked_out_branches():
        raise TreeError(
            f"{export.branch} is checked out in a worktree of {repo.path}",
            hint="switch that worktree to another branch, then export again",
        )
    return old
