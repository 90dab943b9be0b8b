"""Placing a block that closed its paragraph, where upstream rewrote the call after it.

A hunk only inserts a block right under a paragraph (no blank line between the block and its
leading context), a blank line between it and the next statement, a call
(``clusterSendMessage(link,msgblock);``). Upstream wrote that call otherwise
(``clusterSendMessage(link,(unsigned char*)buf,ntohl(hdr->totlen));``) right under the
paragraph, without the blank line: a merge conflicts. The block still closes the paragraph
above: it goes right after its intact leading side when

- the leading side says something (two telling lines) and occurs once here, in the scope the
  hunk had at base (no look-alike twin);
- the line right after it here calls what the base's call after the blank line calls (the same
  name opens both, then ``(``; ``if (``, ``return (`` call nothing), and the base's line stands nowhere in the file (rewritten, not
  kept elsewhere);
- none of the block's runs of lines stands in the file already.

The blank line that separated the block from that call at base is written between them here
too (the one line this rule writes that the diff does not add: the hunk's own blank context
line). Anything less stays a conflict.
"""

from __future__ import annotations

import dataclasses
import re

from patchkit.engine.diff.closing import added_parts
from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import Placer, Plan, PlanState, in_scope, weight
from patchkit.outcome import Rule

_CALL = re.compile(rb"\s*([A-Za-z_]\w*)\s*\(")
# words a statement opens with before ``(`` that call nothing
_KEYWORDS = {
    *b"if elif for while switch return sizeof catch and or not in with except assert".split()
}


def _blank(line: bytes) -> bool:
    return not line.strip()


def _same_call(base_line: bytes, line: bytes) -> bool:
    """Both lines open with a call of the same name."""
    one, other = _CALL.match(base_line), _CALL.match(line)
    if one is None or other is None or one.group(1) in _KEYWORDS:
        return False
    return one.group(1) == other.group(1)


def _shape(hunk: Hunk) -> bool:
    """Only inserted lines, joined to the leading side, a blank line under them at base and a
    statement under that."""
    if not hunk.lead or hunk.trail < 2 or len(hunk.old) != hunk.lead + hunk.trail:
        return False
    lead, trail, added = hunk.old[: hunk.lead], hunk.old[hunk.lead :], hunk.added
    if _blank(lead[-1]) or _blank(added[0]) or _blank(added[-1]):
        return False
    return _blank(trail[0]) and not _blank(trail[1]) and weight(trail[1]) > 0


def _place(placer: Placer, plan: Plan) -> int | None:
    """Where the leading side starts here, when the rule holds."""
    hunk, target = plan.hunk, placer.target
    lead = hunk.old[: hunk.lead]
    if sum(weight(line) for line in lead) < 2:
        return None
    spots = [s for s in target.find(lead) if in_scope(placer, plan, s + len(lead))]
    if len(spots) != 1:
        return None
    after = spots[0] + len(lead)
    call = hunk.old[hunk.lead + 1]
    if after >= len(target.lines) or not _same_call(call, target.lines[after]):
        return None
    if target.find([call]) or any(target.find(part) for part in added_parts(hunk.added)):
        return None
    return spots[0]


def place_closing_paragraph(placer: Placer, plan: Plan) -> bool:
    """Place a block that closed its paragraph right after its intact leading side, its blank
    line kept between it and the call upstream rewrote; True when placed."""
    hunk = plan.hunk
    if plan.base_at is None or not _shape(hunk):
        return False
    spot = _place(placer, plan)
    if spot is None:
        return False
    blank = hunk.old[hunk.lead]
    ops = (*hunk.ops[: hunk.lead + len(hunk.added)], ("+", blank))
    plan.hunk = dataclasses.replace(
        hunk,
        old=hunk.old[: hunk.lead],
        new=tuple(text for kind, text in ops if kind != "-"),
        added=(*hunk.added, blank),
        ops=ops,
    )
    plan.spots = [spot]
    plan.rule, plan.state = Rule.PARAGRAPH, PlanState.APPLY
    plan.note = (
        "upstream rewrote the call after it: kept closing its paragraph, its blank line below it"
    )
    return True
