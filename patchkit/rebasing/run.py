"""A rebase's run on the new upstream: every patch through the engines' chain on blobs at the
new commit (``evaluate``), then each judged (``judge_all``): applied, carried (refreshed),
upstreamed, or stopped, with the releases bisection names. Nothing here writes the project.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from patchkit.engine.deltas import change_deltas
from patchkit.engine.diff.make import FileDelta, unified_diff
from patchkit.engine.probe import Prober, series_at
from patchkit.engine.series import Blobs, Reader, patch_paths
from patchkit.model import Lock, LockEntry, PatchKind, PatchMeta
from patchkit.outcome import Outcome, PatchResult
from patchkit.rebasing.bisect import Bisected, trace_patch
from patchkit.rebasing.conflicts import (
    manual_result,
    worktree_fixes,
    worktree_of,
)
from patchkit.rebasing.report import PatchRebase
from patchkit.rebasing.verify import FreshTests
from patchkit.upstream.history import History, Point, same_files
from patchkit.workspace.tree import Tree

MANUAL = "manual"  # the step of a patch a person fixed in the worktree


@dataclass
class Run:
    """One rebase in progress: the real objects, built once."""

    root: Path  # the project's
    lock: Lock  # the project's, as it was when the rebase started
    entry: LockEntry
    patches: list[PatchMeta]
    history: History
    blobs: Blobs
    old: Point
    new: Point
    directory: Path
    tests: FreshTests  # the fresh-tree apply and tests of a --verify rebase (the verb's)
    found: dict[str, Bisected] = field(default_factory=dict)
    points: int = 0
    explain: bool = False  # name each hunk's scope path (parses files placement did not need)

    @property
    def label(self) -> str:
        return self.history.version(self.new)


@dataclass(frozen=True)
class Eval:
    meta: PatchMeta
    result: PatchResult
    deltas: tuple[FileDelta, ...]  # its files before and after, on the new upstream
    before: dict[str, bytes | None]  # its files as the earlier patches left them
    manual: bool = False  # a person fixed it in the worktree (--continue)


# -- running the series on the new upstream ---------------------------------------------------
def evaluate(run: Run, manual: dict[str, dict[str, bytes | None]]) -> list[Eval]:
    """Every patch on the new upstream, as bisection runs them at the releases between."""

    def fixed(meta: PatchMeta, read: Reader) -> PatchResult | None:
        if meta.id not in manual:
            return None
        return manual_result(meta.id, {p: read(p) for p in patch_paths(meta)}, manual[meta.id])

    overlay, steps = series_at(
        run.history, run.old, run.new, run.patches, run.blobs, explain=run.explain, given=fixed
    )
    evals = []
    for meta, result in zip(run.patches, steps, strict=True):
        before = {p: overlay.read(p) for p in patch_paths(meta)}
        for change in result.changes:  # a rewrite may find its code moved to other files
            before.setdefault(change.path, overlay.read(change.path))
        deltas = tuple(change_deltas(result.changes, overlay))
        evals.append(Eval(meta, result, deltas, before, meta.id in manual))
    return evals


def fixes_from_worktree(run: Run, stopped: Sequence[str]) -> dict[str, dict[str, bytes | None]]:
    tree = Tree(worktree_of(run.directory), run.directory / "state", run.entry.name)
    diffs = [m for m in run.patches if m.id in stopped and m.kind is PatchKind.DIFF]
    return worktree_fixes(tree, {m.id: patch_paths(m) for m in diffs})


# -- judging ----------------------------------------------------------------------------------
def _unchanged(run: Run, paths: Sequence[str]) -> bool:
    """The files are the same blobs in the old and the new upstream."""
    history = run.history
    return same_files(history.repo, history.commit(run.old), history.commit(run.new), paths)


def _judge(run: Run, ev: Eval, prober: Callable[[], Prober]) -> PatchRebase:
    result = ev.result
    outcome = result.outcome.since_base(lambda: _unchanged(run, list(ev.before)))
    step = MANUAL if ev.manual else result.step.value
    found = _bisected(run, ev.meta.id, outcome, prober)
    details, message = result.details, result.message
    absorbed = found.outcome is Outcome.UPSTREAMED and not outcome.carried
    if absorbed:
        # Never retired from history alone: upstream may have dropped the fix again.
        message = absorbed_message(ev.meta.id, found)
        details = ()  # upstream's reworked code is no conflict to fix
    moved = outcome.moved
    refreshed = moved and new_diff(ev) is not None
    return PatchRebase(
        ev.meta.id,
        outcome,
        step,
        found.absorbed_by,
        found.broken_by,
        found.probes,
        refreshed,
        details,
        message,
        result.placements,
        kind=ev.meta.kind.value,
        patch_file=_relative(run.root, ev.meta.file),
        absorbed=absorbed,
    )


def absorbed_message(patch_id: str, found: Bisected) -> str:
    return (
        f"upstream absorbed the change in {found.absorbed_by}, then reworked that code in "
        f"{found.broken_by}, where the patch no longer recognises it. If the fix is still "
        f"there, retire the patch: `patchkit retire {patch_id} --merged-in {found.absorbed_by}`"
        " (add `--pr N` for the upstream PR), then `--continue`"
    )


def _relative(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _bisected(run: Run, patch_id: str, outcome: Outcome, prober: Callable[[], Prober]) -> Bisected:
    if outcome in (Outcome.APPLIED, Outcome.CARRIED):
        return run.found.get(patch_id, Bisected())
    if patch_id in run.found:
        return run.found[patch_id]
    points = run.history.between(run.old, run.new) or [run.new]
    verdict = trace_patch(prober(), points, patch_id, outcome)
    at = run.history.version
    found = Bisected(
        absorbed_by=at(verdict.absorbed_at) if verdict.absorbed_at else None,
        broken_by=at(verdict.broken_at) if verdict.broken_at else None,
        probes=verdict.probes,
        outcome=verdict.outcome,
    )
    run.found[patch_id] = found
    return found


def new_diff(ev: Eval) -> bytes | None:
    """The refreshed diff of a carried diff patch; None when it would not change."""
    if ev.meta.kind is not PatchKind.DIFF:
        return None  # rewrites re-run; they are never rewritten
    diff = unified_diff(ev.deltas)
    return diff if diff != ev.meta.file.read_bytes() else None


def judge_all(run: Run, evals: Sequence[Eval]) -> list[PatchRebase]:
    cache: list[Prober] = []

    def prober() -> Prober:
        if not cache:
            cache.append(Prober(run.history, run.patches, run.blobs, run.old))
        return cache[0]

    judged = [_judge(run, ev, prober) for ev in evals]
    run.points += len(cache[0].runs) if cache else 0
    return judged
