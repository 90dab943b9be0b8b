"""Placing a hunk when one side of its context was changed by an unrelated upstream edit.

A hunk whose context is gone, and whose three-way merge conflicts, may still have one side
of its context intact: upstream only edited the lines just above it (the end of the previous
function) or just below. Context lines are dropped from the changed side, nearest the far end
first, until the rest (the lines the hunk changes and the whole intact side) occurs exactly
once in the file. The place is taken only when the evidence holds without the dropped lines:

- the intact side says something (two telling lines), or it is the end (start) of the file
  both at base and here;
- a hunk that only inserts needs a grammar, and its intact side must open (close) a scope
  both at base and here: a new function goes before the next one or after the previous one;
- with a grammar, the place sits in the scope path the hunk had at base, and that scope has
  no look-alike twin here; without one, the intact side must be a file end, or the change
  right beside the dropped side only inserts lines apart from upstream's rewrite there,
  which the base's own lines bound on its far side (:mod:`patchkit.engine.diff.beside`);
- the nearest definition on the dropped side at base is still on that side here (hunk order:
  a new function never lands on the other side of a neighbour upstream moved);
- the lines the hunk changes do not sit right beside a dropped line of their own scope: upstream
  rewrote the statement next to them (``items.sort()`` became ``items.sort(reverse=True)``
  above ``return items[0]``), which a merge of two statements must judge, not this rule,
  unless the change there only inserts lines apart from that rewrite (``beside``).

A hunk that appended a paragraph of its own at the end of the file (a new test, a new task)
goes at the end here too, after what upstream appended there, when it belongs to what it
belonged to at base (the top level, or the same enclosing line); one that appended it at the
end of the block closing the file goes above those closing lines
(:mod:`patchkit.engine.diff.closing`).

Anything less stays a conflict: this is never a guess.
"""

from __future__ import annotations

import dataclasses

from patchkit.engine.diff.beside import inserted_apart
from patchkit.engine.diff.closing import place_above_closing
from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.paraclose import place_closing_paragraph
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, weight
from patchkit.engine.structure import Scope
from patchkit.outcome import Rule


def trimmed(hunk: Hunk, lead: int, trail: int) -> Hunk:
    """``hunk`` without its first ``lead`` and last ``trail`` context lines."""
    ops = hunk.ops[lead : len(hunk.ops) - trail]
    return dataclasses.replace(
        hunk,
        old_start=hunk.old_start + lead,
        old=tuple(text for kind, text in ops if kind != "+"),
        new=tuple(text for kind, text in ops if kind != "-"),
        ops=ops,
    )


@dataclasses.dataclass(frozen=True)
class _Try:
    hunk: Hunk  # the hunk with the changed side's lines dropped
    at: int  # where its old lines start here
    base_at: int  # where they start at base
    lead_kept: bool  # the leading side is the intact one


def _trials(placer: Placer, plan: Plan) -> list[_Try]:
    """For each side, the fewest lines dropped from it that leave one place here."""
    hunk, base_at = plan.hunk, plan.base_at or 0
    found = []
    for lead_kept, count in ((False, hunk.lead), (True, hunk.trail)):
        for drop in range(1, count + 1):
            cut = trimmed(hunk, 0, drop) if lead_kept else trimmed(hunk, drop, 0)
            spots = placer.target.find(cut.old)
            if len(spots) == 1:
                at_base = base_at + (0 if lead_kept else drop)
                found.append(_Try(cut, spots[0], at_base, lead_kept))
            if spots:
                break  # more lines dropped can only match more places
    return found


def _intact(trial: _Try) -> tuple[bytes, ...]:
    hunk = trial.hunk
    return hunk.old[: hunk.lead] if trial.lead_kept else hunk.old[len(hunk.old) - hunk.trail :]


def _file_end(base: FileView, target: FileView, trial: _Try) -> bool:
    """The intact side is the start (leading) or end (trailing) of the file, at base and here."""
    if trial.lead_kept:
        return trial.base_at == 0 and trial.at == 0
    n = len(trial.hunk.old)
    return trial.base_at + n == len(base.lines) and trial.at + n == len(target.lines)


def _edge(view: FileView, trial: _Try, at: int) -> bool:
    """The intact side opens (trailing) or closes (leading) a scope at ``at`` in ``view``."""
    tree, hunk = view.tree, trial.hunk
    if tree is None:
        return False
    row = at + hunk.lead - 1 if trial.lead_kept else at + hunk.lead
    scope = tree.scope_at(row)
    return scope is not None and (scope.end == row if trial.lead_kept else scope.start == row)


def _scoped(base: FileView, target: FileView, trial: _Try) -> bool:
    """The place is in the scope path the hunk had at base, and no other scope here has that
    path (a look-alike twin, or a control block alike its own)."""
    if base.tree is None or target.tree is None:
        return False
    want = base.hunk_scope(trial.hunk, trial.base_at)
    if target.hunk_scope(trial.hunk, trial.at) != want:
        return False
    return not want or len(target.tree.find(want)) == 1  # twins, alike blocks: no place


def _dropped_neighbour(base: FileView, trial: _Try) -> Scope | None:
    """The definition nearest the hunk at base on the side whose lines were dropped (the
    outermost, when several end or start at the same line)."""
    if base.tree is None:
        return None
    row = trial.base_at + trial.hunk.lead  # where the hunk's change starts at base
    named = [s for s in base.tree.scopes if s.named]
    if trial.lead_kept:  # the trailing side was dropped: the definition after it
        after = [s for s in named if s.start >= row + len(trial.hunk.old) - trial.hunk.lead]
        return min(after, key=lambda s: (s.start, len(s.path)), default=None)
    before = [s for s in named if s.end < row]
    return min(before, key=lambda s: (-s.end, len(s.path)), default=None)


def _in_order(base: FileView, target: FileView, trial: _Try) -> bool:
    """The neighbour on the dropped side is still on that side here (a new function goes
    between its neighbours, never on the other side of one that upstream moved)."""
    neighbour = _dropped_neighbour(base, trial)
    found = target.tree.find(neighbour.path) if neighbour and target.tree else []
    if len(found) != 1:
        return True  # gone, or not one: nothing to keep the order of
    row = trial.at + trial.hunk.lead
    return found[0].start >= row if trial.lead_kept else found[0].end < row


def _holds(placer: Placer, trial: _Try) -> bool:
    base, target, hunk = placer.base, placer.target, trial.hunk
    assert base is not None
    end = _file_end(base, target, trial)
    if sum(weight(line) for line in _intact(trial)) < 2 and not end:
        return False
    removes = len(hunk.old) > hunk.lead + hunk.trail
    if not removes and not (_edge(base, trial, trial.base_at) and _edge(target, trial, trial.at)):
        return False
    if target.tree is None:
        return removes and (end or _apart(base, target, trial))
    if removes and _beside_rewrite(base, target, trial):
        return False
    return _scoped(base, target, trial) and _in_order(base, target, trial)


def _beside_rows(trial: _Try) -> tuple[int, int, int] | None:
    """(the hunk's first or last old line at base, the dropped line beside it at base, where
    that dropped side starts here) when the change sits right beside the dropped side; None
    when intact context lines stand between the change and what upstream rewrote."""
    hunk = trial.hunk
    if trial.lead_kept:
        changed = trial.base_at + len(hunk.old) - 1
        return None if hunk.trail else (changed, changed + 1, trial.at + len(hunk.old))
    return None if hunk.lead else (trial.base_at, trial.base_at - 1, trial.at)


def _apart(base: FileView, target: FileView, trial: _Try) -> bool:
    """The change right beside the dropped side only inserts lines apart from upstream's
    rewrite there (:mod:`patchkit.engine.diff.beside`)."""
    edge = _beside_rows(trial)
    if edge is None:
        return False
    rows = (edge[1] if trial.lead_kept else edge[0], edge[2])
    return inserted_apart(base.lines, target.lines, trial.hunk, rows, trial.lead_kept)


def _beside_rewrite(base: FileView, target: FileView, trial: _Try) -> bool:
    """The hunk's first (leading side dropped) or last (trailing side dropped) changed line
    sits right beside a dropped line, in the same scope at base, and is not lines inserted
    apart from upstream's rewrite there."""
    edge, tree = _beside_rows(trial), base.tree
    if edge is None or tree is None or tree.scope_path(edge[0]) != tree.scope_path(edge[1]):
        return False
    return not _apart(base, target, trial)


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip())


def _holder(lines: list[bytes], indent: int) -> bytes | None:
    """The last line of ``lines`` indented less than ``indent`` (what a block so indented
    appended after them belongs to); None at the top level."""
    if indent == 0:
        return None
    return next((ln for ln in reversed(lines) if ln.strip() and _indent(ln) < indent), b"")


def _appended(placer: Placer, plan: Plan) -> bool:
    """A hunk that adds a paragraph of its own at the end of the file (no trailing context,
    only insertions, its added lines opening with a blank line), whose leading context
    upstream changed (the release's file ends otherwise): appended at the end here too, when
    what it belongs to is what it belonged to at base (a top-level block; else the same
    enclosing line, so a method never goes into another class)."""
    base, lines, hunk = placer.base, placer.target.lines, plan.hunk
    added = hunk.new[hunk.lead :]
    if base is None or plan.base_at is None or hunk.trail or len(hunk.old) != hunk.lead:
        return False
    if plan.base_at + len(hunk.old) != len(base.lines) or not lines or not added:
        return False
    first = next((ln for ln in added if ln.strip()), None)
    if added[0].strip() or first is None:
        return False
    if not lines[-1].endswith(b"\n") or not lines[-1].strip():
        return False
    if _holder(base.lines, _indent(first)) != _holder(lines, _indent(first)):
        return False
    plan.hunk, plan.spots = trimmed(hunk, hunk.lead, 0), [len(lines)]
    plan.base_at = plan.base_at + hunk.lead
    plan.rule, plan.state = Rule.END_OF_FILE, PlanState.APPLY
    plan.note = f"{hunk.lead} leading context line(s) changed upstream: appended at the file's end"
    return True


def place_one_sided(placer: Placer, plan: Plan) -> bool:
    """Place a hunk whose context is gone by the lines it changes and its intact side (or at
    the end of the file, where it appended a paragraph of its own at base); True when it was
    placed (its plan now holds the shortened hunk, at one place)."""
    if placer.base is None or plan.base_at is None or not plan.hunk.old:
        return False
    if _appended(placer, plan):
        return True
    trials = _trials(placer, plan)
    holding = [t for t in trials if _holds(placer, t)]
    if len({t.at + t.hunk.lead for t in trials}) != 1 or not holding:
        return place_above_closing(placer, plan) or place_closing_paragraph(placer, plan)
    trial = holding[0]
    dropped = len(plan.hunk.old) - len(trial.hunk.old)
    side = "leading" if not trial.lead_kept else "trailing"
    plan.hunk, plan.spots, plan.base_at = trial.hunk, [trial.at], trial.base_at
    plan.rule, plan.state = Rule.ONE_SIDE, PlanState.APPLY
    plan.note = f"{dropped} {side} context line(s) changed upstream: placed by the other side"
    return True
