"""``patchkit rebase``: carry a target's patches onto a moved upstream, all or nothing.

Every patch runs on the new upstream (read from the cache's history, never the user's tree)
through the engines' chain: exact → unique context / probe → three-way from the pinned base
blobs, or the rewrite re-run. Outcomes: ``applied`` (its files did not change upstream),
``carried`` (refreshed), ``upstreamed`` (retired, with the release that absorbed it), or a stop
for a person. Bisection names the first release where a patch broke or was absorbed.

Here: the verb's three entry points, each a typed function that takes the project's lock and
hands the wing (:mod:`patchkit.rebasing.session`) the project and the fresh-tree
apply and tests a ``--verify`` runs (the ``apply`` and ``verify`` verbs). The project's files
(patches, metadata, ``upstream.lock``) change only at the end, together.
A stop leaves a worktree with conflict markers and a report under the cache; ``--continue``
records the person's fixes from that worktree, ``--abort`` forgets it all. ``--with-pins``
(:func:`rebase_with_pins`) also moves the targets the new release pins, as one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from patchkit import progress
from patchkit.errors import PatchkitError, RebaseStopped, VerificationFailed
from patchkit.model import Lock, LockEntry, PatchMeta
from patchkit.ops.apply_tree import apply
from patchkit.ops.context import blobs_for
from patchkit.ops.verify import verify_applied
from patchkit.project.load import Project, load_project
from patchkit.project.lock import find_lock, load_lock, pins_to_move
from patchkit.project.writer import project_files, project_lock, restore
from patchkit.rebasing.conflicts import RebaseState
from patchkit.rebasing.report import RebaseReport, stop_hint, tests_hint
from patchkit.rebasing.session import abort, resume, start
from patchkit.upstream.history import History, Point
from patchkit.upstream.sources import UpstreamRepo, fetch
from patchkit.verification.run import VerifyReport
from patchkit.workspace.tree import checkout_tree


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
        tests = _fresh_tree_tests
        return start(project, target, onto, state, history=history, explain=explain, tests=tests)


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
        tests = _fresh_tree_tests
        return resume(
            project_root, target, allow_pending=allow_pending, history=history, tests=tests
        )


def abort_rebase(*, project_root: Path, target: str, history: History | None = None) -> Path:
    """Drop a stopped rebase: its worktree and state. The project was never touched."""
    with project_lock(project_root, command="rebase"):
        return abort(project_root, target, history)


# -- rebase --with-pins: a target and the targets its new release pins, one transaction ----
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
    saved = project_files(project.root)
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
            restore(project.root, saved, command="rebase")
            return PinnedRebase(tuple(reports), rolled_back=True)
        moved = load_project(project.root, sets)
    return PinnedRebase(tuple(reports))


# -- what a finished rebase tells the person: its stop, its warning ----------------------------
def rebase_stop(report: RebaseReport) -> PatchkitError | None:
    """What ends the command once the report is shown: the carried patches' tests failing with
    the lock kept where it was, or patches a person must carry; None when the rebase ended."""
    if report.verify_failed and report.proof is not None and not report.lock_moved:
        return VerificationFailed(
            f"the carried patches' tests fail on {report.target} {report.onto}, so the "
            f"lock stays at {report.from_version}:\n  {_failures(report)}",
            hint=tests_hint(report) + f"; or `patchkit rebase --target {report.target} "
            f"--abort` (report: {report.report})",
        )
    if report.stopped:
        stopped = [p for p in report.patches if not p.outcome.carried]
        return RebaseStopped(
            f"rebase of {report.target} onto {report.onto} stopped at "
            f"{', '.join(f'{p.id} ({p.shown})' for p in stopped)}; report: {report.report}",
            hint="; ".join(f"{p.id}: {stop_hint(report, p)}" for p in stopped)
            + f"; or `patchkit rebase --target {report.target} --abort`",
        )
    return None


def rebase_warning(report: RebaseReport) -> str | None:
    """The lock moved (``--allow-pending``) although the carried patches' tests fail there."""
    if report.verify_failed and report.proof is not None and report.lock_moved:
        return (
            f"the lock moved to {report.onto} (--allow-pending) although these tests fail "
            f"there:\n  {_failures(report)}"
        )
    return None


def _failures(report: RebaseReport) -> str:
    return "\n  ".join(report.proof.failures()) if report.proof else ""


def pinned_stop(done: PinnedRebase, *, target: str, onto: str) -> RebaseStopped | None:
    """A ``--with-pins`` rebase rolled back because a pinned target stopped: what to do."""
    if not done.rolled_back:
        return None
    last = done.reports[-1]
    return RebaseStopped(
        f"rebase of {last.target} onto {last.onto} (pinned by {target}) stopped, so "
        f"no lock moved: {target} stays at its locked release too",
        hint=f"fix {last.target} (`patchkit rebase --target {last.target} --continue`, "
        f"report: {last.report}), then run `patchkit rebase --target {target} --onto "
        f"{onto} --with-pins` again",
    )


def said_pin_drift(project_root: Path) -> None:
    """The moved lock read again, so a pin drift the rebase made is said now, once."""
    load_lock(find_lock(project_root))


def changed_patches(report: RebaseReport) -> list[str]:
    """The patches whose change the rebase moved or merged: their proof is now out of date."""
    return [p.id for p in report.patches if p.outcome.moved]


# -- what the verb hands the wing: the verbs a --verify rebase runs ---------------------------
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
