"""One rule for a patch's verdict from its parts' (its files, a rewrite's anchors): a part that
did not land (failed, ambiguous, conflict, gone) is the verdict, the worst first, whatever else
landed; *partly upstreamed* only when every part is applied or already there, some of each.

A conflicted hunk is never part of a success: :func:`patch_outcome` is the only place a
patch's outcome is made from its parts' (``diff.result.combine`` for diffs,
``rewrite.report.combine_outcomes`` for rewrites).
"""

from __future__ import annotations

from collections.abc import Iterable

from patchkit.model import Outcome

# Worst first: any of these among the parts is the patch's outcome.
STOPS = (Outcome.FAILED, Outcome.AMBIGUOUS, Outcome.CONFLICT, Outcome.GONE)
LANDED = frozenset({Outcome.APPLIED, Outcome.CARRIED})


def patch_outcome(outcomes: Iterable[Outcome]) -> Outcome:
    """The patch's outcome from its parts' outcomes (none: failed, there is nothing to say)."""
    kinds = set(outcomes)
    for bad in STOPS:
        if bad in kinds:
            return bad
    if not kinds:
        return Outcome.FAILED
    if kinds == {Outcome.UPSTREAMED}:
        return Outcome.UPSTREAMED
    if Outcome.PARTLY_UPSTREAMED in kinds or Outcome.UPSTREAMED in kinds:
        return Outcome.PARTLY_UPSTREAMED
    return Outcome.CARRIED if Outcome.CARRIED in kinds else Outcome.APPLIED
