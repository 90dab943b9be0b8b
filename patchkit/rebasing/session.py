"""One rebase from its start to its end or its stop, and its ``--continue``: the series run and
judged on the new upstream (:mod:`.run`), the carried series verified there (:mod:`.verify`),
then either the project's files written together (the lock moves) or the rebase kept for a
person (:mod:`.conflicts`, :mod:`.report`). The verb, :mod:`patchkit.ops.rebase`, hands in
the project with its lock held, and the fresh-tree apply and tests a ``--verify`` runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from patchkit.engine.probe import read_at
from patchkit.engine.series import Blobs
from patchkit.errors import ConfigError, RebaseStopped
from patchkit.model import PatchMeta, UpstreamStatus
from patchkit.outcome import Outcome
from patchkit.project.edits import with_history
from patchkit.project.load import Project, load_project
from patchkit.project.lock import move_lock
from patchkit.rebasing.conflicts import (
    RebaseState,
    drop_state,
    load_state,
    save_state,
    state_dir,
    worktree_of,
    write_conflicted,
)
from patchkit.rebasing.report import PatchRebase, RebaseReport, write_report
from patchkit.rebasing.run import (
    Eval,
    Run,
    evaluate,
    fixes_from_worktree,
    judge_all,
    new_diff,
)
from patchkit.rebasing.verify import FreshTests, Proof, moved_lock, verify_carried
from patchkit.targets import pins_in
from patchkit.upstream.history import History, open_history
from patchkit.workspace.tree import Tree


def start(
    project: Project,
    target: str,
    onto: str,
    state: RebaseState,
    *,
    history: History | None,
    explain: bool,
    tests: FreshTests,
) -> RebaseReport:
    """Run the rebase of ``target`` onto ``onto``; it ends (the lock moved) or stops for a
    person."""
    directory = state_dir(project.root, target)
    if load_state(directory) is not None:
        raise RebaseStopped(
            f"a rebase of {target} is already in progress ({directory})",
            hint=f"`patchkit rebase --target {target} --continue` or `--abort`",
        )
    run = _open(project, target, history, tests)
    run.new, run.explain = run.history.resolve(onto), explain
    state = replace(state, onto=run.new)
    try:
        return _conclude(run, state, evaluate(run, {}))
    finally:
        _close(run, history is None)


def resume(
    root: Path,
    target: str,
    *,
    allow_pending: bool | None,
    history: History | None,
    tests: FreshTests,
) -> RebaseReport:
    """Record the fixed patches from the worktree of a stopped rebase, then finish (or stop
    again); ``allow_pending`` overrides what the rebase was started with."""
    state = _require_state(state_dir(root, target), target)
    if allow_pending is not None:
        state = replace(state, allow_pending=allow_pending)
    run = _open(load_project(root, state.sets), target, history, tests)
    run.new, run.found, run.points = state.onto, dict(state.found), state.points
    try:
        manual = fixes_from_worktree(run, state.stopped)
        return _conclude(run, state, evaluate(run, manual))
    finally:
        _close(run, history is None)


def abort(root: Path, target: str, history: History | None) -> Path:
    """Drop a stopped rebase: its worktree and state (the project was never touched)."""
    directory = state_dir(root, target)
    _require_state(directory, target)
    hist = history or open_history(load_project(root).entry(target))
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


def _open(project: Project, target: str, history: History | None, tests: FreshTests) -> Run:
    entry = project.entry(target)
    hist = history or open_history(entry)
    # Every patch is carried, opt-in ones too; those upstream merged (retired) stay retired.
    patches = [p for p in project.listed(target) if p.status is not UpstreamStatus.MERGED]
    old = hist.start()
    hist.commit(old)  # the pinned base: its blobs are the three-way merges' base
    blobs = Blobs([hist.repo.path])
    directory = state_dir(project.root, target)
    root, lock = project.root, project.lock
    return Run(root, lock, entry, patches, hist, blobs, old, old, directory, tests)


def _close(run: Run, owns_history: bool) -> None:
    run.blobs.close()
    if owns_history:
        run.history.close()


# -- finishing or stopping --------------------------------------------------------------------
def _conclude(run: Run, state: RebaseState, evals: list[Eval]) -> RebaseReport:
    judged = judge_all(run, evals)
    done = all(p.outcome.carried for p in judged) or state.allow_pending
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
    if not done:
        return _stop(run, state, evals, report)
    files, pins = _outputs(run, evals, judged)
    if state.verify:
        report = replace(report, proof=_prove(run, state, evals, report, files, pins))
        if report.verify_failed and not state.allow_pending:
            return _stop(run, state, [], replace(report, lock_moved=False, stopped=True))
    lock = run.lock.path
    move_lock(lock, run.entry.name, version=run.label, commit=report.commit, pins=pins, files=files)
    drop_state(run.directory, run.history.repo)
    return report


def _prove(
    run: Run,
    state: RebaseState,
    evals: Sequence[Eval],
    report: RebaseReport,
    files: dict[Path, bytes],
    pins: dict[str, str],
) -> Proof:
    """The carried series, as it would be published, verified on a fresh tree of the new
    release: the tests of the patches whose change moved."""
    lock = moved_lock(run.lock, run.entry.name, run.label, report.commit, pins)
    kept = (Outcome.UPSTREAMED,)  # retired by this rebase: upstream has it
    series = [
        ev.meta
        for ev, p in zip(evals, report.patches, strict=True)
        if p.outcome.carried and p.outcome not in kept
    ]
    changed = [p.id for p in report.patches if p.outcome.moved]
    return verify_carried(
        tests=run.tests,
        lock=lock,
        target=run.entry.name,
        series=series,
        refreshed=files,
        changed=changed,
        python=state.python,
    )


def _stop(run: Run, state: RebaseState, evals: list[Eval], report: RebaseReport) -> RebaseReport:
    """Keep the rebase for a person: the stopped patches' files in a worktree (none when it
    stopped for failing tests), its state and the report."""
    stopped = [p.id for p in report.patches if not p.outcome.carried]
    files = [{**ev.before, **{c.path: c.content for c in ev.result.conflicted}} for ev in evals]
    kept = [f for f, ev in zip(files, evals, strict=True) if ev.meta.id in stopped]
    state = replace(state, stopped=stopped, found=run.found, points=run.points)
    save_state(run.directory, state)
    if kept:
        tree = _fresh_worktree(run, sorted({path for f in kept for path in f}))
        write_conflicted(tree, kept)
        report = replace(report, worktree=tree.root)
    return replace(report, report=write_report(run.directory, report))


def _fresh_worktree(run: Run, paths: list[str]) -> Tree:
    """The worktree left for a person: sparse, holding only the stopped patches' files."""
    path = worktree_of(run.directory)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        run.history.repo.add_worktree(path, run.history.commit(run.new), only=paths)
    return Tree(path, run.directory / "state", run.entry.name)


def _outputs(
    run: Run, evals: Sequence[Eval], judged: Sequence[PatchRebase]
) -> tuple[dict[Path, bytes], dict[str, str]]:
    """The project files a finished rebase writes (refreshed diffs, metadata), and the pins
    of the new release."""
    files: dict[Path, bytes] = {}
    for ev, patch in zip(evals, judged, strict=True):
        diff = new_diff(ev) if patch.refreshed else None
        if diff is not None:
            files[ev.meta.file] = diff
        meta = meta_text(ev.meta, patch, run.label)
        if meta is not None:
            files[ev.meta.meta_file] = meta.encode()
    new_tree = read_at(run.history.repo, run.history.commit(run.new))
    return files, pins_in(new_tree, run.entry.name)


def meta_text(meta: PatchMeta, patch: PatchRebase, label: str) -> str | None:
    """The patch's metadata with its new history (tomlkit: comments and layout kept); None if
    nothing changes."""
    history = {}
    if patch.absorbed_by:
        partly = patch.outcome is Outcome.PARTLY_UPSTREAMED
        history["partly_absorbed_by" if partly else "absorbed_by"] = patch.absorbed_by
    if patch.broken_by:
        history["broken_by"] = patch.broken_by
    stopped = not patch.outcome.carried
    return with_history(
        meta.meta_file.read_text(),
        merged_in=(patch.absorbed_by or label) if patch.outcome is Outcome.UPSTREAMED else None,
        history=history,
        pending=f"{patch.outcome.value} on {label}" if stopped else None,
    )
