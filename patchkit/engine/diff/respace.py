"""Conflicts where one side only respaced lines the other side changed, merged.

git merges by lines, so a patch that realigns a block (``end         =`` became ``end   =``
once a longer name left it) conflicts with any upstream edit within a line of it, though
the spacing between tokens changes nothing upstream did. Here each conflict git leaves is
read again with lines compared by their *key*: their indentation and their tokens (words,
single punctuation), the spacing between tokens left out. Where the two sides' changes by
key lie apart (a base line neither changed by key between them, as git asks of lines),
each side's changes are made; a line one side only respaced and the other rewrote gets the
rewrite, respaced where the tokens around that spacing are still the base's. Indentation is
part of the key: a line re-indented is changed, never only respaced. Anything else (changes
that meet, a respacing touching a rewritten token, a rewrite of other length under a
respaced line, input with a line like a conflict marker) leaves the conflict as it was; so
does a line of over ``_MAX_TOKENS`` tokens or a conflict of over ``_MAX_ROWS`` lines a side
(a data table on one line is left a conflict, not compared token by token for minutes).
A patch line written otherwise is rewritten in the hunks of the merge that wrote it only
(those whose base lines lie in the part merged, found once in the base file), never in a
hunk merged elsewhere that adds the same line; a part not found once leaves the conflict.
Asked only after every other way (one side, moved code, statements, renames, blocks
upstream made) left the file in conflict.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.engine.diff.lastpass import ByStatements
from patchkit.engine.diff.parse import Hunk, split_lines
from patchkit.engine.diff.placement import Placer, Plan, PlanState, place
from patchkit.engine.diff.present import MergeAll
from patchkit.engine.diff.result import FileResult, Job, Merger
from patchkit.gitrepo import MergeResult

_TOKEN = re.compile(rb"\s+|\w+|[^\w\s]")
_INDENT = re.compile(rb"[ \t]*")
_MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")
_MAX_TOKENS = 400  # tokens of a line merged by tokens at most
_MAX_ROWS = 400  # lines of a conflict's side merged by keys at most
Key = tuple[bytes, tuple[bytes, ...]]
Change = tuple[int, int, int, int]  # base [i1, i2) became side [j1, j2)
Edit = tuple[int, int, list[bytes]]  # base tokens [start, end) and what replaces them


def key(line: bytes) -> Key:
    """A line's indentation and tokens: equal keys differ only in spacing between tokens."""
    indent = _INDENT.match(line)
    return (indent.group() if indent else b"", tuple(t for t in _TOKEN.findall(line) if t.strip()))


def _changes(base: Sequence[Key], side: Sequence[Key]) -> list[Change]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _kept(base: Sequence[Key], side: Sequence[Key]) -> dict[int, int]:
    """Each base line whose key the side kept, and its row there."""
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return {a + k: b + k for a, b, n in matcher.get_matching_blocks() for k in range(n)}


def _apart(a: Change, b: Change) -> bool:
    return a[1] < b[0] or b[1] < a[0]


def _edits(base: list[bytes], side: list[bytes]) -> list[Edit]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        (i1, i2, side[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _meet(a: Edit, b: Edit, base: list[bytes]) -> bool:
    """The two edits overlap, or only spacing (or nothing) lies between them."""
    if a[1] <= b[0]:
        return not any(t.strip() for t in base[a[1] : b[0]])
    if b[1] <= a[0]:
        return not any(t.strip() for t in base[b[1] : a[0]])
    return True


def merge_line(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """One line with both sides' edits (by tokens, spacing included); None when two meet."""
    b, o, t = (_TOKEN.findall(line) for line in (base, ours, theirs))
    if max(len(b), len(o), len(t)) > _MAX_TOKENS:
        return None
    mine, other = _edits(b, o), _edits(b, t)
    if any(_meet(m, e, b) for m in mine for e in other):
        return None
    out = list(b)
    for start, end, lines in sorted([*mine, *other], reverse=True):
        out[start:end] = lines
    return b"".join(out)


Row = tuple[bytes | None, bytes]  # the line written (None: the merge fails), the patch's own


def _same(base: bytes, ours: bytes, theirs: bytes) -> Row:
    """A base line both sides kept by key: the one that respaced it, or both respacings
    (``theirs`` is the patch's side)."""
    if theirs == base or ours == theirs:
        return ours, theirs
    return (theirs if ours == base else merge_line(base, ours, theirs)), theirs


def _span(base: list[bytes], ours: list[bytes], theirs: list[bytes], mine: bool) -> list[Row]:
    """The lines of one side's change (``mine``: the tree's, ``ours``; else the patch's,
    ``theirs``) for base lines the other side kept by key (maybe respaced); a row whose
    line is None when they cannot be merged."""
    side, rest = (ours, theirs) if mine else (theirs, ours)
    if rest == base:
        return [(line, line) for line in side] if not mine else [(line, b"") for line in side]
    if len(side) != len(base):
        return [(None, b"")]
    rows = zip(base, rest, side, strict=True)
    return [(merge_line(b, r, x), r if mine else x) for b, r, x in rows]


def merged_region(
    ours: list[bytes], base: list[bytes], theirs: list[bytes]
) -> tuple[list[bytes], dict[bytes, bytes]] | None:
    """One conflict merged by keys, and each line of the patch's side (``theirs``) written
    otherwise, with what was written for it; None (the conflict stands)."""
    if max(len(ours), len(base), len(theirs)) > _MAX_ROWS:
        return None
    kb, ko, kt = ([key(x) for x in lines] for lines in (base, ours, theirs))
    mine, other = _changes(kb, ko), _changes(kb, kt)
    if any(not _apart(a, b) for a in mine for b in other):
        return None
    at_o, at_t = _kept(kb, ko), _kept(kb, kt)
    spans = [(c, True) for c in mine] + [(c, False) for c in other]
    rows: list[Row] = []
    row = 0
    for (i1, i2, j1, j2), tree in sorted(spans):
        rows += [_same(base[k], ours[at_o[k]], theirs[at_t[k]]) for k in range(row, i1)]
        kept = [(theirs[at_t[k]] if tree else ours[at_o[k]]) for k in range(i1, i2)]
        sides = (ours[j1:j2], kept) if tree else (kept, theirs[j1:j2])
        rows, row = rows + _span(base[i1:i2], *sides, tree), i2
    rows += [_same(base[k], ours[at_o[k]], theirs[at_t[k]]) for k in range(row, len(base))]
    return _written(rows)


def _written(rows: list[Row]) -> tuple[list[bytes], dict[bytes, bytes]] | None:
    lines = [line for line, _ in rows if line is not None]
    if len(lines) != len(rows):
        return None
    made: dict[bytes, bytes] = {}
    for line, own in rows:
        if own and line != own and made.setdefault(own, line or b"") != line:
            return None  # one line of the patch written two ways: no telling which is its
    return lines, made


def _resolved(content: bytes, made: dict[bytes, bytes]) -> bytes | None:
    """``git merge-file --diff3`` output with each conflict merged by keys (the patch's
    lines written otherwise added to ``made``), or None."""
    out: list[bytes] = []
    parts: list[list[bytes]] = []
    for line in split_lines(content):
        if line.startswith(_MARKERS[0]):
            parts = [[]]
        elif parts and line.startswith(_MARKERS[1:3]):
            parts.append([])
        elif parts and line.startswith(_MARKERS[3]):
            region = merged_region(*parts) if len(parts) == 3 else None
            if region is None or any(made.get(k, v) != v for k, v in region[1].items()):
                return None
            out, parts = out + region[0], []
            made.update(region[1])
        elif parts:
            parts[-1].append(line)
        else:
            out.append(line)
    return None if parts else b"".join(out)


def _plain(*texts: bytes) -> bool:
    """No line looks like a conflict marker and each text ends its last line: the merger's
    markers are then read back for sure."""
    ended = all(not text or text.endswith(b"\n") for text in texts)
    return ended and not any(
        line.startswith(_MARKERS) for text in texts for line in split_lines(text)
    )


@dataclass
class ByKeys:
    """A line merger whose conflicts are merged by keys where they can be."""

    lines: Merger
    base: Sequence[bytes]  # the base file's lines
    plans: Sequence[Plan]  # the hunks of a part merged get their lines written otherwise
    used: bool = False

    def __call__(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> MergeResult:
        merged = self.lines(ours, base, theirs, labels)
        if not merged.conflicts or not _plain(ours, base, theirs):
            return merged
        made: dict[bytes, bytes] = {}
        again = _resolved(merged.content, made)
        start = _found_once(self.base, split_lines(base))
        if again is None or start is None:
            return merged
        self.used = True
        end = start + len(split_lines(base))
        for plan in self.plans:
            if _within(plan, start, end):
                plan.hunk = _rewritten(plan.hunk, made)
        return MergeResult(again, 0)


def _found_once(whole: Sequence[bytes], part: Sequence[bytes]) -> int | None:
    """Where ``part`` starts in ``whole``, when it stands there exactly once."""
    if not part:
        return None
    n = len(part)
    starts = [i for i, line in enumerate(whole) if line == part[0] and whole[i : i + n] == part]
    return starts[0] if len(starts) == 1 else None


def _within(plan: Plan, start: int, end: int) -> bool:
    """The base lines the hunk changes (its context left out) lie in base rows
    ``[start, end)``: it was merged there."""
    hunk = plan.hunk
    if plan.base_at is None:
        return False
    first = plan.base_at + hunk.lead
    return start <= first and first + len(hunk.old) - hunk.lead - hunk.trail <= end


def _rewritten(hunk: Hunk, made: dict[bytes, bytes]) -> Hunk:
    """``hunk`` with its added lines as the merge wrote them."""
    ops = tuple((kind, made.get(text, text) if kind == "+" else text) for kind, text in hunk.ops)
    return dataclasses.replace(
        hunk,
        new=tuple(text for kind, text in ops if kind != "-"),
        added=tuple(text for kind, text in ops if kind == "+"),
        ops=ops,
    )


def by_keys(job: Job, placer: Placer, merge_all: MergeAll) -> FileResult | None:
    """The file's hunks placed again and merged as in the last pass, its conflicts merged by
    keys; None unless that was needed and carries the patch (the conflict before it stands)."""
    plans = place(placer, job.fp.hunks)
    missing = [p for p in plans if p.state is PlanState.MISSING]
    if any(p.state is PlanState.AMBIGUOUS for p in plans) or not missing:
        return None
    for plan in missing:  # said only of a result this pass gives
        plan.note = "; ".join(n for n in (plan.note, "a side's respaced lines merged") if n)
    if placer.base is None:
        return None
    keys = ByKeys(job.merge, placer.base.lines, missing)
    result = merge_all(dataclasses.replace(job, merge=ByStatements(keys)), placer, missing)
    return result if keys.used and result.outcome.carried else None
