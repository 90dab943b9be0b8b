"""``patchkit retire``: a patch upstream merged leaves the series, by command, not by hand.

Writes the patch's metadata (tomlkit: comments and layout kept): ``status = "merged"``,
``merged_in = VERSION``, its pending mark dropped, and with a PR its ``[upstream]`` table
(``pr`` = the pull request's URL, ``state = "merged"``). Under the project's writer lock and
through the one journal the rebase writes the project with, so a stopped rebase can be continued
right after (``rebase --continue`` no longer carries a retired patch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import ConfigError
from patchkit.project.edits import retired
from patchkit.project.load import Project
from patchkit.project.writer import project_writes

_VERSION = re.compile(r"v?[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
_PR_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/pull/(\d{1,9})")


@dataclass(frozen=True)
class RetireReport:
    patch_id: str
    meta_file: Path
    merged_in: str
    pr: str | None  # the pull request's URL, when known
    changed: bool  # False: it was already retired just so (nothing written)


def retire(
    *, project: Project, patch_id: str, merged_in: str, pr: str | int | None = None
) -> RetireReport:
    """Mark ``patch_id`` merged upstream in ``merged_in`` (a release or commit), optionally by
    pull request ``pr`` (its number or URL)."""
    meta = project.patch(patch_id)
    version = _version(merged_in)
    url = _pr_url(pr, project.entry(meta.target).repository) if pr is not None else None
    with project_writes(project.root, command="retire") as writes:
        original = (writes.read(meta.meta_file) or b"").decode()
        text = retired(original, version, url)
        if text != original:
            writes.put(meta.meta_file, text.encode())
    return RetireReport(patch_id, meta.meta_file, version, url, text != original)


def _version(value: str) -> str:
    if not _VERSION.fullmatch(value):
        raise ConfigError(
            f"--merged-in {value!r} is not a release or commit",
            hint="the upstream release that has the change, like 0.22.0 (the rebase report's "
            "`absorbed by`), or a commit id",
        )
    return value.removeprefix("v") if value[1:2].isdigit() else value


def _pr_url(pr: str | int, repository: str) -> str:
    text = str(pr).strip().removeprefix("#")
    url = f"{repository.rstrip('/')}/pull/{text}" if text.isdigit() and len(text) < 10 else text
    if _PR_URL.fullmatch(url) and int(url.rsplit("/", 1)[1]) > 0:
        return url
    raise ConfigError(
        f"--pr {str(pr)!r} is not a pull request of {repository}",
        hint="the number of the upstream pull request that merged the change, or its URL "
        "(https://github.com/OWNER/REPO/pull/N)",
    )
