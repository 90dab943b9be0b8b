"""``patchkit rebase``: carry a target's patches onto a moved upstream, all or nothing.

Every patch runs on the new upstream (read from the cache's history, never the user's tree)
through the engines' chain: exact → unique context / probe → three-way from the pinned base
blobs, or the rewrite re-run. Outcomes: ``applied`` (its files did not change upstream),
``carried`` (refreshed), ``upstreamed`` (retired, with the release that absorbed it), or a stop
for a person. Bisection names the first release where a patch broke or was absorbed.

The project's files (patches, metadata, ``upstream.lock``) change only at the end, together.
A stop leaves a worktree with conflict markers and a report under the cache; ``--continue``
records the person's fixes from that worktree, ``--abort`` forgets it all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.engine.bisect import (
    History,
    Point,
    Prober,
    list_at,
    open_history,
    read_at,
    same_files,
    trace_patch,
)
from patchkit.engine.deltas import change_deltas
from patchkit.engine.difftext import FileDelta, unified_diff
from patchkit.engine.relocate import Finder
from patchkit.engine.series import Blobs, Overlay, run_patch, touched_paths
from patchkit.errors import ConfigError, PatchkitError, RebaseStopped
from patchkit.gitrepo import GitRepo
from patchkit.model import (
    LockEntry,
    Outcome,
    PatchKind,
    PatchMeta,
    PatchResult,
    UpstreamStatus,
)
from patchkit.ops.context import Project, load_project
from patchkit.ops.rebase_conflicts import (
    Bisected,
    PatchRebase,
    RebaseReport,
    RebaseState,
    drop_state,
    load_state,
    manual_result,
    meta_text,
    project_writer,
    publish,
    save_state,
    state_dir,
    worktree_fixes,
    worktree_of,
    write_conflicted,
    write_report,
)
from patchkit.targets import pins_in
from patchkit.workspace.tree import Tree

MANUAL = "manual"  # the step of a patch a person fixed in the worktree


@dataclass
class _Run:
    """One rebase in progress: the real objects, built once."""

    project: Project
    entry: LockEntry
    patches: list[PatchMeta]
    history: History
    blobs: Blobs
    old: Point
    new: Point
    directory: Path
    finder: Finder | None = None  # where moved code went between the old and new upstream
    found: dict[str, Bisected] = field(default_factory=dict)
    points: int = 0
    explain: bool = False  # name each hunk's scope path (parses files placement did not need)

    @property
    def label(self) -> str:
        return self.history.version(self.new)


@dataclass(frozen=True)
class _Eval:
    meta: PatchMeta
    result: PatchResult
    deltas: tuple[FileDelta, ...]  # its files before and after, on the new upstream
    before: dict[str, bytes | None]  # its files as the earlier patches left them
    manual: bool = False  # a person fixed it in the worktree (--continue)


# -- the API ----------------------------------------------------------------------------------
def rebase(
    *,
    project: Project,
    target: str,
    onto: str,
    history: History | None = None,
    allow_pending: bool = False,
    sets: list[str] | None = None,
    explain: bool = False,
) -> RebaseReport:
    """Move ``target``'s patches and lock onto ``onto`` (release version, tag, commit);
    ``explain`` names the scope path of every hunk's place."""
    with project_writer(project.root):
        return _rebase(project, target, onto, history, allow_pending, sets, explain)


def _rebase(
    project: Project,
    target: str,
    onto: str,
    history: History | None,
    allow_pending: bool,
    sets: list[str] | None,
    explain: bool,
) -> RebaseReport:
    directory = state_dir(project.root, target)
    if load_state(directory) is not None:
        raise RebaseStopped(
            f"a rebase of {target} is already in progress ({directory})",
            hint=f"`patchkit rebase --target {target} --continue` or `--abort`",
        )
    run = _open(project, target, history, directory)
    run.new, run.explain = run.history.resolve(onto), explain
    state = RebaseState(str(project.root), target, sets, run.new, allow_pending, [])
    try:
        return _conclude(run, state, _evaluate(run, {}))
    finally:
        _close(run, history is None)


def continue_rebase(
    *, project_root: Path, target: str, history: History | None = None
) -> RebaseReport:
    """Record the fixed patches from the worktree, then finish (or stop again)."""
    with project_writer(project_root):
        return _continue(project_root, target, history)


def _continue(project_root: Path, target: str, history: History | None) -> RebaseReport:
    directory = state_dir(project_root, target)
    state = _require_state(directory, target)
    project = load_project(project_root, state.sets)
    run = _open(project, target, history, directory)
    run.new, run.found, run.points = state.onto, dict(state.found), state.points
    try:
        manual = _worktree_fixes(run, state.stopped)
        return _conclude(run, state, _evaluate(run, manual))
    finally:
        _close(run, history is None)


def abort_rebase(*, project_root: Path, target: str, history: History | None = None) -> Path:
    """Drop a stopped rebase: its worktree and state. The project was never touched."""
    directory = state_dir(project_root, target)
    with project_writer(project_root):
        _require_state(directory, target)
        project = load_project(project_root)
        hist = history or open_history(project.entry(target))
        try:
            drop_state(directory, hist.repo)
        finally:
            hist.close()
    return directory


def _require_state(directory: Path, target: str) -> RebaseState:
    state = load_state(directory)
    if state is None:
        raise ConfigError(
            f"no rebase of {target} is in progress: nothing to continue or abort",
            hint=f"start one with `patchkit rebase --target {target} --onto VERSION`",
        )
    return state


def _open(project: Project, target: str, history: History | None, directory: Path) -> _Run:
    entry = project.entry(target)
    hist = history or open_history(entry)
    # Every patch is carried, opt-in ones too; those upstream merged (retired) stay retired.
    patches = [p for p in project.listed(target) if p.status is not UpstreamStatus.MERGED]
    old = hist.start()
    hist.commit(old)  # the pinned base: its blobs are the three-way merges' base
    blobs = Blobs([hist.repo.path])
    return _Run(project, entry, patches, hist, blobs, old, old, directory)


def _close(run: _Run, owns_history: bool) -> None:
    run.blobs.close()
    if owns_history:
        run.history.close()


def carried(outcome: Outcome) -> bool:
    """The patch's change is on the new upstream: applied, carried, upstreamed, or what
    upstream had not taken carried over what it had (the refreshed patch holds the rest)."""
    return outcome.ok or outcome is Outcome.PARTLY_UPSTREAMED


@dataclass
class HistoryFinder:
    """Where moved code went between the pinned and the new upstream commit: git's renames,
    files of the new commit holding a scope's first line. Asked only when a file or a scope
    is gone."""

    repo: GitRepo
    old: str
    new: str
    _renames: dict[str, str] | None = None

    def renamed(self, path: str) -> str | None:
        if self._renames is None:
            self._renames = self.repo.renames(self.old, self.new)
        return self._renames.get(path)

    def files_with(self, text: str, patterns: Sequence[str]) -> list[str]:
        return self.repo.files_with(text, patterns, rev=self.new)


# -- running the series on the new upstream ---------------------------------------------------
def _evaluate(run: _Run, manual: dict[str, dict[str, bytes | None]]) -> list[_Eval]:
    commit = run.history.commit(run.new)
    repo = run.history.repo
    overlay = Overlay(read_at(repo, commit), _modes_at(repo, commit), listing=list_at(repo, commit))
    finder = HistoryFinder(repo, run.history.commit(run.old), commit)
    evals = []
    for meta in run.patches:
        before = {p: overlay.read(p) for p in _paths(meta)}
        if meta.id in manual:
            result = manual_result(meta.id, before, manual[meta.id])
        else:
            result = run_patch(
                meta, overlay.read, run.blobs, overlay.lister, explain=run.explain, finder=finder
            )
        for change in result.changes:  # a rewrite may find its code moved to other files
            before.setdefault(change.path, overlay.read(change.path))
        deltas = tuple(change_deltas(result.changes, overlay))
        evals.append(_Eval(meta, result, deltas, before, meta.id in manual))
        if carried(result.outcome):
            for change in result.changes:
                overlay.put(change)
    return evals


def _modes_at(repo: GitRepo, commit: str) -> Callable[[str], int | None]:
    """File modes of ``commit`` (regular files; None for others and for missing paths)."""

    @functools.cache
    def mode(path: str) -> int | None:
        found = repo.ls_tree(commit, [path]).get(path)
        return int(found[0], 8) if found and found[0] in ("100644", "100755") else None

    return mode


def _paths(meta: PatchMeta) -> list[str]:
    try:
        return touched_paths(meta)
    except PatchkitError:
        return []  # run_patch reports the broken patch as FAILED


def _worktree_fixes(run: _Run, stopped: Sequence[str]) -> dict[str, dict[str, bytes | None]]:
    tree = Tree(worktree_of(run.directory), run.directory / "state", run.entry.name)
    diffs = [m for m in run.patches if m.id in stopped and m.kind is PatchKind.DIFF]
    return worktree_fixes(tree, {m.id: _paths(m) for m in diffs})


# -- judging ----------------------------------------------------------------------------------
def _unchanged(run: _Run, paths: Sequence[str]) -> bool:
    """The files are the same blobs in the old and the new upstream."""
    history = run.history
    return same_files(history.repo, history.commit(run.old), history.commit(run.new), paths)


def _judge(run: _Run, ev: _Eval, prober: Callable[[], Prober]) -> PatchRebase:
    result = ev.result
    outcome = result.outcome
    if outcome is Outcome.APPLIED and not _unchanged(run, list(ev.before)):
        outcome = Outcome.CARRIED
    step = MANUAL if ev.manual else result.step.value
    found = _bisected(run, ev.meta.id, outcome, prober)
    details, message = result.details, result.message
    if found.outcome == Outcome.UPSTREAMED.value and not carried(outcome):
        # Never retired from history alone: upstream may have dropped the fix again.
        message = (
            f"upstream absorbed the change in {found.absorbed_by}, then changed that code "
            f"again in {found.broken_by}, where the patch no longer recognises it: if the fix "
            'is still there, retire the patch (status = "merged"); if not, fix the patch'
        )
    moved = outcome in (Outcome.CARRIED, Outcome.PARTLY_UPSTREAMED)
    refreshed = moved and _new_diff(ev) is not None
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
    )


def _bisected(run: _Run, patch_id: str, outcome: Outcome, prober: Callable[[], Prober]) -> Bisected:
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
        outcome=verdict.outcome.value,
    )
    run.found[patch_id] = found
    return found


def _new_diff(ev: _Eval) -> bytes | None:
    """The refreshed diff of a carried diff patch; None when it would not change."""
    if ev.meta.kind is not PatchKind.DIFF:
        return None  # rewrites re-run; they are never rewritten
    diff = unified_diff(ev.deltas)
    return diff if diff != ev.meta.file.read_bytes() else None


def _judge_all(run: _Run, evals: Sequence[_Eval]) -> list[PatchRebase]:
    cache: list[Prober] = []

    def prober() -> Prober:
        if not cache:
            cache.append(Prober(run.history, run.patches, run.blobs))
        return cache[0]

    judged = [_judge(run, ev, prober) for ev in evals]
    run.points += len(cache[0].runs) if cache else 0
    return judged


# -- finishing or stopping --------------------------------------------------------------------
def _conclude(run: _Run, state: RebaseState, evals: list[_Eval]) -> RebaseReport:
    judged = _judge_all(run, evals)
    done = all(carried(p.outcome) for p in judged) or state.allow_pending
    report = RebaseReport(
        target=run.entry.name,
        from_version=run.entry.version,
        onto=run.label,
        commit=run.history.lock_commit(run.new),
        patches=tuple(judged),
        lock_moved=done,
        stopped=not done,
        points=run.points,
    )
    if done:
        _publish(run, evals, judged, report.commit)
        drop_state(run.directory, run.history.repo)
        return report
    return _stop(run, state, evals, report)


def _stop(run: _Run, state: RebaseState, evals: list[_Eval], report: RebaseReport) -> RebaseReport:
    stopped = [p.id for p in report.patches if not carried(p.outcome)]
    files = [{**ev.before, **{c.path: c.content for c in ev.result.conflicted}} for ev in evals]
    kept = [f for f, ev in zip(files, evals, strict=True) if ev.meta.id in stopped]
    tree = _fresh_worktree(run, sorted({path for f in kept for path in f}))
    write_conflicted(tree, kept)
    state = replace(state, stopped=stopped, found=run.found, points=run.points)
    save_state(run.directory, state)
    report = replace(report, worktree=tree.root)
    return replace(report, report=write_report(run.directory, report))


def _fresh_worktree(run: _Run, paths: list[str]) -> Tree:
    """The worktree left for a person: sparse, holding only the stopped patches' files."""
    path = worktree_of(run.directory)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        run.history.repo.add_worktree(path, run.history.commit(run.new), only=paths)
    return Tree(path, run.directory / "state", run.entry.name)


def _publish(run: _Run, evals: Sequence[_Eval], judged: Sequence[PatchRebase], commit: str) -> None:
    files: dict[Path, bytes] = {}
    for ev, patch in zip(evals, judged, strict=True):
        diff = _new_diff(ev) if patch.refreshed else None
        if diff is not None:
            files[ev.meta.file] = diff
        meta = meta_text(ev.meta, patch, run.label)
        if meta is not None:
            files[ev.meta.meta_file] = meta.encode()
    new_tree = read_at(run.history.repo, run.history.commit(run.new))
    pins = pins_in(new_tree, run.entry.name)
    publish(files, run.project.lock.path, run.entry.name, run.label, commit, pins)


# -- the command line -------------------------------------------------------------------------
