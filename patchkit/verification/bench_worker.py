"""One tree's benchmark worker: ``python -m patchkit.verification.bench_worker``, started by
``bench_run`` with that tree first on ``PYTHONPATH``, so the callable imports the tree's
code. It answers JSON lines on its stdin with JSON lines on the stdout it was started with
(anything the callable prints goes to stderr instead):

- ``{"op": "setup", "file": F, "function": N, "args": {...}, "warmup": W}``: import ``F``, call
  ``N(args)``, time the first call with the setup (``cold_s``: imports, JIT, autotuning), run
  ``W`` more untimed; ``{"ok": true, "label", "work", "cold_s"}`` or ``{"ok": false, "error"}``.
- ``{"op": "sample", "reps": R}``: ``{"ok": true, "times": [ms, ...]}``, one per call.
- ``{"op": "quit"}``.

Started with ``wall`` as its argument it times with the host clock (CPU code); otherwise
``CudaEventTimer`` times each call with CUDA events, the L2 cache flushed before each (as
``triton.testing.do_bench`` does), so a case whose data fits in L2 is not timed from it. The call
is captured once as a CUDA graph and the graph replayed (``"graph"`` timing: what the GPU spends,
without the host's launch overhead, as vLLM runs decode), unless capture fails (``"eager"``) or
the benchmark says ``graph = false``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

FLUSH_BYTES = 256 * 1024 * 1024  # larger than any current GPU's L2


class CudaEventTimer:
    kind = "eager"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
        self.pad: Any = None
        self.graph: Any = None

    def release(self) -> None:
        """Before a case is set up (again): drop the last one, and hold a pad of random size,
        so the new buffers need not land where the last ones were."""
        self.graph = self.pad = None
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()
        size = random.randrange(0, 64) * 2 * 1024 * 1024
        self.pad = self.torch.empty(size, dtype=self.torch.uint8, device="cuda")

    def capture(self, fn: Callable[[], object]) -> tuple[Callable[[], object], str]:
        """A CUDA graph of one call, replayed instead of the call (no host launch overhead in
        the figures); the call itself where capture fails."""
        torch = self.torch
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                fn()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                fn()
            graph.replay()
            torch.cuda.synchronize()
        except Exception:
            torch.cuda.synchronize()
            return fn, "eager"
        self.graph = graph
        return graph.replay, "graph"

    def times(self, fn: Callable[[], object], reps: int) -> list[float]:
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [cuda.Event(enable_timing=True) for _ in range(reps)]
        for start, end in zip(starts, ends, strict=True):
            self.flush.zero_()
            start.record()
            fn()
            end.record()
        cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]

    def sync(self) -> None:
        self.torch.cuda.synchronize()


class WallTimer:
    """For benchmarks of CPU code (``gpu = false``): the host clock around each call."""

    kind = "host"

    def release(self) -> None:
        pass

    def capture(self, fn: Callable[[], object]) -> tuple[Callable[[], object], str]:
        return fn, "host"

    def times(self, fn: Callable[[], object], reps: int) -> list[float]:
        found = []
        for _ in range(reps):
            start = time.perf_counter()
            fn()
            found.append((time.perf_counter() - start) * 1000.0)
        return found

    def sync(self) -> None:
        pass


def _error(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[-1] if lines else ''}"[:400]


def _load(file: str, function: str) -> Callable[[dict[str, Any]], Any]:
    path = Path(file)
    if str(path.parent) not in sys.path:
        sys.path.insert(1, str(path.parent))  # after the tree: helpers beside the callable
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: Callable[[dict[str, Any]], Any] = getattr(module, function)
    return found


class Worker:
    def __init__(self, timer: Any) -> None:
        self.timer = timer
        self.fn: Callable[[], object] | None = None
        self.loaded: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = {}

    def _callable(self, file: str, function: str) -> Callable[[dict[str, Any]], Any]:
        key = (file, function)
        if key not in self.loaded:
            self.loaded[key] = _load(file, function)
        return self.loaded[key]

    def setup(self, req: dict[str, Any]) -> dict[str, Any]:
        self.fn = None
        self.timer.release()
        start = time.perf_counter()
        try:
            made = self._callable(req["file"], req["function"])(dict(req["args"]))
            spec = made if isinstance(made, dict) else {"fn": made}
            fn = spec["fn"]
            fn()
            self.timer.sync()
            cold = time.perf_counter() - start
            for _ in range(int(req.get("warmup", 0))):
                fn()
            self.timer.sync()
            timed, timing = self.timer.capture(fn) if req.get("graph", True) else (fn, "eager")
        except Exception as exc:
            return {"ok": False, "error": _error(exc)}
        self.fn = timed
        return {
            "ok": True,
            "label": spec.get("label", ""),
            "work": spec.get("work"),
            "cold_s": cold,
            "timing": self.timer.kind if timing == "eager" else timing,
        }

    def sample(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.fn is None:
            return {"ok": False, "error": "no case set up"}
        try:
            return {"ok": True, "times": self.timer.times(self.fn, int(req["reps"]))}
        except Exception as exc:
            return {"ok": False, "error": _error(exc)}


def serve(requests: IO[str], replies: IO[str], worker: Worker) -> None:
    for line in requests:
        req = json.loads(line)
        if req["op"] == "quit":
            return
        reply = worker.setup(req) if req["op"] == "setup" else worker.sample(req)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv: list[str] | None = None) -> int:
    kind = (argv if argv is not None else sys.argv[1:])[-1:] or ["cuda"]
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the callable's prints go to stderr, never into the replies
    sys.stdout = sys.stderr
    try:
        timer: Any = WallTimer() if kind == ["wall"] else CudaEventTimer()
    except Exception as exc:
        replies.write(json.dumps({"ok": False, "error": f"no CUDA timer: {_error(exc)}"}) + "\n")
        return 1
    replies.write(json.dumps({"ok": True, "ready": True}) + "\n")
    replies.flush()
    serve(sys.stdin, replies, Worker(timer))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
