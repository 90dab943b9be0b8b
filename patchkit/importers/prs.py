"""Upstream pull requests people carry until a release has them: ``pr:owner/name#N`` read with
the GitHub CLI (its diff, title, text, state and merge commit), or offline a diff file named by
its PR (``01-pr59958.patch``, ``pr-59958.diff``): the patch records the PR, so ``rebase``,
``watch`` and the matrix retire it when the release that has the change arrives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from patchkit.errors import ImportRefused, SourceError
from patchkit.importers.diffs import map_diff
from patchkit.importers.model import Candidate, Form, Meta, Origin
from patchkit.targets import profile
from patchkit.upstream.github import Gh, slug

_SPEC = re.compile(r"^pr:(?P<repo>[A-Za-z0-9._-]+/[A-Za-z0-9._-]+)?#?(?P<number>\d{1,9})$")
_NAMED = re.compile(r"(?:^|[-_.])pr[-_]?(\d{1,9})(?:[-_.]|$)", re.IGNORECASE)
STATES = {"OPEN": "open", "MERGED": "merged", "CLOSED": "closed"}


def is_pr_spec(spec: str) -> bool:
    return spec.startswith("pr:")


def pr_url(target: str, number: str, repository: str | None = None) -> str:
    """The PR's URL on ``repository`` (``owner/name``), else on the target's own repository."""
    prof = profile(target)
    repo = repository or (slug(prof.repository) if prof else "")
    if not repo:
        raise ImportRefused(f"pr:{number}: say whose pull request it is: pr:owner/name#{number}")
    return f"https://github.com/{repo}/pull/{number}"


def named_pr(filename: str, target: str) -> str | None:
    """The PR a diff file's name gives (``01-pr59958.patch``), as a URL; None without one."""
    match = _NAMED.search(filename.rsplit(".", 1)[0])
    return pr_url(target, match.group(1)) if match else None


def read_pr(spec: str, target: str, gh: Gh | None = None) -> list[Candidate]:
    """The pull request ``spec`` names, as one candidate (its diff and what it says of itself)."""
    match = _SPEC.match(spec)
    if match is None:
        raise ImportRefused(f"{spec}: not a pull request (pr:owner/name#NUMBER)")
    number = match["number"]
    url = pr_url(target, number, match["repo"])
    repo = url.split("github.com/", 1)[1].rsplit("/pull/", 1)[0]
    gh = gh or Gh.find("importing a pull request")
    view = gh.json("pr", "view", number, "--repo", repo, "--json",
                   "number,title,body,state,mergeCommit,url,author")  # fmt: skip
    diff = gh.text("pr", "diff", number, "--repo", repo).encode()
    mapped = map_diff(diff, target, strip=1, source=spec)
    meta = _meta(view, url)
    origin = (Origin(f"pr-{number}.diff", diff),)
    return [Candidate(f"pr{number}", Form.PR, Path(spec), meta, mapped.text, origin=origin)]


def _meta(view: Any, url: str) -> Meta:
    if not isinstance(view, dict):
        raise SourceError(f"`gh pr view` answered {type(view).__name__}, not an object")
    title, body = _text(view, "title"), _text(view, "body")
    state = STATES.get(str(view.get("state", "")).upper(), "open")
    fields = {"PR-State": state}
    merge = view.get("mergeCommit")
    if isinstance(merge, dict) and isinstance(merge.get("oid"), str):
        fields["Merge-Commit"] = merge["oid"][:40]
    author = view.get("author")
    if isinstance(author, dict) and isinstance(author.get("login"), str):
        fields["PR-Author"] = author["login"][:100]
    why = body.strip().split("\n\n", 1)[0][:2000] if body else f"Upstream {url}."
    return Meta(title=title[:200], why=why, prs=(url,), fields=fields)


def _text(view: dict[str, Any], key: str) -> str:
    value = view.get(key)
    return value if isinstance(value, str) else ""
