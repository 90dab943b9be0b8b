"""``patchkit verify``: each patch proven by its own tests, against the patched tree, recorded.

A patch's metadata names its tests (``TestSpec``). Each patch's tests run in a pytest subprocess
of their own (one per kind of test: shipped with the set, or upstream's in the tree), with the
patched tree first on ``PYTHONPATH`` and a JUnit XML report read back, so the outcome is exact:
every case passed -> passed; any failure or error -> failed; all skipped -> not run, with the skip
reasons ("dependency missing: torch", "no GPU"). GPU tests are not even started on a machine
without a GPU, or with too low a compute capability. Every run is recorded beside its set
(``verify_records``) with where it ran (``verify_env``).

Runners (``verify_env.Runner``: ``run(TestJob) -> JobResult``) can be swapped for a backend
that spreads the jobs over GPU hosts; ``LocalRunner`` runs them here.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from patchkit.model import Lock, PatchMeta, TestSpec
from patchkit.project.lock import target as lock_target
from patchkit.project.sets import patch_digest
from patchkit.verification.env import (
    CaseResult,
    Environment,
    JobResult,
    Runner,
    TestJob,
    capability_text,
    environment_problem,
    parse_junit,
    skip_reason,
)
from patchkit.verification.records import (
    Record,
    TestRecord,
    set_root_of,
)


class Result(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not run"


@dataclass(frozen=True)
class TestOutcome:
    node: str
    where: str
    result: Result
    reason: str = ""
    cases: tuple[CaseResult, ...] = ()

    def count(self, *outcomes: str) -> int:
        return sum(c.outcome in outcomes for c in self.cases)


@dataclass(frozen=True)
class PatchVerdict:
    patch_id: str
    set_name: str
    digest: str  # of the patch file when its tests ran
    result: Result
    reason: str
    tests: tuple[TestOutcome, ...]
    duration_s: float = 0.0


@dataclass(frozen=True)
class VerifyReport:
    environment: Environment
    verdicts: tuple[PatchVerdict, ...]
    records: tuple[Record, ...] = ()
    written: tuple[Path, ...] = ()  # the records files updated

    def having(self, result: Result) -> tuple[PatchVerdict, ...]:
        return tuple(v for v in self.verdicts if v.result is result)

    def to_json(self) -> dict[str, object]:
        return {
            "environment": self.environment.to_json(),
            "patches": [r.to_json() for r in self.records]
            or [
                {"patch": v.patch_id, "result": v.result.value, "reason": v.reason}
                for v in self.verdicts
            ],
            "recorded_in": [str(p) for p in self.written],
        }


def _belongs(case_node: str, spec_node: str) -> bool:
    spec = spec_node.rstrip("/")
    module = spec.split("::")[0]
    return (
        case_node in (spec, module)  # a whole module skipped at import counts for its tests
        or case_node.startswith((f"{spec}::", f"{spec}[", f"{spec}/"))
    )


# -- from cases to outcomes -------------------------------------------------------------------


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def _job_broke(spec: TestSpec, job: JobResult) -> TestOutcome:
    why = job.error or f"pytest exited {job.returncode}: {_last_line(job.output)}"
    return TestOutcome(spec.node, spec.where, Result.FAILED, why)


def _any_failed(cases: Sequence[CaseResult]) -> bool:
    return any(c.outcome in ("failed", "error") for c in cases)


def spec_outcome(spec: TestSpec, cases: Sequence[CaseResult], job: JobResult) -> TestOutcome:
    mine = tuple(c for c in cases if _belongs(c.node, spec.node))
    unavailable = environment_problem(
        job.output, [c.message for c in cases if c.outcome == "error"]
    )
    if unavailable and not any(c.outcome == "failed" for c in mine):
        return TestOutcome(spec.node, spec.where, Result.NOT_RUN, unavailable, mine)
    if not mine or job.error:
        return _job_broke(spec, job)
    bad = [c for c in mine if c.outcome in ("failed", "error")]
    if bad:
        why = f"{len(bad)} of {len(mine)} failed: {bad[0].node}: {_first_line(bad[0].message)}"
        return TestOutcome(spec.node, spec.where, Result.FAILED, why, mine)
    all_skipped = all(c.outcome == "skipped" for c in mine)
    # 5: no tests ran; 4 with only skips: a module skipped at import before its test was found
    if (
        job.returncode not in (0, 5)
        and not (job.returncode == 4 and all_skipped)
        and not _any_failed(cases)
    ):
        return TestOutcome(spec.node, spec.where, Result.FAILED, _job_broke(spec, job).reason, mine)
    skips = _unique([skip_reason(c.message) for c in mine if c.outcome == "skipped"])
    if len(skips) and all(c.outcome == "skipped" for c in mine):
        return TestOutcome(spec.node, spec.where, Result.NOT_RUN, "; ".join(skips), mine)
    note = (
        f"{sum(c.outcome == 'skipped' for c in mine)} skipped: {'; '.join(skips)}" if skips else ""
    )
    return TestOutcome(spec.node, spec.where, Result.PASSED, note, mine)


def combine(outcomes: Sequence[TestOutcome]) -> tuple[Result, str]:
    if not outcomes:
        return Result.NOT_RUN, "no tests declared"
    failed = [o for o in outcomes if o.result is Result.FAILED]
    if failed:
        return Result.FAILED, "; ".join(f"{o.node}: {o.reason}" for o in failed)
    not_run = [o for o in outcomes if o.result is Result.NOT_RUN]
    reasons = "; ".join(_unique([o.reason for o in not_run]))
    if len(not_run) == len(outcomes):
        return Result.NOT_RUN, reasons
    if not_run:
        return Result.PASSED, f"{len(not_run)} of {len(outcomes)} tests not run: {reasons}"
    return Result.PASSED, "; ".join(o.reason for o in outcomes if o.reason)


# -- one patch --------------------------------------------------------------------------------


def gate(spec: TestSpec, env: Environment) -> str | None:
    """Why ``spec`` cannot run in ``env`` at all, or None."""
    if spec.gpu and env.gpu is None:
        return "no GPU"
    need, have = spec.min_capability, env.capability
    if need is not None and have is not None and have < need:
        return f"compute capability {capability_text(have)} < {capability_text(need)}"
    return None


@dataclass(frozen=True)
class _Context:
    tree_root: Path
    python: str
    env: Environment
    runner: Runner
    timeout_s: float
    has_upstream_tests: bool = True  # an installed package ships no upstream test suite
    unpatched: bool = False  # the tree is the unpatched one: a test it lacks is not run


def _root(spec: TestSpec, meta: PatchMeta, ctx: _Context) -> Path:
    return ctx.tree_root if spec.where == "upstream" else set_root_of(meta)


def _job(meta: PatchMeta, specs: Sequence[TestSpec], ctx: _Context) -> TestJob:
    first = specs[0]
    caps = [s.min_capability for s in specs if s.min_capability]
    return TestJob(
        patch_id=meta.id,
        nodes=tuple(s.node for s in specs),
        rootdir=_root(first, meta, ctx),
        python=ctx.python,
        pythonpath=(ctx.tree_root,),
        noconftest=first.where == "upstream",
        gpu=any(s.gpu for s in specs),
        min_capability=max(caps) if caps else None,
        timeout_s=ctx.timeout_s,
    )


def _precheck(spec: TestSpec, meta: PatchMeta, ctx: _Context) -> TestOutcome | None:
    why = gate(spec, ctx.env)
    if spec.where == "upstream" and not ctx.has_upstream_tests:
        why = "upstream tests are not part of an installed package: verify a checkout"
    if why:
        return TestOutcome(spec.node, spec.where, Result.NOT_RUN, why)
    path = _root(spec, meta, ctx) / spec.node.split("::")[0]
    if not path.exists() and ctx.unpatched:
        return TestOutcome(spec.node, spec.where, Result.NOT_RUN, "not in the unpatched tree")
    if not path.exists():
        return TestOutcome(spec.node, spec.where, Result.FAILED, f"no such test: {path}")
    return None


def verify_patch(meta: PatchMeta, ctx: _Context) -> PatchVerdict:
    digest = patch_digest(meta)
    outcomes: dict[TestSpec, TestOutcome] = {}
    groups: dict[str, list[TestSpec]] = {}
    for spec in meta.tests:
        early = _precheck(spec, meta, ctx)
        if early is not None:
            outcomes[spec] = early
        else:
            groups.setdefault(spec.where, []).append(spec)
    duration = 0.0
    for specs in groups.values():
        job = ctx.runner.run(_job(meta, specs, ctx))
        duration += job.duration_s
        cases = parse_junit(job.junit_xml) if job.junit_xml else []
        outcomes.update({s: spec_outcome(s, cases, job) for s in specs})
    ordered = tuple(outcomes[s] for s in meta.tests)
    result, reason = combine(ordered)
    return PatchVerdict(meta.id, meta.set_name, digest, result, reason, ordered, duration)


# -- the verb ---------------------------------------------------------------------------------


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def test_records(verdict: PatchVerdict) -> tuple[TestRecord, ...]:
    return tuple(
        TestRecord(
            o.node,
            o.where,
            o.result.value,
            o.reason,
            passed=o.count("passed"),
            failed=o.count("failed", "error"),
            skipped=o.count("skipped"),
        )
        for o in verdict.tests
    )


def to_record(
    meta: PatchMeta,
    verdict: PatchVerdict,
    lock: Lock,
    env: Environment,
    tree_commit: str | None,
    when: datetime,
) -> Record:
    entry = lock_target(lock, meta.target)
    tests = test_records(verdict)
    return Record(
        patch=meta.id,
        digest=verdict.digest,
        target=meta.target,
        lock_commit=entry.commit,
        lock_version=entry.version,
        tree_commit=tree_commit,
        result=verdict.result.value,
        reason=verdict.reason,
        tests=tests,
        environment=env,
        time=when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        duration_s=round(verdict.duration_s, 1),
    )
