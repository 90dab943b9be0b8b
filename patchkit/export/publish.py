"""Publishing exported branches: the files beside each export, then never to the upstream
repository, one atomic push with a lease per branch, ``gh pr create`` (or ``gh pr comment`` on
the open upstream PR that makes the same fix), and the PR's URL written back into the patch's
metadata.

``export.json`` beside each export records what was exported and what was pushed where; the
lease of a re-push expects what patchkit last pushed to that remote, so a branch someone else
moved is never overwritten without ``--force``."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patchkit.errors import ConfigError, GitError, SourceError
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry
from patchkit.project.edits import with_pr
from patchkit.project.sets import project_of
from patchkit.project.writer import project_writes
from patchkit.upstream.github import Gh

if TYPE_CHECKING:
    from patchkit.export.results import PatchExport

log = logging.getLogger("patchkit.export")


# -- the files beside an export -------------------------------------------------------------------
def load_record(out_dir: Path) -> dict[str, Any]:
    try:
        raw = json.loads((out_dir / "export.json").read_text())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def record_table(record: dict[str, Any], key: str) -> dict[str, str]:
    value = record.get(key)
    return dict(value) if isinstance(value, dict) else {}


def save_record(out_dir: Path, record: dict[str, Any]) -> None:
    tmp = out_dir / ".export.json.tmp"
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    tmp.replace(out_dir / "export.json")


def write_files(repo: GitRepo, export: PatchExport, base: str, record: dict[str, Any]) -> None:
    """The commit message, PR title and body, the ``git am``-able patch and ``export.json``."""
    out = export.out_dir
    (out / "COMMIT_MSG").write_text(export.text.commit_message)
    (out / "PR_TITLE").write_text(export.text.title + "\n")
    (out / "PR_BODY.md").write_text(export.text.body)
    (out / "NOTE.md").unlink(missing_ok=True)  # an earlier export's "no branch was made"
    comment = out / "COMMENT.md"
    if export.comment_for:
        comment.write_text(comment_text(export))
    else:
        comment.unlink(missing_ok=True)
    (out / f"{export.patch_id}.patch").write_bytes(repo.format_patch(export.commit))
    branches = record_table(record, "branches")  # checkout -> the commit the branch was left at
    branches[str(repo.path)] = export.commit
    save_record(
        out,
        {
            "patch": export.patch_id,
            "branch": export.branch,
            "commit": export.commit,
            "parent": export.parent,
            "base": base,
            "branches": branches,
            "pushed": record_table(record, "pushed"),  # remote URL -> the commit last pushed there
            "commented": record_table(record, "commented"),  # PR URL -> the commit posted there
        },
    )


def comment_text(export: PatchExport) -> str:
    """The text for the open upstream PR that makes the same fix."""
    return export.text.comment


# -- the remote ----------------------------------------------------------------------------------
def normalise_url(url: str, cwd: Path | None = None) -> str:
    """A remote URL reduced to ``host/owner/repo`` (or an absolute path), for comparison."""
    text = url.strip()
    scp = re.match(r"^[\w.-]+@([\w.-]+):(?!//)(.*)$", text)
    if scp:
        text = f"{scp.group(1)}/{scp.group(2)}"
    elif text.startswith("file://"):
        text = str(Path(text[len("file://") :]).resolve())
    elif "://" in text:
        rest = text.split("://", 1)[1]
        host, _, path = rest.partition("/")
        text = f"{host.rsplit('@', 1)[-1].lower()}/{path}"
    else:
        text = str(((cwd or Path.cwd()) / Path(text).expanduser()).resolve())
    return text.rstrip("/").removesuffix(".git").rstrip("/").lower()


def check_remote(repo: GitRepo, entry: LockEntry, remote: str, force: bool, real_base: bool) -> str:
    """The URL ``remote`` pushes to, once it is known not to be upstream (unless ``force``) and
    the base is upstream's own commit."""
    url = repo.remote_push_url(remote) or remote
    if normalise_url(url, repo.path) == normalise_url(entry.repository, repo.path) and not force:
        raise ConfigError(
            f"refusing to push to {remote} ({url}): it is the upstream repository "
            f"{entry.repository}",
            hint="push to your fork (git remote add fork <url>; --push fork), or pass --force",
        )
    if not real_base:
        raise SourceError(
            f"{repo.path} holds {entry.name} {entry.version} as a synthetic commit made from the "
            "source release, not upstream's history; a branch on it cannot become a PR",
            hint="export from a clone of upstream (--checkout DIR at the pinned commit), or "
            "`git am` the exported <id>.patch there",
        )
    return url


# -- the push ------------------------------------------------------------------------------------
def push(
    repo: GitRepo, exports: Sequence[PatchExport], remote: str, url: str, force: bool
) -> list[PatchExport]:
    """One atomic push of every branch; each lease expects what patchkit last pushed there."""
    key = normalise_url(url, repo.path)
    records = [load_record(e.out_dir) for e in exports]
    leases = [
        f"refs/heads/{e.branch}:{record_table(r, 'pushed').get(key, '')}"
        for e, r in zip(exports, records, strict=True)
    ]
    refspecs = [f"refs/heads/{e.branch}:refs/heads/{e.branch}" for e in exports]
    try:
        repo.push(remote, refspecs, leases=leases, force=force)
    except GitError as exc:
        raise _push_error(exc, remote, url) from None
    for export, record in zip(exports, records, strict=True):
        pushed = {**record_table(record, "pushed"), key: export.commit}
        save_record(export.out_dir, {**record, "pushed": pushed})
    return [replace(e, pushed_to=url) for e in exports]


def _push_error(exc: GitError, remote: str, url: str) -> GitError:
    leased = "stale info" in exc.message or "rejected" in exc.message
    return GitError(
        f"push to {remote} failed: {exc.message}",
        hint="a branch there changed since patchkit last pushed it; look at it, then pass "
        "--force to replace it"
        if leased
        else f"check that {remote} ({url}) is a repository you can push to",
    )


# -- the pull request ----------------------------------------------------------------------------
def _slug(url: str) -> str:
    return "/".join(normalise_url(url).split("/")[-2:])


def open_prs(
    exports: list[PatchExport],
    *,
    gh: Gh,
    fork_url: str | None,
    upstream: str,
    cwd: Path,
    meta_files: Mapping[str, Path],
) -> list[PatchExport]:
    """For each export: a comment on the open upstream PR that makes the same fix, else a new
    PR to ``upstream`` from its branch pushed to ``fork_url`` (its URL recorded in the patch's
    metadata file, ``meta_files`` by patch id), unless the patch has its PR already."""
    return [_publish(gh, e, fork_url, upstream, cwd, meta_files[e.patch_id]) for e in exports]


def _publish(
    gh: Gh, export: PatchExport, fork_url: str | None, upstream: str, cwd: Path, meta_file: Path
) -> PatchExport:
    if export.comment_for and export.comment_for != export.pr_url:
        return _comment(gh, export, cwd)
    if export.pr_url or export.comment_for:
        log.info("%s already has a PR: %s", export.patch_id, export.pr_url)
        return export
    if not fork_url:
        raise ConfigError(
            f"--open: {export.patch_id} needs a new PR, whose branch must be on your fork",
            hint="pass --push REMOTE (your fork) with --open",
        )
    return _open_pr(gh, export, fork_url, upstream, cwd, meta_file)


def _comment(gh: Gh, export: PatchExport, cwd: Path) -> PatchExport:
    """``gh pr comment`` with COMMENT.md on the open PR, once per exported commit."""
    url = str(export.comment_for)
    record = load_record(export.out_dir)
    posted = record_table(record, "commented")  # PR URL -> the commit whose text was posted
    if posted.get(url) == export.commit:
        log.info("%s: the comment for %s was posted already", export.patch_id, url)
        return replace(export, commented=url)
    body = str(export.out_dir / "COMMENT.md")
    gh.text("pr", "comment", url, "--body-file", body, cwd=cwd)
    save_record(export.out_dir, {**record, "commented": {**posted, url: export.commit}})
    return replace(export, commented=url)


def _open_pr(
    gh: Gh, export: PatchExport, fork_url: str, upstream: str, cwd: Path, meta_file: Path
) -> PatchExport:
    """``gh pr create`` for one branch."""
    owner = _slug(fork_url).split("/")[0]
    options = {
        "--repo": _slug(upstream),
        "--head": f"{owner}:{export.branch}",
        "--title": export.text.title,
        "--body-file": str(export.out_dir / "PR_BODY.md"),
    }
    out = gh.text("pr", "create", *(part for pair in options.items() for part in pair), cwd=cwd)
    urls = re.findall(r"https?://\S+", out)
    if not urls:
        raise SourceError(f"`gh pr create` printed no PR URL for {export.branch}: {out.strip()!r}")
    record_pr(meta_file, urls[-1])
    return replace(export, pr_url=urls[-1])


def record_pr(meta_file: Path, url: str) -> None:
    """Add ``url`` to the patch's ``prs`` and mark it forwarded, keeping the file's comments."""
    with project_writes(project_of(meta_file), command="export-pr") as writes:
        writes.put(meta_file, with_pr(writes.read(meta_file) or b"", url))
