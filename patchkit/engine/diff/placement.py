"""Where each hunk of a diff goes in a file that is not the diff's base blob.

Every hunk gets candidate places from its context, exact first, then ignoring whitespace. One
place is taken as it is; several are narrowed by evidence, in this order, until one is left:
the order of the file's other hunks, the start/end-of-file anchors, the scope path the hunk
had at base (from :mod:`patchkit.engine.structure`), the lines around it at base, and the
offset of its neighbours. When the evidence cannot decide, the hunk is ``ambiguous`` and the
candidates are named; never the first match. Finding candidates is linear in the file (an
index of lines, in :mod:`patchkit.engine.diff.fileview`), so big diffs stay fast.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from patchkit.engine.diff.fileview import FileView, common_prefix, squash
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.spelling import file_renames, respelled
from patchkit.engine.structure import Scope, ScopePath, language_of
from patchkit.outcome import Candidate, Rule

_AROUND = 50  # lines compared beyond a hunk's context when judging its surroundings


class PlanState(enum.Enum):
    """Where one hunk stands as the evidence leaves it (a value inside the engine, never shown)."""

    APPLY = "apply"  # one place found: its new lines go there
    PRESENT = "present"  # its new lines are in the file already: nothing to write
    MISSING = "missing"  # no place found: a later step (one side, a merge) may still place it
    AMBIGUOUS = "ambiguous"  # several places, and the evidence cannot choose
    MERGED = "merged"  # placed by a merge (whole file, its scope, lines in its scope)


@dataclass
class Plan:
    """One hunk's place in the file, as the evidence leaves it."""

    hunk: Hunk
    spots: list[int]  # candidate indexes of its first old line in the target (0-based)
    loose: bool = False  # found only when whitespace is ignored
    rule: Rule = Rule.NONE
    state: PlanState = PlanState.MISSING
    base_at: int | None = None  # where its old lines start in the base blob, when known
    found: tuple[int, ...] = ()  # every candidate before the evidence narrowed them
    note: str = ""
    moved_from: str | None = None
    merged_into: tuple[int, ScopePath] | None = None  # merged: (target line, scope path)

    @property
    def at(self) -> int:
        return self.spots[0] if len(self.spots) == 1 else -1

    @property
    def end(self) -> int:
        return self.at + len(self.hunk.old)


@dataclass
class Placer:
    """The evidence for one file: the target, and the base blob when it is known."""

    target: FileView
    base: FileView | None
    plans: list[Plan] = field(default_factory=list)

    def candidates(self, plan: Plan) -> list[Candidate]:
        tree = self.target.tree
        return [
            Candidate(s + 1, self.target.hunk_scope(plan.hunk, s) if tree else ())
            for s in (plan.spots or list(plan.found))
        ]

    def structure_note(self) -> str:
        if language_of(self.target.path) is None:
            return f"no grammar for {self.target.path}: placed by lines only"
        return ""


def base_at(base: FileView | None, hunk: Hunk) -> int | None:
    """Where a hunk's old lines start in the base blob (None: unknown)."""
    if base is None:
        return None
    if not hunk.old:
        return max(hunk.old_start, 0)
    start = max(hunk.old_start - 1, 0)
    if base.lines[start : start + len(hunk.old)] == list(hunk.old):
        return start
    spots = base.find(hunk.old)
    return spots[0] if len(spots) == 1 else None


def _find(placer: Placer, hunk: Hunk) -> Plan:
    plan = Plan(hunk, [], base_at=base_at(placer.base, hunk))
    spots = placer.target.find(hunk.old)
    if not spots and hunk.old:
        spots = placer.target.find_loose(hunk.old)
        plan.loose = bool(spots)
    if not hunk.old:  # an empty old side: the file was empty, the hunk starts it
        spots = [0]
    plan.spots, plan.found = list(spots), tuple(spots)
    if len(spots) == 1:
        plan.rule = Rule.WHITESPACE if plan.loose else Rule.CONTEXT
    return plan


def _narrow(plan: Plan, keep: Callable[[int], bool], rule: Rule) -> bool:
    kept = [s for s in plan.spots if keep(s)]
    if not kept or len(kept) == len(plan.spots):
        return False
    plan.spots = kept
    if len(kept) == 1:
        plan.rule = rule
    return True


def _neighbours(plans: list[Plan], i: int) -> tuple[Plan | None, Plan | None]:
    before = next((p for p in reversed(plans[:i]) if p.at >= 0), None)
    after = next((p for p in plans[i + 1 :] if p.at >= 0), None)
    return before, after


def _bounds(plans: list[Plan], i: int) -> tuple[int, int]:
    """Where hunk ``i`` may start and must end for the hunks to stay in order: after the
    earliest end of the hunk before it, before the latest start of the hunk after it."""
    prev = next((p for p in reversed(plans[:i]) if p.spots), None)
    nxt = next((p for p in plans[i + 1 :] if p.spots), None)
    lo = min(s + len(prev.hunk.old) for s in prev.spots) if prev else 0
    hi = max(nxt.spots) if nxt else 1 << 62
    return lo, hi


def _offset(plan: Plan) -> int:
    return plan.at - (plan.base_at if plan.base_at is not None else plan.hunk.old_start - 1)


def _at_end(placer: Placer, plan: Plan) -> bool | None:
    """Whether the hunk ends its file at base (None: it cannot be told)."""
    hunk = plan.hunk
    if hunk.trail or not hunk.old:
        return False
    if placer.base is not None and plan.base_at is not None:
        return plan.base_at + len(hunk.old) == len(placer.base.lines)
    return hunk.lead > 0 or None


def weight(line: bytes) -> int:
    """A matching line counts as evidence only when it says something (not blank, not ``}``)."""
    return 1 if len(squash(line)) > 2 else 0


def _surroundings(placer: Placer, plan: Plan, spot: int) -> int:
    """How many telling lines around ``spot`` (beyond the hunk) match those around it at base."""
    base, target = placer.base, placer.target.lines
    if base is None or plan.base_at is None:
        return 0
    b, n, score = plan.base_at, len(plan.hunk.old), 0
    for k in range(1, _AROUND):
        if spot - k < 0 or b - k < 0 or target[spot - k] != base.lines[b - k]:
            break
        score += weight(target[spot - k])
    for k in range(_AROUND):
        t, s = spot + n + k, b + n + k
        if t >= len(target) or s >= len(base.lines) or target[t] != base.lines[s]:
            break
        score += weight(target[t])
    return score


def clear_best(scores: dict[int, int]) -> int | None:
    """The score of the one candidate whose surroundings match clearly better than the rest."""
    ranked = sorted(scores.values(), reverse=True)
    if not ranked or ranked[0] < 2:
        return None
    return ranked[0] if len(ranked) == 1 or ranked[0] - ranked[1] >= 2 else None


def _decide(placer: Placer, i: int) -> bool:
    """Narrow hunk ``i``'s candidates by the evidence, in order; True when any was dropped."""
    plan = placer.plans[i]
    before, after = _neighbours(placer.plans, i)
    n = len(plan.hunk.old)
    lo, hi = _bounds(placer.plans, i)
    if _narrow(plan, lambda s: lo <= s and s + n <= hi, Rule.ORDER):
        return True
    end = _at_end(placer, plan)
    last = len(placer.target.lines)
    if end and _narrow(plan, lambda s: s + n == last, Rule.END_OF_FILE):
        return True
    starts = plan.hunk.lead == 0 and plan.hunk.old_start <= 1 and plan.hunk.trail > 0
    if starts and _narrow(plan, lambda s: s == 0, Rule.START_OF_FILE):
        return True
    return _decide_by_base(placer, plan, before, after)


def _decide_by_base(placer: Placer, plan: Plan, before: Plan | None, after: Plan | None) -> bool:
    base = placer.base
    if base is not None and plan.base_at is not None and base.tree and placer.target.tree:
        want = base.hunk_scope(plan.hunk, plan.base_at)
        same = [s for s in plan.spots if placer.target.hunk_scope(plan.hunk, s) == want]
        if want and len(same) > 1 and placer.target.tree.named(want):  # twins: never a guess
            plan.spots, plan.note = same, f"look-alike twins of {' > '.join(want)}"
            return False
        if _narrow(plan, lambda s: s in same, Rule.SCOPE):
            return True
    scores = {s: _surroundings(placer, plan, s) for s in plan.spots}
    best = clear_best(scores)
    if best is not None and _narrow(plan, lambda s: scores[s] == best, Rule.SURROUNDINGS):
        return True
    offsets = {_offset(p) for p in (before, after) if p is not None}
    base_at = plan.base_at if plan.base_at is not None else plan.hunk.old_start - 1
    return bool(offsets) and _narrow(plan, lambda s: s - base_at in offsets, Rule.OFFSET)


def _present(lines: list[bytes], plan: Plan) -> bool:
    hunk, at = plan.hunk, plan.at
    return hunk.new != hunk.old and lines[at : at + len(hunk.new)] == list(hunk.new)


def place(placer: Placer, hunks: Sequence[Hunk]) -> list[Plan]:
    """A plan per hunk, in a :class:`PlanState`: ``APPLY`` at one place, ``PRESENT`` (already
    there), ``MISSING`` (context gone: a merge may still carry it, then ``MERGED``) or
    ``AMBIGUOUS`` (candidates kept). Added lines naming what the target file spells anew
    take its spelling first (:mod:`patchkit.engine.diff.spelling`)."""
    base = placer.base
    renames = file_renames(base.lines, placer.target.lines, hunks) if base else []
    placer.plans = [_find(placer, respelled(h, renames)) for h in hunks]
    progress = True
    while progress:
        progress = False
        for i, plan in enumerate(placer.plans):
            if len(plan.spots) > 1:
                progress = _decide(placer, i) or progress
    for plan in placer.plans:
        _settle(placer, plan)
    return placer.plans


def _settle(placer: Placer, plan: Plan) -> None:
    lines = placer.target.lines
    if len(plan.spots) > 1:
        plan.state = PlanState.AMBIGUOUS
    elif len(plan.spots) == 1:
        plan.state = PlanState.PRESENT if _present(lines, plan) else PlanState.APPLY
        if plan.state == PlanState.APPLY and _in_foreign_scope(placer, plan):
            plan.state, plan.spots = PlanState.MISSING, []
    else:
        plan.state = (
            PlanState.PRESENT if _new_there(placer.target, plan.hunk) else PlanState.MISSING
        )
    if plan.state == PlanState.PRESENT:
        plan.rule = Rule.UPSTREAM


def _new_there(target: FileView, hunk: Hunk) -> bool:
    """Its result is in the file (exactly once, or ignoring whitespace and line breaks) and,
    when loosely, its old text is not."""
    if not hunk.added:
        return False
    if len(target.find(hunk.new)) == 1:
        return True
    text = squash(b"".join(target.lines))
    new, old = squash(b"".join(hunk.new)), squash(b"".join(hunk.old))
    return text.count(new) == 1 and (new == old or old not in text)


def _in_foreign_scope(placer: Placer, plan: Plan) -> bool:
    """A single place in another scope than the hunk's own, while its own scope is still in
    the file (a look-alike twin took the context) or the place's scope is another definition
    the base had too (its own was renamed): not a place to write. Asked (and the files
    parsed) only when the lines it changes occur elsewhere in the file too and the lines
    around the place do not match those at base."""
    base = placer.base
    if base is None or plan.base_at is None or language_of(placer.target.path) is None:
        return False
    if not _elsewhere_too(placer.target, plan):
        return False
    if _surroundings(placer, plan, plan.at) >= min(6, len(placer.target.lines) // 4):
        return False
    if base.tree is None or placer.target.tree is None:
        return False
    want = base.hunk_scope(plan.hunk, plan.base_at)
    got = placer.target.hunk_scope(plan.hunk, plan.at)
    if want and not base.tree.named(want):  # a control block: alike ones by surroundings
        return _other_block_fits(placer, plan, want)
    if not want or got == want:
        return False
    if not placer.target.tree.find(want) and not (got and base.tree.find(got)):
        return False  # its scope is gone, and the place is in none the base had: it moved
    plan.note = f"its context matches only in {' > '.join(got) or 'the top level'}"
    return True


def _other_block_fits(placer: Placer, plan: Plan, want: ScopePath) -> bool:
    """The place is in a control block alike the hunk's own (same condition), but another
    alike block's surroundings match the base better: the place may be a look-alike, so the
    hunk is merged (or refused as ambiguous) instead."""
    base, target = placer.base, placer.target
    assert base is not None and base.tree is not None and target.tree is not None
    row = (plan.base_at or 0) + plan.hunk.lead
    own = next((s for s in base.tree.find(want) if s.holds(row)), None)
    here = plan.at + plan.hunk.lead
    if own is None:
        return False
    scores = {
        b: _around(base.lines, own, target.lines, b) for b in target.tree.ending_with(want[-2:])
    }
    mine = max((v for b, v in scores.items() if b.holds(here)), default=0)
    better = [b for b, v in scores.items() if v > mine and not b.holds(here)]
    if not better:
        return False
    plan.note = f"an alike block at line {better[0].start + 1} keeps the surroundings of base"
    return True


def _elsewhere_too(target: FileView, plan: Plan) -> bool:
    """The lines the hunk changes (for an insertion: the lines either side of it) occur at
    another place of the file as well: a look-alike could be the place it found."""
    hunk = plan.hunk
    cut = len(hunk.old) - hunk.trail
    core = list(hunk.old[hunk.lead : cut]) or list(hunk.old[max(hunk.lead - 1, 0) : cut + 1])
    if not core:
        return False
    inside = plan.at + max(hunk.lead - 1, 0)
    return any(s != inside and s != plan.at + hunk.lead for s in target.find(core))


def _around(base: Sequence[bytes], scope: Scope, lines: Sequence[bytes], twin: Scope) -> int:
    """How many telling lines before and after ``twin`` match those around ``scope`` at base."""
    score = 0
    for step, (b, t) in (
        (-1, (scope.start - 1, twin.start - 1)),
        (1, (scope.end + 1, twin.end + 1)),
    ):
        for _ in range(_AROUND):
            if not (0 <= b < len(base) and 0 <= t < len(lines)) or base[b] != lines[t]:
                break
            score, b, t = score + weight(lines[t]), b + step, t + step
    return score


def by_surroundings(
    base: Sequence[bytes], scope: Scope, lines: Sequence[bytes], twins: list[Scope]
) -> list[Scope]:
    """The one block whose surroundings match the base scope's clearly best (a lone block
    too must match some), else none."""
    scores = {i: _around(base, scope, lines, twin) for i, twin in enumerate(twins)}
    best = clear_best(scores)
    return [twins[i] for i, s in scores.items() if s == best] if best is not None else []


def replacement(plan: Plan, found: Sequence[bytes]) -> list[bytes]:
    """The lines that replace ``found`` (the target's lines at the place): the target's own
    context lines (they may differ in whitespace), the hunk's added lines."""
    out: list[bytes] = []
    rest = iter(found)
    for kind, text in plan.hunk.ops:
        if kind == "+":
            out.append(text)
        else:
            line = next(rest, text)
            if kind == " ":
                out.append(line if plan.loose else text)
    return out


def overlapping(plans: Sequence[Plan]) -> bool:
    """Two of the plans cover one line (two hunks found the same lines)."""
    spans = sorted((p.at, p.end) for p in plans)
    return any(end > start for (_, end), (start, _) in itertools.pairwise(spans))


def in_scope(placer: Placer, plan: Plan, at: int) -> bool:
    """With a grammar, the place is in the scope path the hunk had at base, and no twin."""
    base, target = placer.base, placer.target
    if target.tree is None:
        return True
    if base is None or base.tree is None or plan.base_at is None:
        return False
    want = base.hunk_scope(plan.hunk, plan.base_at)
    got = common_prefix([target.tree.scope_path(r) for r in (at - 1, at) if r >= 0])
    return got == want and (not want or len(target.tree.find(want)) == 1)
