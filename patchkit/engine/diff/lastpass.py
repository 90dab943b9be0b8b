"""The engine's last pass over a file whose merge conflicted, after placing by one side and
following moved code gave nothing: its hunks placed again and merged with a merger marked
:class:`ByStatements`, so that the scope merge (:mod:`patchkit.engine.diff.scopemerge`) and the
whole-file merge merge a conflict by statements (:mod:`patchkit.engine.diff.statements`), and
the scope merge with the renames upstream made in the scope
(:mod:`patchkit.engine.diff.renames`), and, when those conflict too, over what upstream deleted
or edited inside the lines the patch deletes (:mod:`patchkit.engine.diff.deletions`). Never
before the other ways: what they place stays theirs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.diff.deletions import merge_over_deletions
from patchkit.engine.diff.onesided import trimmed
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, place
from patchkit.engine.diff.result import FileResult, Job, Merger
from patchkit.engine.diff.statements import merge_statements
from patchkit.gitrepo import MergeResult
from patchkit.outcome import Outcome


@dataclass(frozen=True)
class ByStatements:
    """A line merger whose conflicts the scope merge and the whole-file merge then merge by
    statements (and with a scope's renames) where they can: the engine's last pass, after the
    other ways (one side, following the code) left a conflict."""

    lines: Merger

    def __call__(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> MergeResult:
        return self.lines(ours, base, theirs, labels)


def by_statements(
    merge: Merger,
    path: str,
    ours: bytes,
    base: Sequence[bytes],
    theirs: Sequence[bytes],
    labels: tuple[str, str, str],
) -> MergeResult:
    """The line merge of a whole file; in the last pass, its conflict merged by statements
    where it can be, else over upstream's deletions."""
    texts = (ours, b"".join(base), b"".join(theirs))
    merged = merge(*texts, labels)
    last = isinstance(merge, ByStatements) and merged.conflicts
    again = merge_statements(path, *texts) if last else None
    again = merge_over_deletions(path, *texts, whole_file=True) if last and not again else again
    return merged if again is None else MergeResult(again, 0)


def over_deletions(
    path: str, sides: tuple[Sequence[bytes], ...], group: Sequence[Plan]
) -> MergeResult | None:
    """A scope's conflicting merge of (ours, base, theirs) lines, merged over what upstream
    deleted or edited inside the lines the patch deletes (:mod:`deletions`), its hunks noted
    so; None when it cannot be (the conflict stands)."""
    again = merge_over_deletions(path, *(b"".join(lines) for lines in sides))
    if again is None:
        return None
    for plan in group:
        why = "merged over upstream's deletions in the lines it deletes or keeps"
        plan.note = "; ".join(n for n in (plan.note, why) if n)
    return MergeResult(again, 0)


MergeAll = Callable[[Job, Placer, list[Plan]], FileResult]


def last_pass(job: Job, placer: Placer, merge_all: MergeAll) -> FileResult | None:
    """The file's hunks placed again and merged with :class:`ByStatements` (``merge_all``:
    the merge of the missing hunks, scope by scope, then the whole file); None unless that
    carries the patch (the conflict before it stands). A hunk placed by its context writes
    only the lines it changes, its context left as the file has it (a scope merged whole
    beside it may begin inside that context). When the merge dropped a hunk's added lines,
    the same again with each hunk that only inserts read one way, then the other, along equal
    lines around it (:func:`slid`): the same change, whose added lines the merge may have put
    there so read."""
    readings = [job.fp.hunks]
    for step in (-1, 1):
        hunks = tuple(slid(h, step) or h for h in job.fp.hunks)
        if hunks not in readings:
            readings.append(hunks)
    for hunks in readings:
        result = _merged(job, placer, merge_all, hunks)
        if result is None or result.outcome.carried:
            return result
        if result.outcome is not Outcome.FAILED:  # not added lines the merge dropped
            return None
    return None


def _merged(
    job: Job, placer: Placer, merge_all: MergeAll, hunks: Sequence[Hunk]
) -> FileResult | None:
    plans = place(placer, hunks)
    if any(p.state is PlanState.AMBIGUOUS for p in plans):
        return None
    missing = [p for p in plans if p.state is PlanState.MISSING]
    if not missing:
        return None
    for plan in plans:
        if plan.state is PlanState.APPLY:
            _own_lines(plan)
    return merge_all(dataclasses.replace(job, merge=ByStatements(job.merge)), placer, missing)


def _own_lines(plan: Plan) -> None:
    """A placed hunk cut to the lines it changes (its context is the file's, as found)."""
    hunk = plan.hunk
    if hunk.lead or hunk.trail:
        plan.hunk = trimmed(hunk, hunk.lead, hunk.trail)
        plan.spots = [plan.at + hunk.lead]
        plan.base_at = None if plan.base_at is None else plan.base_at + hunk.lead


def slid(hunk: Hunk, step: int) -> Hunk | None:
    """A hunk that only inserts one run of lines, read with that run moved up (``step`` < 0)
    or down as far as the context line it passes equals the run's far end line: the same
    change (``a`` + ``x, a`` reads ``a, x`` + ``a``); None when it cannot move."""
    ops = list(hunk.ops)
    kinds = "".join(kind for kind, _ in ops)
    first, last = kinds.find("+"), kinds.rfind("+")
    if first < 0 or "-" in kinds or " " in kinds[first:last]:
        return None
    start = first
    while step < 0 and first > 0 and ops[first - 1][1] == ops[last][1]:
        ops[first - 1], ops[last] = ("+", ops[first - 1][1]), (" ", ops[last][1])
        first, last = first - 1, last - 1
    while step > 0 and last + 1 < len(ops) and ops[last + 1][1] == ops[first][1]:
        ops[first], ops[last + 1] = (" ", ops[first][1]), ("+", ops[last + 1][1])
        first, last = first + 1, last + 1
    if first == start:
        return None
    return dataclasses.replace(hunk, ops=tuple(ops), added=tuple(t for k, t in ops if k == "+"))
