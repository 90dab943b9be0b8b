"""The benchmark harness: the timing loop, the statistics and the regression flag.

Pure and injectable, so it is tested on a CPU with a fake timer. A ``Side`` is one tree (the
unpatched "before" or the patched "after") that can set a case up and time calls of it; the real
one is a worker process per tree (``bench_run``), timing with CUDA events
(``bench_worker``). ``compare`` alternates the two sides round by round (before, after,
after, before, ...), so drift in clocks or temperature falls on both, and sets the case up afresh
each round, so where one process happened to place its buffers does not count; it stops once the per-round
speed ratios agree within ``STABLE`` (after ``Plan.rounds`` rounds at least, 4x as many at most).

Figures: each side's time per call is the median of all its samples; its spread the
interquartile range over that median. The ratio is the median over rounds of (before's round
median / after's round median): after's speed over before's, so above 1 is faster; its spread is
the interquartile range of the per-round ratios. A patch is flagged slower only when three rounds
in four say so (``is_slower``). Setup and the first call (imports, JIT
compilation, autotuning) are timed apart, as ``cold_s``, and never mix with the steady state.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from patchkit.model import BenchMetric

STABLE = 0.02  # stop adding rounds once the per-round ratios' IQR is under 2% of the ratio
MAX_ROUNDS_FACTOR = 4


class SampleError(RuntimeError):
    """A side could not time its calls (its worker died, the kernel faulted)."""


@dataclass(frozen=True)
class Setup:
    """A case set up on one side: ready to time, or why it cannot run there."""

    ok: bool
    error: str = ""  # "RuntimeError: Unsupported group_size: 16"
    label: str = ""  # what runs, in the callable's words
    work: float | None = None  # tokens or bytes per call
    cold_s: float = 0.0  # setup + first call, wall clock: imports, JIT, autotuning
    timing: str = ""  # "graph" (CUDA graph replays), "eager" (calls), "host" (host clock)


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


def alternate(
    before: Side,
    after: Side,
    plan: Plan,
    before_args: Mapping[str, Any],
    after_args: Mapping[str, Any],
) -> Rounds:
    """Time both sides in rounds until the ratio is stable (see ``settled``): before then after
    in even rounds, after then before in odd ones (ABBA), each side's case set up afresh each
    round after the first (new buffers: where a process placed them stops counting)."""
    b: list[tuple[float, ...]] = []
    a: list[tuple[float, ...]] = []
    while not settled(Rounds(tuple(b), tuple(a)), plan):
        turn = [(before, before_args, b), (after, after_args, a)]
        later = bool(b)  # the first round uses the setups compare made
        for side, args, into in turn if len(b) % 2 == 0 else turn[::-1]:
            if later:
                again = side.setup(args, plan.warmup)
                if not again.ok:
                    raise SampleError(f"set up again: {again.error}")
            into.append(tuple(side.sample(plan.reps)))
    return Rounds(tuple(b), tuple(a))


def is_slower(ratios: Sequence[float], tolerance: float) -> bool:
    """The regression flag: after runs at under ``1 - tolerance`` of before's speed in three
    rounds of four (the upper quartile of the per-round ratios is under it), so one noisy
    round, or a noisy case whose ratio merely dips, is not called a regression."""
    return bool(ratios) and quantile(ratios, 0.75) < 1.0 - tolerance


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
    timing: str = ""  # how both sides were timed; "graph/eager" where they differ
    after_cold_s: float | None = None  # the patched side's first setup, also when not compared


def _timing(before: Setup, after: Setup) -> str:
    if before.timing == after.timing:
        return before.timing
    return f"{before.timing}/{after.timing}"


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
            case,
            "not compared",
            compared_with,
            reason=f"unpatched: {before_setup.error}",
            after_cold_s=after_setup.cold_s,
        )
    try:
        rounds = alternate(before, after, plan, before_args, after_args)
    except SampleError as exc:
        return Comparison(case, "failed", compared_with, reason=str(exc))
    return _compared(case, compared_with, rounds, (before_setup, after_setup), metric, tolerance)


def _compared(
    case: str,
    compared_with: str,
    rounds: Rounds,
    setups: tuple[Setup, Setup],
    metric: BenchMetric,
    tolerance: float,
) -> Comparison:
    """The figures of a case timed on both sides: per side, the ratio's median and spread."""
    before_setup, after_setup = setups
    ratios = round_ratios(rounds)
    return Comparison(
        case=case,
        status="compared",
        compared_with=compared_with,
        before=side_figures(rounds.before, before_setup, metric),
        after=side_figures(rounds.after, after_setup, metric),
        ratio=statistics.median(ratios),
        ratio_spread=relative_iqr(ratios),
        rounds=len(ratios),
        slower=is_slower(ratios, tolerance),
        timing=_timing(before_setup, after_setup),
        after_cold_s=after_setup.cold_s,
    )
