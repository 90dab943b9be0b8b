"""``patchkit verify``: run each patch's tests against the patched tree (``verify.run``) and record
the outcome (``verify.records``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from patchkit import progress
from patchkit.errors import TreeError, VerificationFailed
from patchkit.model import Lock, PatchMeta
from patchkit.ops.context import CACHED, Where, open_tree
from patchkit.ops.status import PatchState, status
from patchkit.ops.verify_bench import Bench, Unpatched, bench_with
from patchkit.project.load import Project
from patchkit.verification.env import (
    DEFAULT_TIMEOUT_S,
    Environment,
    LocalRunner,
    Runner,
    probe_environment,
)
from patchkit.verification.proof import Proof, judge, reusable, tests_digest
from patchkit.verification.records import (
    BenchRecord,
    Record,
    TestRecord,
    add_records,
    load_records,
    record_in_state,
    set_root_of,
)
from patchkit.verification.run import (
    Result,
    VerifyReport,
    _Context,
    _utcnow,
    test_records,
    to_record,
    verify_patch,
)
from patchkit.workspace.installed import InstalledTree
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
    unpatched: Unpatched | None = None,
) -> VerifyReport:
    """Run each patch's declared tests against the patched tree at ``tree_root`` and, to prove
    it, against the ``unpatched`` tree (``verification.proof``).

    Outcomes are values; nothing raises for a failed test (see ``raise_for``). With ``record``,
    each patch's result is kept: in patchkit's cache, or with ``tracked`` in the set's
    ``verification.json`` (committed by choice). With ``bench`` (``ops.verify_bench.bench_with``),
    each patch's benchmark figures go into its record. The unpatched run is skipped where an
    earlier record of the same patch, tests, lock and environment kind holds one.
    """
    python = python or sys.executable
    env = environment or probe_environment(python)
    ctx = _Context(tree_root.resolve(), python, env, runner, timeout_s, has_upstream_tests)
    verdicts, records = [], []
    for meta in progress.steps(patches, "verifying", lambda m: m.id):
        verdict = verify_patch(meta, ctx)
        verdicts.append(verdict)
        found = to_record(meta, verdict, lock, env, tree_commit, clock())
        found = _proved(meta, found, ctx, unpatched, clock)
        records.append(replace(found, bench=bench(meta)) if bench and meta.benches else found)
    written = _write(patches, records, tracked) if record else ()
    return VerifyReport(env, tuple(verdicts), tuple(records), written)


def _proved(
    meta: PatchMeta,
    found: Record,
    ctx: _Context,
    unpatched: Unpatched | None,
    clock: Callable[[], datetime],
) -> Record:
    """``found`` with its proof: its tests' results on the unpatched tree, run now or reused
    from an earlier record of the same patch file, tests, lock and environment kind."""
    tests = tests_digest(meta, set_root_of(meta))
    without: tuple[TestRecord, ...] = ()
    when, why = "", ""
    if any(t.result == "passed" for t in found.tests) and found.result == "passed":
        known = [r for r in load_records(set_root_of(meta)) if r.patch == meta.id]
        kind = found.environment.kind
        old = reusable(
            known, digest=found.digest, lock_commit=found.lock_commit, tests=tests, kind=kind
        )
        if old is not None:
            without, when = old.unpatched, old.unpatched_time or old.time
        else:
            without, when, why = _run_unpatched(meta, ctx, unpatched, clock)
    verdict = judge(found.tests, without)
    reason = (
        f"{verdict.reason} ({why})" if why and verdict.proof is Proof.NOT_RUN else verdict.reason
    )
    return replace(
        found,
        proof=verdict.proof.value,
        proof_reason=reason,
        unpatched=without,
        unpatched_time=when,
        tests_digest=tests,
    )


def _run_unpatched(
    meta: PatchMeta, ctx: _Context, unpatched: Unpatched | None, clock: Callable[[], datetime]
) -> tuple[tuple[TestRecord, ...], str, str]:
    """The patch's tests on the unpatched tree, when they ran, and why not where there is none."""
    path = unpatched.path() if unpatched is not None else None
    if path is None:
        return (), "", unpatched.why if unpatched is not None else "no unpatched tree given"
    verdict = verify_patch(meta, replace(ctx, tree_root=path.resolve(), unpatched=True))
    when = clock().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return test_records(verdict), when, ""


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
    with contextlib.ExitStack() as stack:
        report = verify(
            tree_root=tree.root,
            patches=patches,
            lock=lock,
            runner=runner or LocalRunner(),
            python=python,
            environment=environment,
            tree_commit=tree_commit(tree),
            has_upstream_tests=not isinstance(tree, InstalledTree),
            record=record,
            tracked=tracked,
            timeout_s=timeout_s,
            unpatched=Unpatched(stack, tree, None),
        )
    record_in_state(tree.state_dir, report.records)
    return report


def raise_for(report: VerifyReport, *, strict: bool = False) -> None:
    """VerificationFailed (exit 7) when a patch failed, or with ``strict`` was not run or not
    proven (its tests pass without it too, or could not run without it)."""
    failed = report.having(Result.FAILED)
    if failed:
        raise VerificationFailed(
            f"verification failed for {', '.join(v.patch_id for v in failed)}",
            hint="see the report above: fix the patch or its test, apply again, then "
            "`patchkit verify` (the failure is recorded with the set's runs: `patchkit status`)",
        )
    unproven = [r for r in report.records if r.result == "passed" and r.proof != Proof.PROVEN.value]
    if strict and unproven:
        raise VerificationFailed(
            "not proven: " + "; ".join(f"{r.patch} {r.proof} ({r.proof_reason})" for r in unproven),
            hint="a patch's tests must fail without it: add a test that reaches the changed "
            "code, or run where the unpatched tree can run them; or drop --strict",
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


def _bench(unpatched: Unpatched, tree: Tree, python: str) -> Bench:
    """Timing on the unpatched tree (``--baseline``, or a worktree of the tree's commit)
    against ``tree``."""
    before = unpatched.required()
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
    tree ``where`` names, which must have them applied, and against the unpatched tree
    (``baseline``, or a worktree at the tree's commit) to prove them. With ``bench``, also time
    each patch's ``[[bench]]`` on the unpatched tree against the patched one."""
    entry = project.entry(target)
    patches = project.patches(target, include=tuple(include), only=tuple(only))
    tree = open_tree(entry, where)
    _require_applied(tree, patches)
    python = python or sys.executable
    with contextlib.ExitStack() as stack:
        unpatched = Unpatched(stack, tree, baseline)
        timed = _bench(unpatched, tree, python) if bench else None
        return verify(
            tree_root=tree.root,
            patches=patches,
            lock=project.lock,
            runner=LocalRunner(),
            python=python,
            tree_commit=tree_commit(tree),
            has_upstream_tests=not isinstance(tree, InstalledTree),
            record=record,
            tracked=tracked,
            timeout_s=timeout_s,
            bench=timed,
            unpatched=unpatched,
        )
