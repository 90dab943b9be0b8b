"""Placing an entry appended to a list whose other entries upstream changed.

A hunk that only inserts lines, each alike the line right above it at base (an entry of a list:
the copyright holders of a header comment), right above a line unlike them that ends the list
(`` * $COPYRIGHT$``): upstream changed or added entries above it, so the leading context is
gone and a merge conflicts. The block ends the list here too, right above its trailing side,
when

- the trailing side stands here once, intact, and says something (two telling lines);
- the line above it here is alike the added lines (the list still ends there), and none of
  the list's lines here is one the block adds (upstream did not take the entry already);
- the place is in the scope the hunk had at base (no look-alike twin).

Lines are alike when their first three tokens are the same and one of them is a word: ``*``,
``Copyright``, ``(`` of `` * Copyright (c) 2026 ...``. Anything less stays a conflict.
"""

from __future__ import annotations

import re

from patchkit.engine.diff.onesided import trimmed
from patchkit.engine.diff.placement import Placer, Plan, PlanState, in_scope, weight
from patchkit.outcome import Rule

_TOKEN = re.compile(rb"\w+|\S")
_HEAD = 3  # tokens two entries of one list open with alike


def _alike(one: bytes, other: bytes) -> bool:
    """Two lines open with the same ``_HEAD`` tokens, one of them a word."""
    head = _TOKEN.findall(one)[:_HEAD]
    return (
        len(head) == _HEAD
        and head == _TOKEN.findall(other)[:_HEAD]
        and any(token[:1].isalpha() for token in head)
    )


def _list_entry(plan: Plan) -> bool:
    """The hunk only inserts lines, each alike the line above it at base, right above a
    non-blank line unlike them."""
    hunk = plan.hunk
    if not hunk.lead or not hunk.trail or len(hunk.old) != hunk.lead + hunk.trail:
        return False
    above, below = hunk.old[hunk.lead - 1], hunk.old[hunk.lead]
    added = hunk.added
    if not added or not below.strip() or any(_alike(line, below) for line in added):
        return False
    return all(_alike(line, prev) for prev, line in zip((above, *added), added, strict=False))


def _list_above(lines: list[bytes], row: int, like: bytes) -> list[bytes]:
    """The run of lines alike ``like`` ending right above ``row``."""
    start = row
    while start > 0 and _alike(lines[start - 1], like):
        start -= 1
    return lines[start:row]


def place_at_list_end(placer: Placer, plan: Plan) -> bool:
    """Place a list entry the hunk appended at base right above its intact trailing side,
    at the end of the list there; True when placed (the plan holds the hunk cut to that side)."""
    if plan.base_at is None or not _list_entry(plan):
        return False
    hunk, lines = plan.hunk, placer.target.lines
    trail = hunk.old[hunk.lead :]
    spots = placer.target.find(trail)
    if len(spots) != 1 or sum(weight(line) for line in trail) < 2:
        return False
    entries = _list_above(lines, spots[0], hunk.added[0])
    if not entries or set(entries) & set(hunk.added) or not in_scope(placer, plan, spots[0]):
        return False
    plan.hunk, plan.spots = trimmed(hunk, hunk.lead, 0), spots
    plan.base_at = plan.base_at + hunk.lead
    plan.rule, plan.state = Rule.PARAGRAPH, PlanState.APPLY
    plan.note = (
        "upstream changed the list it appends to: placed at the list's end, by its trailing side"
    )
    return True
