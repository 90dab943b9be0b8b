"""Three-way merges that know scopes.

A hunk whose context is gone is merged from the base blob one scope at a time: the base
function (or class, or CMake block) against the target's function with the same scope path,
so changes elsewhere in the file cannot conflict with it or pull it elsewhere. A base scope
with look-alike twins at the target stops as ``ambiguous``, naming them. Hunks at the top level,
or whose scope is gone, fall back to a whole-file merge, accepted only when every line it
changes sits in a scope one of the hunks had at base.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from patchkit.engine.diff.bodyhome import body_home
from patchkit.engine.diff.fileview import FileView, common_prefix, squash
from patchkit.engine.diff.lastpass import ByStatements, over_deletions
from patchkit.engine.diff.parse import Hunk, split_lines
from patchkit.engine.diff.placement import Placer, Plan, PlanState, by_surroundings, weight
from patchkit.engine.diff.renames import learn, renamed, renamed_hunk
from patchkit.engine.diff.statements import merge_statements
from patchkit.engine.ends import common_ends
from patchkit.engine.structure import Scope, ScopePath
from patchkit.engine.structure.overloads import by_signature
from patchkit.gitrepo import MergeResult
from patchkit.outcome import Candidate, Rule

Merger = Callable[[bytes, bytes, bytes, tuple[str, str, str]], MergeResult]


@dataclass(frozen=True)
class Edit:
    start: int  # first target line replaced (0-based)
    end: int  # one past the last
    lines: list[bytes]
    plans: tuple[Plan, ...]  # the hunks this edit carries


@dataclass
class Stop:
    """Why merging stopped: ``ambiguous`` (twins) or ``conflict``, per hunk."""

    kind: str
    reasons: list[tuple[Hunk, str, bytes]] = field(default_factory=list)  # hunk, why, ours
    conflicted: bytes | None = None  # the file with labelled conflict markers
    candidates: tuple[Candidate, ...] = ()


def _core(plan: Plan) -> tuple[int, int, list[bytes]]:
    """The base rows a hunk really changes (its context left out), and what replaces them."""
    hunk = plan.hunk
    start = (plan.base_at or 0) + hunk.lead
    removed = len(hunk.old) - hunk.lead - hunk.trail
    return start, start + removed, list(hunk.new[hunk.lead : len(hunk.new) - hunk.trail])


def apply_at_base(base: Sequence[bytes], plans: Sequence[Plan], offset: int = 0) -> list[bytes]:
    """The base lines with these hunks' changes made at their base places (``offset``: where
    ``base`` starts in the base blob; each change must lie inside it)."""
    out = list(base)
    for plan in sorted(plans, key=lambda p: p.base_at or 0, reverse=True):
        start, end, lines = _core(plan)
        out[start - offset : end - offset] = lines
    return out


def _inside(scope: Scope, plan: Plan) -> bool:
    if plan.base_at is None:
        return False
    start, end, _ = _core(plan)
    return scope.start <= start and end <= scope.end + 1


def _base_scope(base: FileView, plan: Plan) -> Scope | None:
    if base.tree is None or plan.base_at is None:
        return None
    path = base.hunk_scope(plan.hunk, plan.base_at)
    row = plan.base_at + plan.hunk.lead
    return next((s for s in base.tree.find(path) if s.holds(row)), None) if path else None


def _twins(twins: list[Scope]) -> tuple[Candidate, ...]:
    return tuple(Candidate(s.start + 1, s.path) for s in twins)


@dataclass
class ScopeMerge:
    placer: Placer
    merge: Merger
    labels: tuple[str, str, str]
    edits: list[Edit] = field(default_factory=list)
    leftover: list[Plan] = field(default_factory=list)  # to merge with the whole file
    # the scope moved to another file (found by name and body): context upstream changed
    # right next to the hunk's own lines may be merged too; in place, only lines inserted
    moved: bool = False

    def run(self, missing: Sequence[Plan]) -> Stop | None:
        done: set[int] = set()
        for plan in missing:
            if id(plan) in done:
                continue
            stop = self._one(plan, done)
            if stop is not None:
                return stop
        return None

    def _one(self, plan: Plan, done: set[int]) -> Stop | None:
        base, target = self.placer.base, self.placer.target
        scope = _base_scope(base, plan) if base is not None else None
        if base is None or scope is None or target.tree is None:
            self.leftover.append(plan)
            return None
        twins = by_signature(base.lines, scope, target.lines, target.tree.find(scope.path))
        if not scope.named:  # a control block has no name: found by what is around it
            alike = target.tree.ending_with(scope.path[-2:])
            twins = by_surroundings(base.lines, scope, target.lines, alike)
            if not twins and len(alike) > 1:
                twins = alike  # several, none clearly the one: ambiguous, naming them
        if len(twins) != 1:
            if not twins:
                self._unfound(scope, plan, done)
                return None
            where = ", ".join(f"line {s.start + 1}" for s in twins)
            why = f"its scope {' > '.join(scope.path)} has look-alike twins at {where}"
            return Stop("ambiguous", [(plan.hunk, why, b"")], candidates=_twins(twins))
        group = [p for p in self.placer.plans if _inside(scope, p)]
        if plan not in group:
            self.leftover.append(plan)
            return None
        done.update(id(p) for p in group)
        stop = self._region(scope, twins[0], group)
        return None if stop and stop.kind == "conflict" and self._body_moved(scope, group) else stop

    def _unfound(self, scope: Scope, plan: Plan, done: set[int]) -> None:
        """No scope here has the base's path: its hunks merged where its body went under
        another name (the last pass), else left to the whole-file merge."""
        group = [p for p in self.placer.plans if _inside(scope, p)]
        if plan in group and self._body_moved(scope, group):
            done.update(id(p) for p in group)
        else:
            self.leftover.append(plan)

    def _body_moved(self, scope: Scope, group: list[Plan]) -> bool:
        """In the last pass, the base ``scope`` merged into the definition that holds its body
        here under another name (:mod:`bodyhome`), as into a moved one; False when there is
        none, or that merge conflicts too."""
        base, target = self.placer.base, self.placer.target
        if not isinstance(self.merge, ByStatements) or base is None:
            return False
        home = body_home(base, scope, target)
        if home is None:
            return False
        there = ScopeMerge(self.placer, self.merge, self.labels, moved=True)
        if there.merge_into(scope, home, group) is not None:
            return False
        self.edits += there.edits
        _note(group, f"its body found under another name: {' > '.join(home.path)}")
        return True

    def merge_into(self, scope: Scope, mine: Scope, group: list[Plan]) -> Stop | None:
        """Merge the base ``scope`` with these hunks into the target's scope ``mine`` (found
        by name, wherever it went); its edit is added to :attr:`edits`."""
        return self._region(scope, mine, group)

    def _region(self, scope: Scope, mine: Scope, group: list[Plan]) -> Stop | None:
        base, target = self.placer.base, self.placer.target
        assert base is not None
        base_part = base.lines[scope.start : scope.end + 1]
        theirs = apply_at_base(base_part, group, scope.start)
        ours = target.lines[mine.start : mine.end + 1]
        texts = (b"".join(ours), b"".join(base_part), b"".join(theirs))
        merged = self.merge(*texts, self.labels)
        lines = None
        if merged.conflicts:
            # a conflict may still be merged by the hunks' own lines, untouched in the scope
            lines = _by_lines(target.lines, mine, group)
            lines = lines or _by_own_lines(target.lines, mine, group, self.moved)
            merged = merged if lines else self._again(merged, (ours, base_part, theirs), group)
        if lines is not None:
            for plan in group:
                plan.rule, plan.state, plan.spots = Rule.SCOPE_LINES, PlanState.MERGED, []
                plan.merged_into = (_landed(lines, plan, mine.start), mine.path)
            self.edits.append(Edit(mine.start, mine.end + 1, lines, tuple(group)))
            return None
        if merged.conflicts:
            whole = [*target.lines[: mine.start], merged.content, *target.lines[mine.end + 1 :]]
            why = f"three-way merge conflict with an upstream change in {' > '.join(scope.path)}"
            return Stop("conflict", [(p.hunk, why, texts[0]) for p in group], b"".join(whole))
        for plan in group:
            plan.rule, plan.state, plan.spots = Rule.SCOPE_MERGE, PlanState.MERGED, []
            plan.merged_into = (_landed(split_lines(merged.content), plan, mine.start), mine.path)
        self.edits.append(Edit(mine.start, mine.end + 1, split_lines(merged.content), tuple(group)))
        return None

    def _again(
        self, merged: MergeResult, sides: tuple[list[bytes], ...], group: list[Plan]
    ) -> MergeResult:
        """In the last pass (:class:`ByStatements`), a conflicting merge of (ours, base,
        theirs) merged by statements (upstream's change and the patch's meet between two),
        else with upstream's renames made first; else ``merged`` as it was."""
        path, (ours, base_part, theirs) = self.placer.target.path, sides
        if not isinstance(self.merge, ByStatements):  # the last pass only
            return merged
        again = merge_statements(path, b"".join(ours), b"".join(base_part), b"".join(theirs))
        if again is not None:
            _note(group, "merged by statements beside an upstream change in the next one")
            return MergeResult(again, 0)
        return self._renamed(sides, group) or over_deletions(path, sides, group) or merged

    def _renamed(self, sides: tuple[list[bytes], ...], group: list[Plan]) -> MergeResult | None:
        """The merge with the renames upstream made in the scope (:mod:`renames`) made in the
        base and the patched scope, and in the hunks; None when there are none or it still
        conflicts."""
        ours, base_part, theirs = sides
        renames = learn(base_part, ours)
        base_as = b"".join(renamed(base_part, renames))
        if not renames or base_as == b"".join(base_part):
            return None
        theirs_as = b"".join(renamed(theirs, renames))
        result = self.merge(b"".join(ours), base_as, theirs_as, self.labels)
        again: bytes | None = result.content
        if result.conflicts:
            again = merge_statements(self.placer.target.path, b"".join(ours), base_as, theirs_as)
        if again is None:
            return None
        for plan in group:
            plan.hunk = renamed_hunk(plan.hunk, renames)
        _note(group, "upstream's renames made in its lines: " + ", ".join(map(str, renames)))
        return MergeResult(again, 0)


def _note(group: Sequence[Plan], why: str) -> None:
    for plan in group:
        plan.note = "; ".join(n for n in (plan.note, why) if n)


_INSERTED = 8  # lines upstream may have put between a hunk's context lines, at most


def _landed(lines: Sequence[bytes], plan: Plan, offset: int) -> int:
    """The target line where the hunk's first added (else first kept) lines landed."""
    hunk = plan.hunk
    block = list(hunk.added[:1]) or list(hunk.new[hunk.lead : hunk.lead + 1])
    spots = FileView("", lines).find(block) if block else []
    return offset + (spots[0] if spots else 0)


def _in_order(
    ours: Sequence[bytes], wanted: Sequence[bytes], start: int, step: int, spare: int = _INSERTED
) -> bool:
    """Each of ``wanted`` found walking from ``start`` by ``step``, in that order, with at
    most ``spare`` other lines between them in all."""
    i = start
    for line in wanted:
        while 0 <= i < len(ours) and ours[i] != line and spare > 0:
            i, spare = i + step, spare - 1
        if not 0 <= i < len(ours) or ours[i] != line:
            return False
        i += step
    return True


def _by_lines(whole: list[bytes], mine: Scope, group: Sequence[Plan]) -> list[bytes] | None:
    """The scope with each hunk's removed lines replaced where they occur exactly once in
    it, when all its context lines are still there around them, in order, upstream having
    only inserted lines between them; None otherwise (or for a hunk that only inserts)."""
    spans = []
    ours = whole[mine.start : mine.end + 1]
    view = FileView("", ours)
    for plan in group:
        hunk = plan.hunk
        cut = len(hunk.old) - hunk.trail
        removed = list(hunk.old[hunk.lead : cut])
        spots = view.find(removed) if removed else []
        if len(spots) != 1:
            return None
        at, end = spots[0], spots[0] + len(removed)
        before = list(reversed(hunk.old[: hunk.lead]))
        first, after = mine.start + at - 1, mine.start + end
        if not (_in_order(whole, before, first, -1) and _in_order(whole, hunk.old[cut:], after, 1)):
            return None
        spans.append((at, end, list(hunk.new[hunk.lead : len(hunk.new) - hunk.trail])))
    return _splice(ours, spans)


def _splice(ours: list[bytes], spans: list[tuple[int, int, list[bytes]]]) -> list[bytes] | None:
    """``ours`` with each span's lines replaced by its added lines; None where two overlap."""
    spans = sorted(spans, key=lambda span: span[0])
    if any(a[1] > b[0] for a, b in itertools.pairwise(spans)):
        return None
    out = list(ours)
    for start, stop, added in reversed(spans):
        out[start:stop] = added
    return out


_TELLING = 12  # characters (whitespace left out) a hunk's own lines need to be evidence


def _own_span(ours: Sequence[bytes], hunk: Hunk) -> tuple[int, int] | None:
    """Where the hunk's own lines are in ``ours`` (a scope's lines), untouched: the lines it
    removes, found exactly once, saying something (``_TELLING`` characters); for a hunk that only
    inserts, its nearest context line above and below, found once and still side by side, one
    of them saying something (a blank line and the function's ``return``)."""
    cut = len(hunk.old) - hunk.trail
    removed = list(hunk.old[hunk.lead : cut])
    view = FileView("", ours)
    if removed:
        spots = view.find(removed)
        telling = sum(len(squash(line)) for line in removed) >= _TELLING
        return (spots[0], spots[0] + len(removed)) if len(spots) == 1 and telling else None
    if not hunk.lead or not hunk.trail:
        return None
    pair = [hunk.old[hunk.lead - 1], hunk.old[hunk.lead]]
    spots = view.find(pair)
    if len(spots) != 1 or not any(weight(line) for line in pair):
        return None
    return spots[0] + 1, spots[0] + 1


def _placed_span(plan: Plan, mine: Scope) -> tuple[int, int] | None:
    """Where a hunk of the group that its context placed here (once, inside ``mine``) has
    its lines, in the scope's rows; None for any other (its own lines must show where)."""
    if plan.state is not PlanState.APPLY or not mine.start <= plan.at <= plan.end <= mine.end + 1:
        return None
    return plan.at - mine.start, plan.end - mine.start


_NEXT_TO = 16  # lines upstream may have inserted between a hunk's own lines and its context


def _beside(ours: Sequence[bytes], hunk: Hunk, span: tuple[int, int]) -> bool:
    """The context lines next to the hunk's own lines at base are still beside them here,
    unchanged, upstream having at most inserted lines (``_NEXT_TO``) between."""
    cut = len(hunk.old) - hunk.trail
    above, below = hunk.old[: hunk.lead][-1:], hunk.old[cut : cut + 1]
    up = _in_order(ours, above, span[0] - 1, -1, _NEXT_TO)
    return up and _in_order(ours, below, span[1], 1, _NEXT_TO)


def _by_own_lines(
    whole: list[bytes], mine: Scope, group: Sequence[Plan], moved: bool
) -> list[bytes] | None:
    """The scope with each hunk's own lines (those it removes, or the two it inserts between)
    replaced where they stand untouched, once, in it: upstream inserted lines next to them
    (or, in a scope that moved, changed context lines there: a renamed callee, a new
    condition above), not the lines the patch changes. None when a hunk's own lines are not
    so (the conflict stands): in place, a context line changed right next to them is a
    conflict (it may be part of the change, as git says)."""
    ours = whole[mine.start : mine.end + 1]
    spans = []
    for plan in group:
        hunk = plan.hunk
        span = _placed_span(plan, mine) or _own_span(ours, hunk)
        if span is None or not (moved or _beside(ours, hunk, span)):
            return None
        spans.append((*span, list(hunk.new[hunk.lead : len(hunk.new) - hunk.trail])))
    return _splice(ours, spans)


def _regions(old: list[bytes], new: list[bytes]) -> list[tuple[int, int]]:
    """The target line spans a merge changed (insertions are empty spans)."""
    head, tail = common_ends(old, new)
    matcher = difflib.SequenceMatcher(
        None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=False
    )
    return [(head + i1, head + i2) for tag, i1, i2, _, _ in matcher.get_opcodes() if tag != "equal"]


def _region_scope(target: FileView, start: int, end: int) -> ScopePath:
    tree = target.tree
    assert tree is not None
    rows = list(range(start, end)) or [r for r in (start - 1, end) if 0 <= r < len(target.lines)]
    return common_prefix([tree.scope_path(r) for r in rows]) if rows else ()


def misplaced(placer: Placer, merged: list[bytes]) -> list[tuple[ScopePath, int]]:
    """The changes a whole-file merge made outside every scope the hunks had at base:
    (scope path, 1-based line) for each; empty when all sit where they belong."""
    base, target = placer.base, placer.target
    if base is None or base.tree is None or target.tree is None:
        return []
    wanted: set[ScopePath] = set()
    for plan in placer.plans:
        if plan.base_at is not None:
            wanted |= base.touched_scopes(plan.hunk, plan.base_at)
    bad = []
    for start, end in _regions(target.lines, merged):
        got = _region_scope(target, start, end)
        if not any(got == w or (w and got[: len(w)] == w) for w in wanted):
            bad.append((got, start + 1))
    return bad
