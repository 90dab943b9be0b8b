"""``patchkit rebase``: carry a target's patches onto a moved upstream, all or nothing.

Every patch runs on the new upstream (read from the cache's history, never the user's tree)
through the engines' chain: exact → unique context / probe → three-way from the pinned base
blobs, or the rewrite re-run. Outcomes: ``applied`` (its files did not change upstream),
``carried`` (refreshed), ``upstreamed`` (retired, with the release that absorbed it), or a stop
for a person. Bisection names the first release where a patch broke or was absorbed.

Here: the verb's three entry points and how a run ends; the run itself (series and judging)
is :mod:`patchkit.rebasing.run`, the worktree, state and report of a stop
:mod:`patchkit.rebasing.conflicts`. The project's files (patches, metadata,
``upstream.lock``) change only at the end, together.
A stop leaves a worktree with conflict markers and a report under the cache; ``--continue``
records the person's fixes from that worktree, ``--abort`` forgets it all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from patchkit import progress
from patchkit.engine.series import Blobs
from patchkit.errors import ConfigError, RebaseStopped
from patchkit.model import Lock, LockEntry, Outcome, PatchMeta, UpstreamStatus
from patchkit.ops.apply import apply
from patchkit.ops.context import Project, blobs_for, load_project
from patchkit.ops.verify import verify_applied
from patchkit.project.lock import move_lock
from patchkit.project.writer import project_lock
from patchkit.rebasing.conflicts import (
    PatchRebase,
    RebaseReport,
    RebaseState,
    drop_state,
    load_state,
    meta_text,
    save_state,
    state_dir,
    worktree_of,
    write_conflicted,
)
from patchkit.rebasing.report import write_report
from patchkit.rebasing.run import (
    CHANGED,
    Eval,
    Run,
    evaluate,
    fixes_from_worktree,
    judge_all,
    new_diff,
)
from patchkit.rebasing.verify import Proof, moved_lock, verify_carried
from patchkit.targets import pins_in
from patchkit.upstream.history import History, Point, open_history, read_at
from patchkit.upstream.sources import UpstreamRepo, fetch
from patchkit.verification.run import VerifyReport
from patchkit.workspace.tree import Tree, checkout_tree


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
    verify: bool = False,
    python: str | None = None,
) -> RebaseReport:
    """Move ``target``'s patches and lock onto ``onto`` (release version, tag, commit);
    ``explain`` names the scope path of every hunk's place. With ``verify``, the lock moves
    only once the carried patches' tests passed on the new release (run with ``python``), or
    with ``allow_pending``, which the report's ``proof`` then shows failed."""
    with project_lock(project.root, command="rebase"):
        base = RebaseState(str(project.root), target, sets, Point("", ""), allow_pending, [])
        state = replace(base, verify=verify, python=python)
        return _rebase(project, target, onto, history, state, explain)


def _rebase(
    project: Project,
    target: str,
    onto: str,
    history: History | None,
    state: RebaseState,
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
    state = replace(state, onto=run.new)
    try:
        return _conclude(run, state, evaluate(run, {}))
    finally:
        _close(run, history is None)


def continue_rebase(
    *,
    project_root: Path,
    target: str,
    history: History | None = None,
    allow_pending: bool | None = None,
) -> RebaseReport:
    """Record the fixed patches from the worktree, then finish (or stop again);
    ``allow_pending`` overrides what the rebase was started with."""
    with project_lock(project_root, command="rebase"):
        return _continue(project_root, target, history, allow_pending)


def _continue(
    project_root: Path, target: str, history: History | None, allow_pending: bool | None
) -> RebaseReport:
    directory = state_dir(project_root, target)
    state = _require_state(directory, target)
    if allow_pending is not None:
        state = replace(state, allow_pending=allow_pending)
    project = load_project(project_root, state.sets)
    run = _open(project, target, history, directory)
    run.new, run.found, run.points = state.onto, dict(state.found), state.points
    try:
        manual = fixes_from_worktree(run, state.stopped)
        return _conclude(run, state, evaluate(run, manual))
    finally:
        _close(run, history is None)


def abort_rebase(*, project_root: Path, target: str, history: History | None = None) -> Path:
    """Drop a stopped rebase: its worktree and state. The project was never touched."""
    directory = state_dir(project_root, target)
    with project_lock(project_root, command="rebase"):
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


def _open(project: Project, target: str, history: History | None, directory: Path) -> Run:
    entry = project.entry(target)
    hist = history or open_history(entry)
    # Every patch is carried, opt-in ones too; those upstream merged (retired) stay retired.
    patches = [p for p in project.listed(target) if p.status is not UpstreamStatus.MERGED]
    old = hist.start()
    hist.commit(old)  # the pinned base: its blobs are the three-way merges' base
    blobs = Blobs([hist.repo.path])
    return Run(project.root, project.lock, entry, patches, hist, blobs, old, old, directory)


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
    changed = [p.id for p in report.patches if p.outcome in CHANGED]
    return verify_carried(
        tests=_fresh_tree_tests,
        lock=lock,
        target=run.entry.name,
        series=series,
        refreshed=files,
        changed=changed,
        python=state.python,
    )


def _fresh_tree_tests(
    lock: Lock,
    entry: LockEntry,
    patches: list[PatchMeta],
    changed: Sequence[str],
    tmp: Path,
    python: str | None,
) -> VerifyReport:
    """``patches`` applied to a fresh tree of ``entry``'s release under ``tmp`` and the tests
    of ``changed`` run there, by the ``apply`` and ``verify`` verbs."""
    with UpstreamRepo(entry.name) as repo:
        path = fetch(entry, into=tmp / entry.name).path
        try:
            tree = checkout_tree(path, entry.name)
            blobs = blobs_for(entry, tree)
            try:
                apply(tree=tree, entry=entry, patches=patches, blobs=blobs)
            finally:
                blobs.close()
            verified = [p for p in patches if p.id in changed]
            with progress.step(f"verifying {', '.join(changed)} on {entry.name} {entry.version}"):
                return verify_applied(tree=tree, lock=lock, patches=verified, python=python)
        finally:
            repo.remove_tree(path)


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
