"""``patchkit verify``: run each patch's tests against the patched tree (``verify.run``) and record
the outcome (``verify.records``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from patchkit import progress
from patchkit.errors import TreeError, VerificationFailed
from patchkit.model import Lock, PatchMeta
from patchkit.ops.context import CACHED, Project, Where, open_tree
from patchkit.ops.status import PatchState, status
from patchkit.ops.verify_bench import Bench, bench_with, unpatched_tree
from patchkit.verification.env import (
    DEFAULT_TIMEOUT_S,
    Environment,
    LocalRunner,
    Runner,
    probe_environment,
)
from patchkit.verification.records import (
    BenchRecord,
    Record,
    add_records,
    record_in_state,
    set_root_of,
)
from patchkit.verification.run import (
    Result,
    VerifyReport,
    _Context,
    _utcnow,
    to_record,
    verify_patch,
)
from patchkit.workspace.tree import Tree
from patchkit.workspace.treecheck import tree_commit


def verify(
    *,
    tree_root: Path,
    patches: Sequence[PatchMeta],
    lock: Lock,
    runner: Runner,
    python: str | None = None,
    environment: Environment | None = None,
    tree_commit: str | None = None,
    record: bool = True,
    tracked: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    clock: Callable[[], datetime] = _utcnow,
    has_upstream_tests: bool = True,
    bench: Callable[[PatchMeta], tuple[BenchRecord, ...]] | None = None,
) -> VerifyReport:
    """Run each patch's declared tests against the patched tree at ``tree_root``.

    Outcomes are values; nothing raises for a failed test (see ``raise_for``). With ``record``,
    each patch's result is kept: in patchkit's cache, or with ``tracked`` in the set's
    ``verification.json`` (committed by choice). With ``bench`` (``ops.verify_bench.bench_with``),
    each patch's benchmark figures go into its record.
    """
    python = python or sys.executable
    env = environment or probe_environment(python)
    ctx = _Context(tree_root.resolve(), python, env, runner, timeout_s, has_upstream_tests)
    verdicts, records = [], []
    for meta in progress.steps(patches, "verifying", lambda m: m.id):
        verdict = verify_patch(meta, ctx)
        verdicts.append(verdict)
        found = to_record(meta, verdict, lock, env, tree_commit, clock())
        records.append(replace(found, bench=bench(meta)) if bench and meta.benches else found)
    written = _write(patches, records, tracked) if record else ()
    return VerifyReport(env, tuple(verdicts), tuple(records), written)


def _write(
    patches: Sequence[PatchMeta], records: Sequence[Record], tracked: bool
) -> tuple[Path, ...]:
    by_set: dict[Path, list[Record]] = {}
    for meta, rec in zip(patches, records, strict=True):
        by_set.setdefault(set_root_of(meta), []).append(rec)
    return tuple(add_records(root, recs, tracked=tracked) for root, recs in by_set.items())


# -- after apply, and the command line --------------------------------------------------------


def verify_applied(
    *,
    tree: Tree,
    lock: Lock,
    patches: Sequence[PatchMeta],
    runner: Runner | None = None,
    python: str | None = None,
    environment: Environment | None = None,
    record: bool = True,
    tracked: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> VerifyReport:
    """For ``apply --verify``: verify the patches just applied to ``tree``, and keep the outcome
    in the tree's state. Returns the report; call ``raise_for`` after rendering it."""
    report = verify(
        tree_root=tree.root,
        patches=patches,
        lock=lock,
        runner=runner or LocalRunner(),
        python=python,
        environment=environment,
        tree_commit=tree_commit(tree),
        has_upstream_tests=tree.kind != "installed",
        record=record,
        tracked=tracked,
        timeout_s=timeout_s,
    )
    record_in_state(tree.state_dir, report.records)
    return report


def raise_for(report: VerifyReport, *, strict: bool = False) -> None:
    """VerificationFailed (exit 7) when a patch failed, or with ``strict`` was not run."""
    failed = report.having(Result.FAILED)
    if failed:
        raise VerificationFailed(
            f"verification failed for {', '.join(v.patch_id for v in failed)}",
            hint="see the report above: fix the patch or its test, apply again, then "
            "`patchkit verify` (the failure is recorded with the set's runs: `patchkit status`)",
        )
    not_run = report.having(Result.NOT_RUN)
    if strict and not_run:
        raise VerificationFailed(
            "not run: " + "; ".join(f"{v.patch_id} ({v.reason})" for v in not_run),
            hint="run `patchkit verify` where the tests can run (a GPU, the dependencies "
            "installed for --python), or drop --strict",
        )


def _require_applied(tree: Tree, patches: Sequence[PatchMeta]) -> None:
    ok = (PatchState.APPLIED, PatchState.UPSTREAMED)
    bad = [p for p in status(tree=tree, patches=patches).patches if p.state not in ok]
    if bad:
        raise TreeError(
            f"not verifying {tree.root}: " + ", ".join(f"{p.id} is {p.state.value}" for p in bad),
            hint=f"`patchkit apply --target {tree.target}` first (or `apply --verify`), "
            "so the tests run against the patches as they are now",
        )


def _bench(stack: contextlib.ExitStack, tree: Tree, baseline: Path | None, python: str) -> Bench:
    """Timing on ``baseline`` (or a worktree of the tree's commit, removed when ``stack``
    closes) against ``tree``."""
    before = stack.enter_context(unpatched_tree(tree, baseline))
    return bench_with(before=before, after=tree.root, env=probe_environment(python), python=python)


def verify_target(
    *,
    project: Project,
    target: str,
    where: Where = CACHED,
    include: Sequence[str] = (),
    only: Sequence[str] = (),
    python: str | None = None,
    record: bool = True,
    tracked: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    bench: bool = False,
    baseline: Path | None = None,
) -> VerifyReport:
    """Run the tests of ``target``'s patches (``only`` some; opt-ins in ``include``) against the
    tree ``where`` names, which must have them applied. With ``bench``, also time each patch's
    ``[[bench]]`` on the unpatched tree (``baseline``, or a worktree) against the patched one."""
    entry = project.entry(target)
    patches = project.patches(target, include=tuple(include), only=tuple(only))
    tree = open_tree(entry, where)
    _require_applied(tree, patches)
    python = python or sys.executable
    with contextlib.ExitStack() as stack:
        timed = _bench(stack, tree, baseline, python) if bench else None
        return verify(
            tree_root=tree.root,
            patches=patches,
            lock=project.lock,
            runner=LocalRunner(),
            python=python,
            tree_commit=tree_commit(tree),
            has_upstream_tests=tree.kind != "installed",
            record=record,
            tracked=tracked,
            timeout_s=timeout_s,
            bench=timed,
        )
