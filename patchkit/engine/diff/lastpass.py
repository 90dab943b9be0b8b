"""The engine's last pass over a file whose merge conflicted, after placing by one side and
following moved code gave nothing: its hunks placed again and merged with a merger marked
:class:`ByStatements`, so that the scope merge (:mod:`patchkit.engine.diff.scopemerge`) and the
whole-file merge merge a conflict by statements (:mod:`patchkit.engine.diff.statements`), and
the scope merge with the renames upstream made in the scope
(:mod:`patchkit.engine.diff.renames`). Never before the other ways: what they place stays
theirs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.diff.placement import Placer, Plan, PlanState, place
from patchkit.engine.diff.result import FileResult, Job, Merger
from patchkit.engine.diff.statements import merge_statements
from patchkit.gitrepo import MergeResult


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
    where it can be."""
    texts = (ours, b"".join(base), b"".join(theirs))
    merged = merge(*texts, labels)
    last = isinstance(merge, ByStatements) and merged.conflicts
    again = merge_statements(path, *texts) if last else None
    return merged if again is None else MergeResult(again, 0)


MergeAll = Callable[[Job, Placer, list[Plan]], FileResult]


def last_pass(job: Job, placer: Placer, merge_all: MergeAll) -> FileResult | None:
    """The file's hunks placed again and merged with :class:`ByStatements` (``merge_all``:
    the merge of the missing hunks, scope by scope, then the whole file); None unless that
    carries the patch (the conflict before it stands)."""
    plans = place(placer, job.fp.hunks)
    if any(p.state is PlanState.AMBIGUOUS for p in plans):
        return None
    missing = [p for p in plans if p.state is PlanState.MISSING]
    if not missing:
        return None
    result = merge_all(dataclasses.replace(job, merge=ByStatements(job.merge)), placer, missing)
    return result if result.outcome.carried else None
