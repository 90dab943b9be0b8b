"""Placing an entry appended to a list whose other entries upstream changed.

A hunk that only inserts lines, each alike the line right above it at base (an entry of a list:
the copyright holders of a header comment), right above a line unlike them that ends the list
(`` * $COPYRIGHT$``): upstream changed or added entries above it, so the leading context is
gone and a merge conflicts. The block ends the list here too, right above its trailing side,
when

- the trailing side stands here once, intact, and says something (two telling lines);
- the line above it here is alike the added lines (the list still ends there), and none of
  the list's lines here is one the block adds (upstream did not take the entry already);
- the list here is the base's: its entries indented as the added ones, no line opening or
  closing a block (``{``, ``}``, ``} else {``, ``:``, begin/end) between its nearest kept base
  entry and the place, and no entry the same as an added one but for numbers that the base's
  list did not hold so (a holder upstream took, with other years);
- the place is in the scope the hunk had at base (no look-alike twin).

Lines are alike when their first three tokens are the same and one of them is a word: ``*``,
``Copyright``, ``(`` of `` * Copyright (c) 2026 ...``. Anything less stays a conflict.
"""

from __future__ import annotations

import re

from patchkit.engine.diff.onesided import trimmed
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, in_scope, weight
from patchkit.outcome import Rule

_TOKEN = re.compile(rb"\w+|\S")
_HEAD = 3  # tokens two entries of one list open with alike
_NUMBERS = re.compile(rb"[\d\s,-]+")
_KEYWORD = re.compile(rb"(begin|end)\b")
_REACH = 40  # lines above the place searched for a kept entry of the base's list


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip())


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


def _masked(line: bytes) -> bytes:
    """A line with its numbers (years, ranges of years) and spacing masked."""
    return _NUMBERS.sub(b" ", line).strip()


def _opens_or_closes(line: bytes) -> bool:
    """A line that opens or closes a block (``{``, ``}``, ``} else {``, ``:``, begin/end)."""
    text = line.strip()
    return text.endswith((b"{", b":")) or text.startswith(b"}") or bool(_KEYWORD.match(text))


def _same_list(
    hunk: Hunk, lines: list[bytes], row: int, entries: list[bytes], old: list[bytes]
) -> bool:
    """The run of ``entries`` ending above ``row`` is the base's list (``old``, at base):
    indented as its entries, no line opening or closing a block between its nearest kept
    base entry and ``row``, and no entry upstream took already (an added one but for its
    numbers, that the base's list did not hold so)."""
    depth = _indent(hunk.added[0])
    if any(_indent(line) != depth for line in (*entries, *hunk.added)):
        return False
    added = {_masked(line) for line in hunk.added} - {_masked(line) for line in old}
    if any(_masked(line) in added for line in entries):
        return False
    kept = set(_list_above(list(hunk.old), hunk.lead, hunk.added[0]))
    for line in reversed(lines[max(row - _REACH, 0) : row]):
        if line in kept:
            return True
        if _opens_or_closes(line):
            return False
    return True


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
    base = placer.base.lines if placer.base else []
    old = _list_above(base, plan.base_at + hunk.lead, hunk.added[0])
    if not entries or not _same_list(hunk, lines, spots[0], entries, old):
        return False
    if not in_scope(placer, plan, spots[0]):
        return False
    plan.hunk, plan.spots = trimmed(hunk, hunk.lead, 0), spots
    plan.base_at = plan.base_at + hunk.lead
    plan.rule, plan.state = Rule.PARAGRAPH, PlanState.APPLY
    plan.note = (
        "upstream changed the list it appends to: placed at the list's end, by its trailing side"
    )
    return True
