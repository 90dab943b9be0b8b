"""A hunk whose change blocks lie in several scopes, merged scope by scope.

``git diff`` joins change blocks whose context lines meet into one hunk, so one hunk may change
the end of one function and the start of the next. Such a hunk has no scope of its own (only
the one around both), so its merge falls to the whole file, where an upstream change in either
function makes the whole hunk conflict. When that merge conflicted, the hunk is cut into one
hunk per scope its change blocks lie in (each block keeps the hunk's context lines around it,
which are lines of the base), and each is merged into its own scope: by the scope against the
same scope here, else by its own lines (:class:`~patchkit.engine.diff.scopemerge.ScopeMerge`).
The file is carried only when every part is merged so; else the conflict stands. The result
then passes the structural check like any other.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, replacement
from patchkit.engine.diff.scopemerge import Edit, Merger, ScopeMerge
from patchkit.engine.structure import Scope

_CONTEXT = 3  # context lines a part keeps on each side (from the hunk's own), at most

Span = tuple[int, int]  # a slice of a hunk's ops


def _blocks(hunk: Hunk) -> list[Span]:
    """The hunk's change blocks: runs of removed and added lines, as spans of its ops."""
    spans, i = [], 0
    for changed, group in itertools.groupby(hunk.ops, key=lambda op: op[0] != " "):
        n = len(list(group))
        if changed:
            spans.append((i, i + n))
        i += n
    return spans


def _old_before(hunk: Hunk, start: int) -> int:
    """How many old lines the hunk has before its op ``start``."""
    return sum(1 for kind, _ in hunk.ops[:start] if kind != "+")


def _part(hunk: Hunk, start: int, stop: int) -> Hunk:
    """The hunk's ops ``start:stop`` as a hunk of its own (its header stays the hunk's, so
    a report names the hunk the part is of)."""
    ops = hunk.ops[start:stop]
    return dataclasses.replace(
        hunk,
        old_start=hunk.old_start + _old_before(hunk, start),
        old=tuple(text for kind, text in ops if kind != "+"),
        new=tuple(text for kind, text in ops if kind != "-"),
        added=tuple(text for kind, text in ops if kind == "+"),
        ops=ops,
    )


def _owner(base: FileView, hunk: Hunk, at: int) -> Scope | None:
    """The base scope a part's change lies in (None: the top level, or no grammar)."""
    tree = base.tree
    path = base.hunk_scope(hunk, at)
    row = at + hunk.lead
    return next((s for s in tree.find(path) if s.holds(row)), None) if tree and path else None


def _spans(hunk: Hunk) -> list[Span]:
    """Each change block with up to ``_CONTEXT`` of the hunk's context lines either side,
    never reaching into the next or previous block."""
    blocks, n = _blocks(hunk), len(hunk.ops)
    spans = []
    for i, (a, b) in enumerate(blocks):
        low = blocks[i - 1][1] if i else 0
        high = blocks[i + 1][0] if i + 1 < len(blocks) else n
        spans.append((max(a - _CONTEXT, low), min(b + _CONTEXT, high)))
    return spans


def _cut(base: FileView, plan: Plan) -> list[Plan] | None:
    """The plan's hunk as one plan per scope its change blocks lie in (blocks side by side
    in one scope stay one part); None when they all lie in one, or one lies at the top level."""
    hunk, at = plan.hunk, plan.base_at
    if at is None:
        return None
    spans = _spans(hunk)
    owners = [_owner(base, _part(hunk, s, e), at + _old_before(hunk, s)) for s, e in spans]
    if any(o is None for o in owners) or len({o for o in owners}) < 2:
        return None
    parts: list[tuple[int, int, Scope]] = []
    for (s, e), owner in zip(spans, owners, strict=True):
        assert owner is not None
        if parts and parts[-1][2] == owner:
            parts[-1] = (parts[-1][0], e, owner)
        else:
            parts.append((s, e, owner))
    return [
        dataclasses.replace(
            plan,
            hunk=_part(hunk, s, e),
            spots=[],
            base_at=at + _old_before(hunk, s),
            state=PlanState.MISSING,
            note=f"part {k} of {len(parts)} of a hunk spanning scopes, in {' > '.join(o.path)}",
        )
        for k, (s, e, o) in enumerate(parts, 1)
    ]


def merged_by_parts(
    placer: Placer, plans: Sequence[Plan], merge: Merger, labels: tuple[str, str, str]
) -> list[Edit] | None:
    """The edits of ``plans`` (as placed, before any merge) when each hunk spanning several
    scopes, cut into its parts, and every other missing hunk merge scope by scope; None when
    no hunk spans scopes, or any part does not merge so (the conflict stands). On success
    ``placer.plans`` holds the parts in place of their hunks."""
    base = placer.base
    if base is None or base.tree is None or placer.target.tree is None:
        return None
    out: list[Plan] = []
    cut_any = False
    for plan in plans:
        parts = _cut(base, plan) if plan.state == PlanState.MISSING else None
        cut_any = cut_any or parts is not None
        out.extend(parts or [plan])
    if not cut_any:
        return None
    placer.plans = out
    scoped = ScopeMerge(placer, merge, labels)
    if scoped.run([p for p in out if p.state == PlanState.MISSING]) or scoped.leftover:
        return None
    folded = {id(p) for e in scoped.edits for p in e.plans}
    lines = placer.target.lines
    return [*scoped.edits] + [
        Edit(p.at, p.end, replacement(p, lines[p.at : p.end]), (p,))
        for p in out
        if p.state == PlanState.APPLY and id(p) not in folded
    ]
