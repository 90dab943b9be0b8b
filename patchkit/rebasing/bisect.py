"""The binary search for where a patch changed fate between the old and the new lock.

:func:`first_change` finds the first point where a patch stopped applying, or became upstream,
in ⌈log2 n⌉ probes, assuming (as ``git bisect`` does) that the change sticks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.probe import Prober
from patchkit.outcome import Outcome
from patchkit.upstream.history import Point


@dataclass(frozen=True)
class Bisected:
    """What bisection learnt about one patch (kept so --continue does not probe again)."""

    absorbed_by: str | None = None
    broken_by: str | None = None
    probes: int = 0
    outcome: Outcome | None = None  # the outcome history settles on (upstreamed before it broke)


def first_change(points: Sequence[Point], changed: Callable[[Point], bool]) -> tuple[int, int]:
    """Index of the first point where ``changed`` holds, and the probes made. The last point is
    known to hold and the start (before ``points[0]``) known not to."""
    lo, hi, probes = -1, len(points) - 1, 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        probes += 1
        if changed(points[mid]):
            hi = mid
        else:
            lo = mid
    return hi, probes


@dataclass(frozen=True)
class Verdict:
    """What history says about one patch between the old and the new lock."""

    outcome: Outcome  # the final one; UPSTREAMED when upstream absorbed it before it broke
    absorbed_at: Point | None
    broken_at: Point | None
    probes: int  # apply attempts made


def trace_patch(prober: Prober, points: Sequence[Point], patch_id: str, final: Outcome) -> Verdict:
    """Where ``patch_id`` first reached its ``final`` outcome. A patch that broke right after a
    release that already had its change was absorbed upstream first (found by a second
    search over the releases before); upstream merely moved its own code on since."""
    if final.absorbed:
        absorbed = {o for o in Outcome if o.absorbed}
        wanted = {Outcome.UPSTREAMED} if final is Outcome.UPSTREAMED else absorbed
        i, probes = first_change(points, lambda p: prober.outcome(p, patch_id) in wanted)
        return Verdict(final, points[i], None, probes)
    i, probes = first_change(points, lambda p: not prober.outcome(p, patch_id).ok)
    if i > 0 and prober.outcome(points[i - 1], patch_id) is Outcome.UPSTREAMED:
        up = Outcome.UPSTREAMED
        j, more = first_change(points[:i], lambda p: prober.outcome(p, patch_id) is up)
        return Verdict(Outcome.UPSTREAMED, points[j], points[i], probes + more)
    return Verdict(final, None, points[i], probes)
