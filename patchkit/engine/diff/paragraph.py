"""Placing an inserted block where upstream inserted lines at the same point, by paragraphs.

A hunk that only inserts lines, whose context is intact on both sides, but upstream put lines
of its own between the two sides (a newer release above an older one in a list, a comment
above the line the block goes before): a merge cannot tell which goes first and conflicts.
Blank lines tell. At base the block was *joined* to a side when no blank line stood between
them (its first line right under a non-blank leading line, or its last line right above a
non-blank trailing line). The block goes right after the leading side or right before the
trailing side, whichever place

- keeps it joined to the very line it was joined to at base (a side it was not joined to may
  become upstream's lines, which then precede or follow it in the same paragraph), and
- does not split a paragraph of the target (two non-blank lines side by side) with a block
  that opens or ends with a blank line.

Only one place may qualify: when both do (or neither), the conflict stands. The place must be
in the scope the hunk had at base (no look-alike twin), and the two sides must say something.
Without blank lines around it (a list of ``||`` alternatives) the block is joined on both
sides, and the rule never chooses: that order is a guess.

Where upstream rewrote the lines on one side instead, a block at an edge keeps to that edge:
one that opened a paragraph (a blank line above it) opens it still, after its intact leading
side; one that closed an indented block (the next line less indented: the last note before
``requirements:``) goes right before the line ending that block, when exactly one place has
that line and two more telling context lines where they were at base. A block that was a
paragraph of its own stays between the same two paragraphs, the lines right above and below
the blank run it sits in the same as at base (upstream moving that edge refuses).
"""

from __future__ import annotations

from collections.abc import Sequence

from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.onesided import trimmed
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, in_scope, weight
from patchkit.outcome import Rule

_BETWEEN = 8  # lines upstream may have put between the two sides, at most


def _blank(line: bytes) -> bool:
    return not line.strip()


def _joined(above: bytes | None, below: bytes | None) -> bool:
    """Two lines side by side are one paragraph (neither blank, neither the file's end)."""
    return above is not None and below is not None and not _blank(above) and not _blank(below)


def _sides(target: FileView, hunk: Hunk) -> tuple[int, int] | None:
    """The one pair (leading side's start, trailing side's start) with upstream's lines
    (1 to ``_BETWEEN``) between them; None when there is not exactly one."""
    lead, trail = hunk.old[: hunk.lead], hunk.old[hunk.lead :]
    if sum(weight(line) for line in (*lead, *trail)) < 2:
        return None
    ends = {s + len(lead) for s in target.find(lead)}
    pairs = [
        (end - len(lead), t) for t in target.find(trail) for end in ends if 0 < t - end <= _BETWEEN
    ]
    return pairs[0] if len(pairs) == 1 else None


def _fits(lines: Sequence[bytes], at: int, hunk: Hunk, base_joins: tuple[bool, bool]) -> bool:
    """Whether the block, inserted before ``lines[at]``, keeps its base joins (to the same
    lines) and splits no paragraph of the target."""
    added = hunk.added
    above = lines[at - 1] if at > 0 else None
    below = lines[at] if at < len(lines) else None
    lead_line, trail_line = hunk.old[hunk.lead - 1], hunk.old[hunk.lead]
    if base_joins[0] and (not _joined(above, added[0]) or above != lead_line):
        return False
    if base_joins[1] and (not _joined(added[-1], below) or below != trail_line):
        return False
    opens_or_ends_blank = _blank(added[0]) or _blank(added[-1])
    return not (opens_or_ends_blank and _joined(above, below))


def _between(placer: Placer, plan: Plan) -> tuple[bool, int] | None:
    """Both sides intact, upstream's lines between them: (whether the block keeps its leading
    side, where the kept side starts here), when exactly one place fits."""
    hunk, lines = plan.hunk, placer.target.lines
    sides = _sides(placer.target, hunk)
    if sides is None:
        return None
    joins = (
        _joined(hunk.old[hunk.lead - 1], hunk.added[0]),
        _joined(hunk.added[-1], hunk.old[hunk.lead]),
    )
    after_lead, before_trail = sides[0] + hunk.lead, sides[1]
    fitting = [at for at in (after_lead, before_trail) if _fits(lines, at, hunk, joins)]
    if len(fitting) != 1 or not in_scope(placer, plan, fitting[0]):
        return None
    keep_lead = fitting[0] == after_lead
    return keep_lead, sides[0] if keep_lead else sides[1]


def _edge(placer: Placer, plan: Plan) -> tuple[bool, int] | None:
    """A block that opened a paragraph at base (a blank line right above it, its last line
    joined to the next), whose leading side is intact here but whose next line upstream
    rewrote (gone from the ``_BETWEEN`` lines after it): it opens the paragraph here too.
    Likewise a block that closed a paragraph, by its trailing side. (Whether it keeps its
    leading side, where that side starts here.)"""
    hunk, lines, added = plan.hunk, placer.target.lines, plan.hunk.added
    lead, trail = hunk.old[: hunk.lead], hunk.old[hunk.lead :]
    inner = not _blank(added[0]) and not _blank(added[-1])
    opens = inner and _blank(lead[-1]) and not _blank(trail[0])
    if not inner or opens == (_blank(trail[0]) and not _blank(lead[-1])):
        return None
    kept = lead if opens else trail
    if sum(weight(line) for line in kept) < 2:
        return None
    shift = len(lead) if opens else 0
    spots = [s for s in placer.target.find(kept) if in_scope(placer, plan, s + shift)]
    if len(spots) != 1:
        return None
    at = spots[0] + shift
    near = lines[at : at + _BETWEEN] if opens else lines[max(at - _BETWEEN, 0) : at]
    stuck = trail[0] if opens else lead[-1]
    beside = near[:1] if opens else near[-1:]
    if stuck in near or not beside or _blank(beside[0]):
        return None
    return opens, spots[0]


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip())


def _matches(lines: Sequence[bytes], hunk: Hunk, row: int) -> int:
    """How many telling context lines of the hunk stand here as at base, its trailing side
    starting at ``row`` (line for line: upstream may have rewritten the others)."""
    start = row - hunk.lead
    return sum(
        weight(line)
        for i, line in enumerate(hunk.old)
        if 0 <= start + i < len(lines) and lines[start + i] == line
    )


def _closing(placer: Placer, plan: Plan) -> tuple[bool, int] | None:
    """A block that closed an indented block at base (the line after it less indented than
    each of its lines, the line before it not): it closes that block here too, right before
    that line, when upstream rewrote lines either side, if exactly one place has that line
    and two more telling context lines where they were at base. (False: the trailing side
    is kept; where that line is here.)"""
    hunk, lines = plan.hunk, placer.target.lines
    after, before = hunk.old[hunk.lead], hunk.old[hunk.lead - 1]
    widths = [_indent(line) for line in hunk.added if not _blank(line)]
    if not widths:
        return None  # only blank lines: none tells which block they close
    depth = min(widths)
    if _blank(after) or _blank(before) or _indent(after) >= depth or _indent(before) < depth:
        return None
    rows = [r for r in placer.target.find([after]) if _matches(lines, hunk, r) >= 3]
    if len(rows) != 1 or not in_scope(placer, plan, rows[0]):
        return None
    above = lines[rows[0] - 1] if rows[0] else b""
    return None if _blank(above) or _indent(above) < depth else (False, rows[0])


def _blank_run(lines: Sequence[bytes]) -> int:
    """How many blank lines ``lines`` start with."""
    return next((i for i, line in enumerate(lines) if not _blank(line)), len(lines))


def _anchor(target: FileView, lines: Sequence[bytes]) -> int | None:
    """Where the first of ``lines`` (the hunk's context lines beside the block, nearest it
    first) of the paragraph next to the block that says something and occurs here stands,
    when it occurs once; else None."""
    for line in lines:
        if _blank(line):
            return None  # past the paragraph's edge
        spots = target.find([line]) if weight(line) else []
        if len(spots) == 1:
            return spots[0]
        if spots:
            return None  # the nearest telling line is not one place: no anchor
    return None


def _kept(here: Sequence[bytes], base: Sequence[bytes]) -> bool:
    """A paragraph's side (its lines from the blank run to its anchor, nearest the run first)
    is the base's: the base's line beside the run stands in it, or it has as many lines as at
    base and the line beside the run opens as the base's did (upstream rewrote that line)."""
    edge = base[0].split()
    if any(line.split() == edge for line in here):
        return True
    if len(here) != len(base) or not here or not edge:
        return False
    return here[0].split()[:1] == edge[:1]


def _own_paragraph(placer: Placer, plan: Plan) -> tuple[int, int] | None:
    """A block that was a paragraph of its own at base (blank lines between it and the
    paragraphs either side), where upstream rewrote lines in those paragraphs: it goes
    between the same two paragraphs here, found by a line of each the hunk's context holds
    once in the file, when one run of as many blank lines separates them here as at base
    and the lines right above and below that run are those beside it at base.
    (How many blank lines of that run stay above it, where the run starts here.)"""
    hunk, target = plan.hunk, placer.target
    lead, trail, added = hunk.old[: hunk.lead], hunk.old[hunk.lead :], hunk.added
    above, below = _blank_run(lead[::-1]), _blank_run(trail)
    if not (above or _blank(added[0])) or not (below or _blank(added[-1])):
        return None  # joined to a paragraph on one side: the rules above decide
    if above == len(lead) or below == len(trail) or all(_blank(line) for line in added):
        return None
    top = _anchor(target, lead[: len(lead) - above][::-1])
    bottom = _anchor(target, trail[below:])
    if top is None or bottom is None or not 0 < bottom - top <= len(hunk.old) + _BETWEEN:
        return None
    gap = target.lines[top + 1 : bottom]
    kinds = [_blank(line) for line in gap]
    runs = sum(1 for i, k in enumerate(kinds) if k and (i == 0 or not kinds[i - 1]))
    if runs != 1 or kinds.count(True) != above + below:
        return None
    start = top + 1 + kinds.index(True)
    end = start + above + below
    here = (target.lines[top:start][::-1], target.lines[end : bottom + 1])
    rev, fwd = lead[: len(lead) - above][::-1], trail[below:]
    at_base = (rev[: rev.index(here[0][-1]) + 1], fwd[: fwd.index(here[1][-1]) + 1])
    if not all(_kept(now, was) for now, was in zip(here, at_base, strict=True)):
        return None  # upstream moved the paragraphs' edge: not the same two paragraphs
    return (above, start) if in_scope(placer, plan, start + above) else None


def place_in_paragraph(placer: Placer, plan: Plan) -> bool:
    """Place an inserted block by the paragraphs around it, where upstream inserted lines
    at the same point or rewrote the line it stuck to; True when placed (the plan holds the
    hunk cut to the side it keeps)."""
    hunk = plan.hunk
    if plan.base_at is None or not hunk.lead or not hunk.trail or not hunk.added:
        return False
    if len(hunk.old) != hunk.lead + hunk.trail:
        return False  # one block of inserted lines, nothing removed
    between, closing = _between(placer, plan), None
    found = between or _edge(placer, plan)
    if found is None:
        found = closing = _closing(placer, plan)
    if found is None:
        return _between_paragraphs(placer, plan)
    keep_lead, spot = found
    rest = hunk.trail - 1 if closing else 0  # closing: only the line it goes before is kept
    plan.hunk = trimmed(hunk, 0, hunk.trail) if keep_lead else trimmed(hunk, hunk.lead, rest)
    plan.spots = [spot]
    plan.base_at = plan.base_at + (0 if keep_lead else hunk.lead)
    plan.rule, plan.state = Rule.PARAGRAPH, PlanState.APPLY
    side = "leading" if keep_lead else "trailing"
    why = "inserted lines at the same point" if between else "rewrote the lines beside it"
    how = "before the line that ends its indented block" if closing else "by paragraphs"
    plan.note = f"upstream {why}: kept beside its {side} side, {how}"
    return True


def _between_paragraphs(placer: Placer, plan: Plan) -> bool:
    """Place a block that was a paragraph of its own between the same two paragraphs here
    (``_own_paragraph``); True when placed (the plan holds its inserted lines alone)."""
    found = _own_paragraph(placer, plan)
    if found is None or plan.base_at is None:
        return False
    above, start = found
    hunk = plan.hunk
    plan.hunk = trimmed(hunk, hunk.lead, hunk.trail)
    plan.spots, plan.base_at = [start + above], plan.base_at + hunk.lead
    plan.rule, plan.state = Rule.PARAGRAPH, PlanState.APPLY
    plan.note = "upstream rewrote lines of the paragraphs either side: kept between them"
    return True
