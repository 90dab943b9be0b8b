"""``verify --bench``: each patch's ``[[bench]]`` run on the unpatched and the patched tree in one
GPU session, one worker process per tree (``bench_worker``), timed alternately
(``bench.compare``), and turned into ``BenchRecord`` values for the verification record.

Where the unpatched tree cannot run a case at all (its setup or first call raises), each of the
benchmark's fallbacks is compared instead (its arguments laid over the case's, on the unpatched
tree), and the record names it: ``compared_with = "unpatched, fallback: <label>"``, with the
unpatched tree's own error in ``reason``. With no fallback the case is "not compared".
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

import patchkit
from patchkit.model import BenchCase, BenchSpec, PatchMeta
from patchkit.verification.bench import Comparison, Plan, SampleError, Setup, Side, compare
from patchkit.verification.environment import Environment, capability_text
from patchkit.verification.records import BenchRecord, set_root_of

SETUP_TIMEOUT_S = 900.0  # imports and JIT compilation of one case
SAMPLE_TIMEOUT_S = 300.0


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


class WorkerSide:
    """A ``Side`` backed by ``python -m patchkit.verification.bench_worker`` on one tree."""

    def __init__(self, tree: Path, python: str, log: Path, *, gpu: bool = True) -> None:
        package_parent = str(Path(patchkit.__file__).resolve().parent.parent)
        paths = [str(tree), package_parent, os.environ.get("PYTHONPATH", "")]
        self.log = log
        self.cwd = tempfile.mkdtemp(prefix="patchkit-bench-")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in paths if p),
            # each side compiles its own Triton kernels: cold times compare, and neither side
            # runs what the other compiled
            "TRITON_CACHE_DIR": str(Path(self.cwd) / "triton-cache"),
        }
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [python, "-m", "patchkit.verification.bench_worker", "cuda" if gpu else "wall"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                cwd=self.cwd,
                env=env,
            )
        self.replies: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=_lines, args=(self.proc.stdout, self.replies), daemon=True).start()
        self.ready = self._read(SETUP_TIMEOUT_S)

    def _tail(self) -> str:
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def _read(self, timeout: float) -> dict[str, Any]:
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            self.close()
            return {"ok": False, "error": f"the worker did not answer in {timeout:.0f} s"}
        if line is None:
            return {"ok": False, "error": f"the worker exited: {self._tail()}"}
        answer: dict[str, Any] = json.loads(line)
        return answer

    def request(self, req: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not self.ready.get("ok") or self.proc.poll() is not None:
            return {"ok": False, "error": self.ready.get("error") or "the worker is gone"}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self._read(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write('{"op": "quit"}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


@dataclass
class BoundSide:
    """A worker with the benchmark's callable: the ``Side`` that ``compare`` times."""

    worker: WorkerSide
    file: str
    function: str
    graph: bool = True  # try CUDA graph replays (falls back to calls where capture fails)

    def setup(self, args: Mapping[str, Any], warmup: int) -> Setup:
        req = {"op": "setup", "file": self.file, "function": self.function, "graph": self.graph}
        reply = self.worker.request({**req, "args": dict(args), "warmup": warmup}, SETUP_TIMEOUT_S)
        if not reply.get("ok"):
            return Setup(False, error=str(reply.get("error", "")))
        return Setup(
            True,
            label=reply["label"],
            work=reply["work"],
            cold_s=reply["cold_s"],
            timing=reply.get("timing", ""),
        )

    def sample(self, reps: int) -> list[float]:
        reply = self.worker.request({"op": "sample", "reps": reps}, SAMPLE_TIMEOUT_S)
        if not reply.get("ok"):
            raise SampleError(f"timing failed: {reply.get('error')}")
        return list(reply["times"])


def gate(spec: BenchSpec, env: Environment) -> str | None:
    """Why ``spec`` cannot run in ``env``, or None."""
    if spec.gpu and env.gpu is None:
        return "no GPU"
    need, have = spec.min_capability, env.capability
    if need is not None and have is not None and have < need:
        return f"compute capability {capability_text(have)} < {capability_text(need)}"
    return None


def compare_case(spec: BenchSpec, case: BenchCase, before: Side, after: Side) -> list[Comparison]:
    """The case against the unpatched tree; where that cannot run it, against each fallback."""
    plan = Plan(rounds=spec.rounds, reps=spec.reps, warmup=spec.warmup)
    args = case.as_dict()

    def one(before_args: Mapping[str, Any], compared_with: str) -> Comparison:
        return compare(
            case=case.name,
            before=before,
            after=after,
            before_args=before_args,
            after_args=args,
            plan=plan,
            metric=spec.metric,
            tolerance=spec.tolerance,
            compared_with=compared_with,
        )

    plain = one(args, "unpatched")
    if plain.status != "not compared" or not spec.fallbacks:
        return [plain]
    stand_ins = []
    for fallback in spec.fallbacks:
        found = one({**args, **dict(fallback.args)}, f"unpatched, fallback: {fallback.label}")
        stand_ins.append(_with_reason(found, plain))
    return stand_ins


def _with_reason(found: Comparison, plain: Comparison) -> Comparison:
    """A fallback's comparison, with why it stood in, and the patched side's cold time from
    its first setup (the one that compiled: later setups in that process find the JIT done)."""
    reason = f"{plain.reason} (so compared with the fallback)"
    after = found.after
    if after is not None and plain.after_cold_s is not None:
        after = replace(after, cold_s=max(after.cold_s, plain.after_cold_s))
    return replace(
        found,
        reason=f"{reason}; {found.reason}" if found.reason else reason,
        after=after,
        after_cold_s=after.cold_s if after else plain.after_cold_s,
    )


def to_bench_record(spec: BenchSpec, c: Comparison) -> BenchRecord:
    b, a = c.before, c.after
    return BenchRecord(
        bench=spec.name,
        case=c.case,
        metric=spec.metric.value,
        status=c.status,
        compared_with=c.compared_with,
        before=b.value if b else None,
        after=a.value if a else None,
        ratio=c.ratio,
        ratio_spread=c.ratio_spread,
        before_spread=b.spread if b else None,
        after_spread=a.spread if a else None,
        before_cold_s=b.cold_s if b else None,
        after_cold_s=a.cold_s if a else c.after_cold_s,
        before_label=b.label if b else "",
        after_label=a.label if a else "",
        rounds=c.rounds,
        tolerance=spec.tolerance,
        slower=c.slower,
        timing=c.timing,
        reason=c.reason,
    )


def _not_run(spec: BenchSpec, why: str) -> tuple[BenchRecord, ...]:
    return tuple(
        BenchRecord(spec.name, c.name, spec.metric.value, "not run", reason=why) for c in spec.cases
    )


def run_bench(
    meta: PatchMeta,
    spec: BenchSpec,
    *,
    before_tree: Path,
    after_tree: Path,
    python: str,
    logs: Path,
) -> tuple[BenchRecord, ...]:
    file = str(set_root_of(meta) / spec.file)
    if not Path(file).is_file():
        return _not_run(spec, f"no such benchmark file: {file}")
    log = logs / f"{meta.id}.{spec.name}"
    before = WorkerSide(before_tree, python, Path(f"{log}.before.log"), gpu=spec.gpu)
    after = WorkerSide(after_tree, python, Path(f"{log}.after.log"), gpu=spec.gpu)
    try:
        bound_b = BoundSide(before, file, spec.function, spec.graph)
        bound_a = BoundSide(after, file, spec.function, spec.graph)
        found = [c for case in spec.cases for c in compare_case(spec, case, bound_b, bound_a)]
        return tuple(to_bench_record(spec, c) for c in found)
    finally:
        before.close()
        after.close()


def bench_patch(
    meta: PatchMeta,
    *,
    before_tree: Path,
    after_tree: Path,
    env: Environment,
    python: str | None = None,
    logs: Path | None = None,
) -> tuple[BenchRecord, ...]:
    """Every ``[[bench]]`` of ``meta``: figures, or records saying why they did not run."""
    logs = logs or Path(tempfile.mkdtemp(prefix="patchkit-bench-logs-"))
    found: list[BenchRecord] = []
    for spec in meta.benches:
        why = gate(spec, env)
        if why:
            found.extend(_not_run(spec, why))
            continue
        found.extend(
            run_bench(
                meta,
                spec,
                before_tree=before_tree,
                after_tree=after_tree,
                python=python or sys.executable,
                logs=logs,
            )
        )
    return tuple(found)
