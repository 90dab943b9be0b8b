"""Where a watch run goes beyond this machine: the branch pushed to the patch repository's
remote, one pull request per upstream version with the report as its text, and an issue when a
patch broke — each opened once, then updated only when its text changed (GitHub CLI).

Answers from ``gh`` are data: only the fields used are read, checked for type, and at most
:data:`MAX_LISTED` entries are looked at."""

from __future__ import annotations

import contextlib
import enum
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchkit.errors import SourceError
from patchkit.gitrepo import GitRepo, run
from patchkit.upstream.github import Gh

MAX_LISTED = 100  # pull requests / issues of one query looked at


class Action(str, enum.Enum):
    OPENED = "opened"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Published:
    """A pull request or issue watch opened or updated (or found as it should be)."""

    kind: str  # "pr" or "issue"
    action: Action
    url: str


def remote_tip(repo: GitRepo, remote: str, branch: str) -> str | None:
    """The commit ``branch`` is at on ``remote`` (None when absent)."""
    out = run(["ls-remote", "--heads", remote, f"refs/heads/{branch}"], cwd=repo.path)
    line = out.stdout.decode().split()
    return line[0] if line else None


def push(repo: GitRepo, remote: str, branch: str, commit: str, expected: str | None) -> bool:
    """Push ``commit`` as ``branch``, only over ``expected`` (None: the branch must not exist);
    False when the remote already has it."""
    if remote_tip(repo, remote, branch) == commit:
        return False
    lease = f"refs/heads/{branch}:{expected or ''}"
    repo.push(remote, [f"{commit}:refs/heads/{branch}"], leases=[lease])
    return True


def pull_request(gh: Gh, *, branch: str, base: str, title: str, body: str, cwd: Path) -> Published:
    """Open the pull request of ``branch`` into ``base``, or update its text."""
    found = _listed(
        gh.json(
            "pr", "list", "--head", branch, "--state", "open", "--json", "number,url,body,title"
        )
    )
    with _body_file(body) as path:
        if not found:
            out = gh.text(
                "pr",
                "create",
                "--head",
                branch,
                "--base",
                base,
                "--title",
                title,
                "--body-file",
                str(path),
                cwd=cwd,
            )
            return Published("pr", Action.OPENED, _url(out))
        pr = found[0]
        if pr["body"].strip() == body.strip() and pr["title"] == title:
            return Published("pr", Action.UNCHANGED, pr["url"])
        gh.text(
            "pr", "edit", str(pr["number"]), "--title", title, "--body-file", str(path), cwd=cwd
        )
        return Published("pr", Action.UPDATED, pr["url"])


def issue(gh: Gh, *, title: str, body: str, cwd: Path) -> Published:
    """Open the issue titled ``title``, or update its text (found by its exact title)."""
    listed = gh.json(
        "issue",
        "list",
        "--state",
        "open",
        "--search",
        f'"{title}" in:title',
        "--json",
        "number,url,body,title",
    )
    found = [i for i in _listed(listed) if i["title"] == title]
    with _body_file(body) as path:
        if not found:
            out = gh.text("issue", "create", "--title", title, "--body-file", str(path), cwd=cwd)
            return Published("issue", Action.OPENED, _url(out))
        item = found[0]
        if item["body"].strip() == body.strip():
            return Published("issue", Action.UNCHANGED, item["url"])
        gh.text("issue", "edit", str(item["number"]), "--body-file", str(path), cwd=cwd)
        return Published("issue", Action.UPDATED, item["url"])


def _listed(answer: Any) -> list[dict[str, Any]]:
    """The entries of a ``gh ... list --json`` answer that have the fields used, typed."""
    if not isinstance(answer, list):
        raise SourceError(f"`gh` answered {type(answer).__name__}, not a list")
    typed = {"number": int, "url": str, "body": str, "title": str}
    return [
        e
        for e in answer[:MAX_LISTED]
        if isinstance(e, dict)
        and all(
            isinstance(e.get(k), t) and not isinstance(e.get(k), bool) for k, t in typed.items()
        )
    ]


def _url(out: str) -> str:
    urls = [w for w in out.split() if w.startswith("https://")]
    if not urls:
        raise SourceError(f"`gh` printed no URL: {out.strip()[:200]!r}")
    return urls[-1]


@contextlib.contextmanager
def _body_file(body: str) -> Iterator[Path]:
    """The text in a temporary file, for ``--body-file``."""
    with tempfile.TemporaryDirectory(prefix="patchkit-watch-body-") as tmp:
        path = Path(tmp) / "body.md"
        path.write_text(body, encoding="utf-8")
        yield path
