"""``patchkit upstream-check``: look upstream, with the GitHub CLI, for pull requests that make
the same fix as each patch (:mod:`patchkit.upstream.duplicates`), and record what was found in
the patch's ``[upstream]`` table (``pr``, ``state``, ``checked``), comments and layout kept.
``export-pr --open`` runs the same check first, so it never opens a duplicate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError, PatchkitError
from patchkit.model import PatchMeta, UpstreamPr
from patchkit.project.edits import with_upstream
from patchkit.project.load import Project
from patchkit.project.writer import project_writes
from patchkit.upstream.duplicates import LOGIN, Found, decide, search
from patchkit.upstream.github import Gh, slug


@dataclass(frozen=True)
class PatchCheck:
    patch_id: str
    repository: str  # "vllm-project/vllm"
    before: UpstreamPr
    after: UpstreamPr
    found: tuple[Found, ...]  # strongest first
    written: bool  # the metadata file was changed


@dataclass(frozen=True)
class UpstreamCheckReport:
    checks: tuple[PatchCheck, ...]

    def to_json(self) -> dict[str, Any]:
        return {"patches": [_json(c) for c in self.checks]}


def _table(up: UpstreamPr) -> dict[str, Any]:
    related = [{"pr": r.pr, "state": r.state.value, "why": r.why} for r in up.related]
    return {
        "pr": up.pr,
        "state": up.state.value,
        "checked": up.checked,
        "author": up.author,
        "ours": up.ours,
        "related": related or None,
    }


def _json(check: PatchCheck) -> dict[str, Any]:
    found = [
        {"number": f.number, "url": f.url, "state": f.state.value, "title": f.title,
         "evidence": list(f.evidence)}
        for f in check.found
    ]  # fmt: skip
    return {
        "patch": check.patch_id,
        "repository": check.repository,
        "before": _table(check.before),
        "after": _table(check.after),
        "found": found,
        "written": check.written,
    }


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


def upstream_check(
    *,
    project: Project,
    gh: Gh,
    target: str | None = None,
    patch_ids: Sequence[str] = (),
    write: bool = True,
    date: str | None = None,
) -> UpstreamCheckReport:
    """Check ``patch_ids`` (none: every patch of ``target``, or of the project's sets, opt-in
    ones too) and, with ``write``, record the result in each patch's metadata."""
    metas = _selected(project, target, patch_ids)
    day = date or today()
    me = gh_login(gh)
    return UpstreamCheckReport(tuple(check_patch(project, gh, m, day, write, me) for m in metas))


def gh_login(gh: Gh) -> str | None:
    """The login ``gh`` is signed in as: a PR by it is ours (None: it would not say)."""
    try:
        login = gh.text("api", "user", "--jq", ".login").strip()
    except PatchkitError:
        return None
    return login if LOGIN.match(login) else None


def _selected(project: Project, target: str | None, patch_ids: Sequence[str]) -> list[PatchMeta]:
    if patch_ids:
        return [project.patch(pid) for pid in dict.fromkeys(patch_ids)]
    metas = [p for s in project.sets for p in s.patches if target in (None, p.target)]
    if not metas:
        where = f" for {target}" if target else ""
        raise ConfigError(f"no patches{where} in the patch sets under {project.root}/patchsets")
    return metas


def check_patch(
    project: Project, gh: Gh, meta: PatchMeta, day: str, write: bool, me: str | None = None
) -> PatchCheck:
    repository = slug(project.entry(meta.target).repository)
    found = search(gh, repository, meta)
    after = decide(found, day, meta.upstream, me)
    written = write and write_upstream(project.root, meta.meta_file, after)
    return PatchCheck(meta.id, repository, meta.upstream, after, tuple(found), written)


def write_upstream(root: Path, meta_file: Path, up: UpstreamPr) -> bool:
    """Set ``[upstream]`` of a patch's metadata to ``up``, keeping the file's comments and
    layout (through the project writer); False when it already said so."""
    with project_writes(root, command="upstream-check") as writes:
        text = with_upstream(writes.read(meta_file) or b"", _table(up))
        if text is not None:
            writes.put(meta_file, text)
    return text is not None


def refreshed(meta: PatchMeta, report: UpstreamCheckReport) -> PatchMeta:
    """``meta`` with the ``[upstream]`` the check found."""
    after = {c.patch_id: c.after for c in report.checks}
    return replace(meta, upstream=after[meta.id]) if meta.id in after else meta
