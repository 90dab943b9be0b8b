"""What the PR text may claim about testing: exactly what ran where, read from the set's tracked
verification records (``patchsets/<set>/verification.json``, the same on every machine), and
what did not run: the hardware the change is for (``[pr] hardware``, compute capabilities) that
no record comes from. A result from an H100 or H200 is never a result on SM12x."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from patchkit.errors import ConfigError
from patchkit.model import LockEntry, PatchMeta
from patchkit.project.sets import patch_digest
from patchkit.targets import commits_match
from patchkit.verification.environment import Environment
from patchkit.verification.proof import proof_text, tests_digest
from patchkit.verification.records import Record, TestRecord, set_root_of, tracked_records

log = logging.getLogger("patchkit.export.claims")


@dataclass(frozen=True)
class Run:
    """The latest run of the patch as it is now, on the pinned commit, on one kind of device."""

    device: str  # "NVIDIA H200"; "CPU only (no GPU)"
    capability: tuple[int, int] | None  # None: no GPU
    versions: str  # "driver 580.159.04, CUDA 13.0, torch 2.11.0, triton 3.6.0, Python 3.12.3"
    date: str  # "2026-11-23"
    result: str  # "passed", "failed", "not run"
    reason: str
    tests: tuple[TestRecord, ...]  # as the record holds them
    proof: str = ""  # "proven (fails without the patch: ...)", ... (verification.proof)


@dataclass(frozen=True)
class Verification:
    """Every device the current patch ran on (latest run each), and how many records were left
    out because they tested an earlier version of the patch or another upstream commit."""

    runs: tuple[Run, ...]
    stale: int = 0


def sm(capability: tuple[int, int]) -> str:
    return f"SM{capability[0]}{capability[1]}"


def _versions(env: Environment) -> str:
    labels = (("driver", "driver"), ("cuda", "CUDA"), ("torch", "torch"), ("triton", "triton"))
    parts = [f"{label} {getattr(env, name)}" for name, label in labels if getattr(env, name)]
    return ", ".join([*parts, f"Python {env.python}"] if env.python else parts)


def _counts(test: TestRecord) -> str:
    counts = (("passed", test.passed), ("failed", test.failed), ("skipped", test.skipped))
    return ", ".join(f"{n} {label}" for label, n in counts if n)


def _run(record: Record) -> Run:
    env = record.environment
    device = env.gpu or "CPU only (no GPU)"
    capability = env.capability if env.gpu else None
    said = proof_text(record)  # the reason names our own tests: it stays downstream
    proof = (
        (f"{said}: its tests fail without the change" if said == "proven" else said)
        if record.proof
        else "not proven (never run without the change)"
    )
    return Run(
        device, capability, _versions(env), record.time[:10], record.result, record.reason,
        record.tests, proof,
    )  # fmt: skip


def _current(record: Record, digest: str, tests: str, entry: LockEntry) -> bool:
    """A run of the patch as it is, at the lock, with the tests as they are (a record made
    before tests were digested counts)."""
    same_tests = record.tests_digest in ("", tests)
    return (
        record.digest == digest and same_tests and commits_match(record.lock_commit, entry.commit)
    )


def read_verification(meta: PatchMeta, entry: LockEntry) -> Verification:
    """The patch's runs from the tracked records (none: not yet verified)."""
    try:
        records = [r for r in tracked_records(set_root_of(meta)) if r.patch == meta.id]
    except ConfigError as exc:
        log.warning("%s; treating %s as not yet verified", exc.message, meta.id)
        return Verification(())
    digest, tests = patch_digest(meta), tests_digest(meta, set_root_of(meta))
    current = [r for r in records if _current(r, digest, tests, entry)]
    latest: dict[tuple[str, tuple[int, int] | None], Record] = {}
    for record in sorted(current, key=lambda r: (r.result != "not run", r.time)):
        run = _run(record)
        latest[(run.device, run.capability)] = record  # a run that ran beats a later "not run"
    newest = sorted((_run(r) for r in latest.values()), key=lambda r: (r.date, r.device))[::-1]
    runs = sorted(newest, key=lambda r: r.capability is None)  # GPUs first, newest first
    return Verification(tuple(runs), stale=len(records) - len(current))


# -- the text ------------------------------------------------------------------------------------
def _test_line(test: TestRecord) -> str:
    name = (
        f"`{test.node}`" if test.where == "upstream" else f"`{_short(test.node)}` (not in this PR)"
    )
    detail = "; ".join(x for x in (_counts(test), test.reason) if x)
    return f"  - {name}: {test.result}" + (f" ({detail})" if detail else "")


def _short(node: str) -> str:
    return node.removeprefix("tests/")


def _run_lines(run: Run) -> list[str]:
    where = run.device
    if run.capability:
        where += f" (compute capability {run.capability[0]}.{run.capability[1]})"
    versions = f"; {run.versions}" if run.versions else ""
    head = f"- {where}{versions}, {run.date}: **{run.result}**"
    head += f" ({run.reason})" if run.reason else ""
    head += f"; {run.proof}" if run.proof and run.result == "passed" else ""
    return [head, *(_test_line(t) for t in run.tests)]


def not_run_on(meta: PatchMeta, verification: Verification) -> list[tuple[int, int]]:
    """The capabilities the change is for that no run that ran comes from."""
    ran = {r.capability for r in verification.runs if r.result != "not run"}
    return [cap for cap in meta.pr_hardware if cap not in ran]


def _hardware_line(meta: PatchMeta, verification: Verification) -> str:
    missing = not_run_on(meta, verification)
    if not missing:
        return ""
    names = " or ".join(sm(cap) for cap in missing)
    gpus = sorted({sm(r.capability) for r in verification.runs if r.capability})
    shown = f": the GPU results above are from {', '.join(gpus)} only" if gpus else ""
    return f"**Not run on {names} hardware**, which this change is for{shown}."


def result_text(meta: PatchMeta, verification: Verification, tested_on: str) -> str:
    """What ran where on ``tested_on`` ("vLLM 0.19.0 (commit 2a69949bd)"), and what did not."""
    if not verification.runs:
        lines = [f"Not yet run on this version of the change at {tested_on}."]
    else:
        lines = [f"Run on {tested_on} with this change applied:", ""]
        for run in verification.runs:
            lines += _run_lines(run)
    hardware = _hardware_line(meta, verification)
    return "\n".join([*lines, *(["", hardware] if hardware else [])])
