"""The benchmark harness: the timing loop, the statistics and the regression flag.

Pure and injectable, so it is tested on a CPU with a fake timer. A ``Side`` is one tree (the
unpatched "before" or the patched "after") that can set a case up and time calls of it; the real
one is a worker process per tree (``bench_run``), timing with CUDA events
(``bench_worker``). ``compare`` alternates the two sides round by round (before, after,
before, after, ...), so drift in clocks or temperature falls on both; it stops once the per-round
speed ratios agree within ``STABLE`` (after ``Plan.rounds`` rounds at least, 4x as many at most).

Figures: each side's time per call is the median of all its samples; its spread the
interquartile range over that median. The ratio is the median over rounds of (before's round
median / after's round median): after's speed over before's, so above 1 is faster; its spread is
the interquartile range of the per-round ratios. Setup and the first call (imports, JIT
compilation, autotuning) are timed apart, as ``cold_s``, and never mix with the steady state.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from patchkit.model import BenchMetric

STABLE = 0.02  # stop adding rounds once the per-round ratios' IQR is under 2% of the ratio
MAX_ROUNDS_FACTOR = 4


class SampleError(RuntimeError):
    """A side could not time its calls (its worker died, the kernel faulted)."""


class Timer(Protocol):
    def times(self, fn: Callable[[], object], reps: int) -> list[float]:
        """Milliseconds per call, one sample per call, ``reps`` samples."""


@dataclass(frozen=True)
class Setup:
    """A case set up on one side: ready to time, or why it cannot run there."""

    ok: bool
    error: str = ""  # "RuntimeError: Unsupported group_size: 16"
    label: str = ""  # what runs, in the callable's words
    work: float | None = None  # tokens or bytes per call
    cold_s: float = 0.0  # setup + first call, wall clock: imports, JIT, autotuning


class Side(Protocol):
    def setup(self, args: Mapping[str, Any], warmup: int) -> Setup: ...

    def sample(self, reps: int) -> list[float]:
        """``reps`` times (ms) of the case set up last; raises ``SampleError``."""


@dataclass(frozen=True)
class Plan:
    rounds: int = 8
    reps: int = 20
    warmup: int = 10
    stable: float = STABLE


@dataclass(frozen=True)
class Rounds:
    """The raw samples of one comparison: per round, before's and after's times (ms)."""

    before: tuple[tuple[float, ...], ...] = ()
    after: tuple[tuple[float, ...], ...] = ()


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile, ``q`` in [0, 1]."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no samples")
    pos = (len(ordered) - 1) * q
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def relative_iqr(values: Sequence[float]) -> float:
    mid = statistics.median(values)
    return (quantile(values, 0.75) - quantile(values, 0.25)) / mid if mid else math.inf


def round_ratios(rounds: Rounds) -> list[float]:
    """After's speed over before's, per round (before's time / after's time)."""
    return [
        statistics.median(b) / statistics.median(a)
        for b, a in zip(rounds.before, rounds.after, strict=True)
    ]


def settled(rounds: Rounds, plan: Plan) -> bool:
    done = len(rounds.before)
    if done < plan.rounds:
        return False
    if done >= plan.rounds * MAX_ROUNDS_FACTOR:
        return True
    return relative_iqr(round_ratios(rounds)) < plan.stable


def alternate(before: Side, after: Side, plan: Plan) -> Rounds:
    """Time both sides in alternating rounds until the ratio is stable (see ``settled``)."""
    b: list[tuple[float, ...]] = []
    a: list[tuple[float, ...]] = []
    while not settled(Rounds(tuple(b), tuple(a)), plan):
        b.append(tuple(before.sample(plan.reps)))
        a.append(tuple(after.sample(plan.reps)))
    return Rounds(tuple(b), tuple(a))


def is_slower(ratio: float, tolerance: float) -> bool:
    """The regression flag: after runs at under ``1 - tolerance`` of before's speed."""
    return ratio < 1.0 - tolerance


@dataclass(frozen=True)
class SideFigures:
    time_ms: float  # median time per call
    value: float  # in the metric's unit (ms, tokens/s, bytes/s)
    spread: float  # interquartile range over the median
    samples: int
    cold_s: float
    label: str


def in_metric(time_ms: float, work: float | None, metric: BenchMetric) -> float:
    if metric is BenchMetric.TIME:
        return time_ms
    if work is None:
        raise ValueError(f"metric {metric.value} needs the callable to return 'work' per call")
    return work / (time_ms / 1000.0)


def side_figures(
    samples: Sequence[Sequence[float]], setup: Setup, metric: BenchMetric
) -> SideFigures:
    flat = [t for chunk in samples for t in chunk]
    time_ms = statistics.median(flat)
    return SideFigures(
        time_ms=time_ms,
        value=in_metric(time_ms, setup.work, metric),
        spread=relative_iqr(flat),
        samples=len(flat),
        cold_s=setup.cold_s,
        label=setup.label,
    )


@dataclass(frozen=True)
class Comparison:
    """One case, before against after. ``status``: "compared", or "not compared" (before could
    not run it and nothing stood in), or "failed" (after could not run it)."""

    case: str
    status: str
    compared_with: str = "unpatched"  # or "unpatched, fallback: <label>"
    before: SideFigures | None = None
    after: SideFigures | None = None
    ratio: float | None = None  # after's speed / before's; > 1 is faster
    ratio_spread: float | None = None  # IQR of per-round ratios, relative to the ratio
    rounds: int = 0
    slower: bool = False
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def compare(
    *,
    case: str,
    before: Side,
    after: Side,
    before_args: Mapping[str, Any],
    after_args: Mapping[str, Any],
    plan: Plan,
    metric: BenchMetric,
    tolerance: float,
    compared_with: str = "unpatched",
) -> Comparison:
    """Set the case up on both sides, then time them alternately; outcomes are values."""
    after_setup = after.setup(after_args, plan.warmup)
    if not after_setup.ok:
        return Comparison(case, "failed", compared_with, reason=f"patched: {after_setup.error}")
    before_setup = before.setup(before_args, plan.warmup)
    if not before_setup.ok:
        return Comparison(
            case, "not compared", compared_with, reason=f"unpatched: {before_setup.error}"
        )
    try:
        rounds = alternate(before, after, plan)
    except SampleError as exc:
        return Comparison(case, "failed", compared_with, reason=str(exc))
    ratios = round_ratios(rounds)
    ratio = statistics.median(ratios)
    return Comparison(
        case=case,
        status="compared",
        compared_with=compared_with,
        before=side_figures(rounds.before, before_setup, metric),
        after=side_figures(rounds.after, after_setup, metric),
        ratio=ratio,
        ratio_spread=relative_iqr(ratios),
        rounds=len(ratios),
        slower=is_slower(ratio, tolerance),
    )
