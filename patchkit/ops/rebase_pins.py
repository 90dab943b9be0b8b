"""``rebase --with-pins``: a target and the targets its new release pins (vLLM pins FlashInfer)
rebased as one transaction over the project's files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchkit.ops.context import Project, load_project
from patchkit.ops.rebase import rebase
from patchkit.project.lock import pins_to_move
from patchkit.project.writer import project_lock, write_project
from patchkit.rebasing.conflicts import RebaseReport


@dataclass(frozen=True)
class PinnedRebase:
    """A rebase of one target and of the targets it pins, as one transaction."""

    reports: tuple[RebaseReport, ...]  # the target's first, then each pinned target's
    rolled_back: bool = False  # a pinned target stopped, so no lock moved

    @property
    def stopped(self) -> bool:
        return any(r.stopped for r in self.reports)


def rebase_with_pins(
    *,
    project: Project,
    target: str,
    onto: str,
    allow_pending: bool = False,
    sets: list[str] | None = None,
    explain: bool = False,
    verify: bool = False,
    python: str | None = None,
) -> PinnedRebase:
    """Rebase ``target`` onto ``onto``, then every target its new release pins (vLLM pins
    FlashInfer) onto the pinned version. All or nothing: when a pinned target stops, the
    project's lock and patch files are restored as they were, so no target moves alone."""
    with project_lock(project.root, command="rebase"):  # one writer for the whole transaction
        options = {"allow_pending": allow_pending, "sets": sets, "explain": explain}
        return _with_pins(project, target, onto, {**options, "verify": verify, "python": python})


def _with_pins(project: Project, target: str, onto: str, options: dict[str, Any]) -> PinnedRebase:
    saved = _snapshot(project.root)
    sets = options["sets"]
    first = rebase(project=project, target=target, onto=onto, **options)
    reports = [first]
    if not first.lock_moved:
        return PinnedRebase(tuple(reports))
    moved = load_project(project.root, sets)
    for other, version in pins_to_move(moved.lock, target).items():
        report = rebase(project=moved, target=other, onto=version, **options)
        reports.append(report)
        if not report.lock_moved:
            _restore(project.root, saved)
            return PinnedRebase(tuple(reports), rolled_back=True)
        moved = load_project(project.root, sets)
    return PinnedRebase(tuple(reports))


def _snapshot(root: Path) -> dict[Path, bytes]:
    """The project's files a rebase may write: the lock and every patch set's files."""
    files = [root / "upstream.lock", *(p for p in (root / "patchsets").rglob("*") if p.is_file())]
    return {path: path.read_bytes() for path in files}


def _restore(root: Path, saved: dict[Path, bytes]) -> None:
    """The project's files back as they were, together (through the journal)."""
    changed = {
        path: content
        for path, content in saved.items()
        if not path.exists() or path.read_bytes() != content
    }
    write_project(root, changed, command="rebase")
