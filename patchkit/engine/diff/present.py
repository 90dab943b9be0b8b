"""Change blocks upstream already made, left out of a hunk whose merge conflicted.

A hunk is a run of change blocks (the lines it removes and adds between two context lines).
Upstream may already have made one of them (the same line written by an earlier backport or
another change) while the rest is still the patch's own: the merge of the hunk conflicts,
since upstream rewrote lines the patch rewrites. A block is *already upstream* when a line
diff of the base file against upstream's replaces exactly the block's base lines (the same
rows: upstream kept the lines right around them) with exactly the block's added lines,
literally or with the renames upstream made across the file (learned as
:mod:`patchkit.engine.diff.renames` learns them, between the file as the patch leaves its
base and upstream's, where lines the patch already rewrote show them: on two lines at
least, all agreeing, the old spelling gone from upstream's file; and only a word the base
file has: a word the patch wrote is never one upstream renamed). A block that
itself renames (its added lines name a word its removed lines don't, upstream's renames
made in both) is never upstream by a rename: only upstream's own words there, literally,
are evidence. Those blocks are left out of their hunks (upstream's lines stand there)
and the file is merged again: carried only when that merge is clean, its outcome
*partly upstreamed*; a hunk whose every block is upstream is already upstream. A block whose
added lines stand elsewhere, or beside its removed lines that upstream kept, is no evidence:
the conflict stands. Asked only after every other way left the file in conflict.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.diff.lastpass import ByStatements
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, place
from patchkit.engine.diff.renames import Rename, learn, renamed, tokens
from patchkit.engine.diff.result import FileResult, Job
from patchkit.engine.diff.scopemerge import apply_at_base
from patchkit.engine.ends import common_ends
from patchkit.outcome import Outcome, Rule

MergeAll = Callable[[Job, Placer, list[Plan]], FileResult]
Span = tuple[int, int]
_WORD = re.compile(rb"[A-Za-z_]\w*\Z")


@dataclass(frozen=True)
class Block:
    """One change block of a hunk: where it starts among the hunk's ops and at base."""

    op: int  # index of its first op in the hunk's ops
    row: int  # its first base row, from the hunk's first old line
    removed: tuple[bytes, ...]
    added: tuple[bytes, ...]


def blocks(hunk: Hunk) -> list[Block]:
    """The hunk's change blocks, in order."""
    found: list[Block] = []
    row, i, ops = 0, 0, hunk.ops
    while i < len(ops):
        if ops[i][0] == " ":
            row, i = row + 1, i + 1
            continue
        j = i
        while j < len(ops) and ops[j][0] != " ":
            j += 1
        removed = tuple(text for kind, text in ops[i:j] if kind == "-")
        found.append(Block(i, row, removed, tuple(text for kind, text in ops[i:j] if kind == "+")))
        row, i = row + len(removed), j
    return found


def without(hunk: Hunk, dropped: Sequence[Block]) -> Hunk:
    """``hunk`` with the ``dropped`` blocks left out: their removed lines kept as context,
    their added lines gone (the header stays: the hunk is still the patch's)."""
    starts = {b.op for b in dropped}
    ops: list[tuple[str, bytes]] = []
    inside = False
    for i, (kind, text) in enumerate(hunk.ops):
        inside = (inside and kind != " ") or i in starts
        if inside and kind == "+":
            continue
        ops.append((" ", text) if inside else (kind, text))
    return dataclasses.replace(
        hunk,
        old=tuple(text for kind, text in ops if kind != "+"),
        new=tuple(text for kind, text in ops if kind != "-"),
        added=tuple(text for kind, text in ops if kind == "+"),
        ops=tuple(ops),
    )


@dataclass
class Upstream:
    """The base file against upstream's: which base rows upstream replaced, and by what."""

    base: list[bytes]
    target: list[bytes]
    patched: list[bytes]
    _spans: dict[Span, Span] | None = None
    _renames: list[Rename] | None = None

    def replaced(self, start: int, end: int) -> Sequence[bytes] | None:
        """What upstream wrote in place of base rows ``[start, end)`` exactly (None: it kept
        them, or replaced more or fewer rows around them)."""
        if self._spans is None:
            self._spans = _changes(self.base, self.target)
        span = self._spans.get((start, end))
        return None if span is None else self.target[span[0] : span[1]]

    def renames(self) -> list[Rename]:
        if self._renames is None:
            learned = learn(self.patched, self.target)
            self._renames = [r for r in learned if renamed(self.base, [r]) != self.base]
        return self._renames

    def made(self, block: Block, at: int) -> bool:
        """Whether upstream made ``block`` (its base rows starting at ``at``) already."""
        there = self.replaced(at, at + len(block.removed))
        if there is None:
            return False
        if list(there) == list(block.added):
            return True
        renames = self.renames()
        want = renamed(block.added, renames)
        was = renamed(block.removed, renames)
        return bool(renames) and want == list(there) and want != was and not _names_new(want, was)


def _names_new(added: Sequence[bytes], removed: Sequence[bytes]) -> bool:
    """The added lines name a word the removed lines don't (the block renames, or adds a
    name of its own)."""
    old = {t for line in removed for t, _, _ in tokens(line) if _WORD.match(t)}
    return any(_WORD.match(t) and t not in old for line in added for t, _, _ in tokens(line))


def _changes(base: Sequence[bytes], target: Sequence[bytes]) -> dict[Span, Span]:
    """Each base span upstream changed (rows, end excluded) and the target span it became."""
    head, tail = common_ends(base, target)
    mid_base, mid_target = base[head : len(base) - tail], target[head : len(target) - tail]
    matcher = difflib.SequenceMatcher(None, mid_base, mid_target, autojunk=False)
    return {
        (head + i1, head + i2): (head + j1, head + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    }


def carried_rest(job: Job, placer: Placer, merge_all: MergeAll) -> FileResult | None:
    """The file's hunks placed again, the blocks upstream already made left out of the
    missing ones, and merged (``merge_all``, as the last pass merges: by statements and with
    a scope's renames where lines conflict); None unless a block was left out and the merge
    carries the patch (the conflict before it stands)."""
    base = placer.base
    plans = place(placer, job.fp.hunks)
    missing = [p for p in plans if p.state is PlanState.MISSING and p.base_at is not None]
    if base is None or any(p.state is PlanState.AMBIGUOUS for p in plans) or not missing:
        return None
    target = placer.target.lines
    patched = apply_at_base(base.lines, [p for p in plans if p.base_at is not None])
    upstream = Upstream(base.lines, target, patched)
    reduced = 0
    for plan in missing:
        at = plan.base_at or 0
        made = [b for b in blocks(plan.hunk) if upstream.made(b, at + b.row)]
        if not made:
            continue
        reduced += 1
        rows = ", ".join(str(at + b.row + 1) for b in made)
        plan.hunk, plan.note = without(plan.hunk, made), f"already upstream: base line(s) {rows}"
        if not plan.hunk.added and plan.hunk.old == plan.hunk.new:
            plan.state, plan.rule = PlanState.PRESENT, Rule.UPSTREAM
    if not reduced:
        return None
    rest = [p for p in plans if p.state is PlanState.MISSING]
    result = merge_all(dataclasses.replace(job, merge=ByStatements(job.merge)), placer, rest)
    if not result.outcome.carried:
        return None
    outcome = Outcome.UPSTREAMED if result.outcome is Outcome.UPSTREAMED else None
    return dataclasses.replace(result, outcome=outcome or Outcome.PARTLY_UPSTREAMED)
