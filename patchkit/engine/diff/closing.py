"""Placing a paragraph appended at the end of the block that closes the file.

A hunk that only inserts a block right above the file's last lines (the ``}`` closing a test
file's ``start_server {`` block), a blank line between the block and the lines above it at
base, whose leading context upstream changed (the release ends that block with other tests):
a merge conflicts, and no context line but the closing ones is left to place it by. The block
goes right above those same closing lines here, when

- the hunk's trailing context is the file's end at base and here, line for line, and its first
  line is indented less than the block (it closes what the block is in);
- the block belongs to what it belonged to at base: the last line above it less indented than
  its first line (``start_server {tags {"hash"}} {``) is the same line at base and here,
  and that line occurs once in the file at base and once here (no twin block);
- the block was a paragraph of its own at base on its leading side (its leading context ends
  with a run of blank lines, above a line that is not blank), and none of its runs of added
  lines stands in the file already.

The block keeps the separation it had at base: where the line above the place here is not
blank, the base's run of blank lines is written above the block (the only lines this rule
writes that the diff does not add: the blank context line the hunk had beside it); where a run
as long stands there, nothing more. A run of another length refuses. Anything less stays a
conflict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState
from patchkit.outcome import Rule


def _blank(line: bytes) -> bool:
    return not line.strip()


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip())


def _blank_run(lines: Sequence[bytes]) -> int:
    """How many blank lines ``lines`` end with."""
    return next((i for i, line in enumerate(reversed(lines)) if not _blank(line)), len(lines))


def _holder(lines: Sequence[bytes], indent: int) -> bytes | None:
    """The last line of ``lines`` indented less than ``indent`` (None: none)."""
    return next((ln for ln in reversed(lines) if not _blank(ln) and _indent(ln) < indent), None)


def _closes(base: Sequence[bytes], target: Sequence[bytes], hunk: Hunk) -> bool:
    """The hunk's trailing context ends the file at base and here, and its first line is
    indented less than the block it closes."""
    trail = list(hunk.old[hunk.lead :])
    first = next((line for line in hunk.added if not _blank(line)), None)
    if first is None or _blank(trail[0]) or _indent(trail[0]) >= _indent(first):
        return False
    return base[len(base) - len(trail) :] == trail and target[len(target) - len(trail) :] == trail


def _separators(placer: Placer, plan: Plan) -> tuple[bytes, ...] | None:
    """The blank lines to write above the block here (none when the run the block had at
    base stands there already); None when the rule does not hold."""
    base, target, hunk = placer.base, placer.target, plan.hunk
    if base is None or plan.base_at is None or not hunk.lead or not hunk.trail:
        return None
    lead = hunk.old[: hunk.lead]
    run = _blank_run(lead)
    if len(hunk.old) != hunk.lead + hunk.trail or not run or run == len(lead):
        return None
    if _blank(hunk.added[0]) or not _closes(base.lines, target.lines, hunk):
        return None
    at_base, at = plan.base_at + hunk.lead, len(target.lines) - hunk.trail
    depth = _indent(hunk.added[0])
    holder = _holder(base.lines[:at_base], depth)
    if holder is None or holder != _holder(target.lines[:at], depth):
        return None
    if base.lines.count(holder) != 1 or target.lines.count(holder) != 1:
        return None  # a twin holder (two blocks with one header): which one is a guess
    if any(target.find(part) for part in added_parts(hunk.added)):
        return None  # already there, in part or whole: not this rule's to judge
    here = _blank_run(target.lines[:at])
    if here == run:
        return ()
    return lead[len(lead) - run :] if here == 0 else None


def added_parts(added: Sequence[bytes]) -> list[list[bytes]]:
    """The added lines in runs between blank lines, each with a line that is not blank."""
    parts: list[list[bytes]] = [[]]
    for line in added:
        if _blank(line):
            parts.append([])
        else:
            parts[-1].append(line)
    return [part for part in parts if part]


def place_above_closing(placer: Placer, plan: Plan) -> bool:
    """Place a paragraph the hunk appended at the end of the block closing the file right
    above those closing lines here, separated as at base; True when placed (the plan holds
    the block, any blank lines written above it, and the trailing context)."""
    blanks = _separators(placer, plan)
    if blanks is None or plan.base_at is None:
        return False
    hunk = plan.hunk
    ops = (*(("+", line) for line in blanks), *hunk.ops[hunk.lead :])
    plan.hunk = dataclasses.replace(
        hunk,
        old_start=hunk.old_start + hunk.lead,
        old=tuple(text for kind, text in ops if kind != "+"),
        new=tuple(text for kind, text in ops if kind != "-"),
        added=(*blanks, *hunk.added),
        ops=ops,
    )
    plan.spots = [len(placer.target.lines) - hunk.trail]
    plan.base_at = plan.base_at + hunk.lead
    plan.rule, plan.state = Rule.ONE_SIDE, PlanState.APPLY
    kept = " (its blank line above it kept)" if blanks else ""
    plan.note = f"upstream changed the lines above it: placed above the file's closing lines{kept}"
    return True
