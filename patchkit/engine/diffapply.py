"""Applying a diff patch to file contents, never with fuzz.

For each file the chain is:

1. **exact** — the file is the very blob the diff was made against: hunks go at their line
   numbers (and must match there).
2. **unique context** — the file differs: each hunk's old lines must occur exactly once; more
   than once is ``ambiguous`` (never a guess); a hunk whose new lines are already there is
   already applied (also when only whitespace and line breaks differ).
3. **three-way** — a hunk's old lines are gone: merge from the pinned base blob
   (``git merge-file``); conflicts stop the patch with labelled markers for a person.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.diffparse import FilePatch, Hunk, split_lines
from patchkit.gitrepo import MergeResult, blob_id
from patchkit.model import ConflictDetail, FileChange, Outcome, PatchResult, Step

Reader = Callable[[str], bytes | None]
BlobReader = Callable[[str], bytes | None]
Merger = Callable[[bytes, bytes, bytes, tuple[str, str, str]], MergeResult]

_SPACE = re.compile(rb"\s+")
# Worst first: the outcome of a patch is the worst outcome of its files.
SEVERITY = [
    Outcome.FAILED,
    Outcome.AMBIGUOUS,
    Outcome.CONFLICT,
    Outcome.GONE,
    Outcome.PARTLY_UPSTREAMED,
    Outcome.CARRIED,
    Outcome.APPLIED,
    Outcome.UPSTREAMED,
]


@dataclass(frozen=True)
class FileResult:
    outcome: Outcome
    step: Step
    change: FileChange | None = None  # None: nothing to write
    details: tuple[ConflictDetail, ...] = ()
    conflicted: FileChange | None = None


class _HunkMiss(Exception):
    def __init__(self, hunk: Hunk, reason: str) -> None:
        self.hunk, self.reason = hunk, reason


def _find(lines: Sequence[bytes], block: Sequence[bytes]) -> list[int]:
    n = len(block)
    if n == 0:
        return []
    first = block[0]
    return [
        i
        for i in range(len(lines) - n + 1)
        if lines[i] == first and list(lines[i : i + n]) == list(block)
    ]


def _squash(data: bytes | Sequence[bytes]) -> bytes:
    joined = data if isinstance(data, bytes) else b"".join(data)
    return _SPACE.sub(b"", joined)


def _present_loosely(lines: Sequence[bytes], hunk: Hunk) -> bool:
    """The hunk's result is in the file, ignoring whitespace and line breaks, and its old
    text is not (so a change landed reformatted counts as present)."""
    text = _squash(b"".join(lines))
    new, old = _squash(hunk.new), _squash(hunk.old)
    return bool(hunk.added) and text.count(new) == 1 and (new == old or old not in text)


def _apply_exact(lines: list[bytes], hunks: Sequence[Hunk]) -> list[bytes]:
    """Hunks at their own line numbers, last first; the old lines must be there."""
    out = list(lines)
    for hunk in reversed(hunks):
        start = max(hunk.old_start - 1, 0) if hunk.old else hunk.old_start
        if out[start : start + len(hunk.old)] != list(hunk.old):
            raise _HunkMiss(hunk, f"old lines not at line {hunk.old_start}")
        out[start : start + len(hunk.old)] = hunk.new
    return out


def _place(lines: list[bytes], hunk: Hunk) -> tuple[str, int]:
    """Where a hunk goes in a file that is not its base: ("apply", i), ("present", -1),
    ("missing", -1) or ("ambiguous", count)."""
    spots = _find(lines, hunk.old)
    if len(spots) > 1:
        return "ambiguous", len(spots)
    if len(spots) == 1:
        i = spots[0]
        if hunk.new != hunk.old and lines[i : i + len(hunk.new)] == list(hunk.new):
            return "present", -1
        return "apply", i
    if len(_find(lines, hunk.new)) == 1 or _present_loosely(lines, hunk):
        return "present", -1
    return "missing", -1


def _overlapping(placed: list[tuple[int, Hunk]]) -> bool:
    spans = sorted((where, where + len(hunk.old)) for where, hunk in placed)
    return any(end > start for (_, end), (start, _) in itertools.pairwise(spans))


def _core(hunk: Hunk) -> list[bytes]:
    """The lines a hunk removes, with the context around them dropped."""
    old, new = list(hunk.old), list(hunk.new)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return old[head : len(old) - tail]


def _detail(path: str, hunk: Hunk, reason: str, ours: bytes = b"") -> ConflictDetail:
    theirs = b"".join(hunk.new).decode(errors="replace")
    return ConflictDetail(path, hunk.header, reason, ours.decode(errors="replace"), theirs)


def _by_context(fp: FilePatch, lines: list[bytes]) -> tuple[str, list[bytes], list]:
    """Apply by unique context. Returns (state, new lines, per-hunk notes)."""
    placed, notes = [], []
    for hunk in fp.hunks:
        state, where = _place(lines, hunk)
        notes.append((hunk, state, where))
        if state == "apply":
            placed.append((where, hunk))
    states = {s for _, s, _ in notes}
    out = list(lines)
    if "ambiguous" in states:
        return "ambiguous", out, notes
    if _overlapping(placed):  # two hunks found the same lines: only a merge can tell
        notes = [(h, "missing" if s == "apply" else s, w) for h, s, w in notes]
        return "missing", out, notes
    for where, hunk in sorted(placed, key=lambda p: p[0], reverse=True):
        out[where : where + len(hunk.old)] = hunk.new
    if "missing" in states:
        return "missing", out, notes
    if states == {"present"}:
        return "present", out, notes
    return ("partly" if "present" in states else "apply"), out, notes


def apply_file(
    fp: FilePatch, read: Reader, blob: BlobReader, merge: Merger, label: str
) -> FileResult:
    """Apply one file's part of a diff to the file as ``read`` returns it."""
    path = fp.path
    if fp.binary:
        return _stopped(
            Outcome.FAILED, path, "binary", "binary changes are not applied by patchkit"
        )
    current = read(fp.old_path) if fp.old_path else read(path)
    if fp.old_path is None:
        return _new_file(fp, current)
    if current is None:
        return _stopped(Outcome.GONE, path, "file", f"{fp.old_path} does not exist in the tree")
    if fp.new_path is None:
        return _deleted_file(fp, current)
    if fp.new_path != fp.old_path and read(fp.new_path) is not None:
        why = f"the patch renames {fp.old_path} to {fp.new_path}, but {fp.new_path} already exists"
        return _stopped(Outcome.CONFLICT, path, "rename", why)
    lines = split_lines(current)
    if not fp.hunks:  # a pure rename or mode change
        return _result(fp, Outcome.APPLIED, Step.EXACT, lines)
    if fp.new_blob and fp.new_blob != fp.old_blob and blob_id(current) == fp.new_blob:
        return _result(fp, Outcome.UPSTREAMED, Step.PROBE, lines)
    if fp.old_blob and blob_id(current) == fp.old_blob:
        try:
            return _result(fp, Outcome.APPLIED, Step.EXACT, _apply_exact(lines, fp.hunks))
        except _HunkMiss as miss:
            return FileResult(
                Outcome.FAILED,
                Step.EXACT,
                details=(_detail(path, miss.hunk, f"the diff is corrupt: {miss.reason}"),),
            )
    state, out, notes = _by_context(fp, lines)
    if state == "ambiguous":
        details = tuple(
            _detail(path, h, f"its context matches {n} places; refusing to guess")
            for h, s, n in notes
            if s == "ambiguous"
        )
        return FileResult(Outcome.AMBIGUOUS, Step.NONE, details=details)
    if state == "missing":
        return _three_way(fp, current, blob, merge, label, notes)
    outcome = {"present": Outcome.UPSTREAMED, "partly": Outcome.PARTLY_UPSTREAMED}.get(
        state, Outcome.CARRIED
    )
    step = Step.PROBE if state == "present" else Step.EXACT
    return _result(fp, outcome, step, out)


def _stopped(outcome: Outcome, path: str, where: str, why: str, ours: bytes = b"") -> FileResult:
    """A file the patch cannot change, with the one reason why."""
    detail = ConflictDetail(path, where, why, ours.decode(errors="replace"))
    return FileResult(outcome, Step.NONE, details=(detail,))


def _result(fp: FilePatch, outcome: Outcome, step: Step, lines: list[bytes]) -> FileResult:
    content = b"".join(lines)
    mode = fp.new_mode if fp.new_mode != fp.old_mode else None
    rename = fp.old_path if fp.old_path != fp.new_path else None
    if outcome is Outcome.UPSTREAMED and not rename and not mode:
        return FileResult(outcome, step)
    change = FileChange(fp.path, content, mode=mode, old_path=rename)
    return FileResult(outcome, step, change)


def _new_file(fp: FilePatch, current: bytes | None) -> FileResult:
    content = b"".join(h for hunk in fp.hunks for h in hunk.new)
    if current is None:
        return FileResult(
            Outcome.APPLIED, Step.EXACT, FileChange(fp.path, content, mode=fp.new_mode or 0o100644)
        )
    if current == content:
        return FileResult(Outcome.UPSTREAMED, Step.PROBE)
    why = "the patch creates this file, but it already exists with other content"
    return _stopped(Outcome.CONFLICT, fp.path, "new file", why, current)


def _deleted_file(fp: FilePatch, current: bytes) -> FileResult:
    expected = b"".join(h for hunk in fp.hunks for h in hunk.old)
    if blob_id(current) == fp.old_blob or current == expected:
        return FileResult(Outcome.APPLIED, Step.EXACT, FileChange(fp.path, None))
    why = "the patch deletes this file, but its content differs from what the patch expects"
    return _stopped(Outcome.CONFLICT, fp.path, "deleted file", why)


def _three_way(
    fp: FilePatch, current: bytes, blob: BlobReader, merge: Merger, label: str, notes: list
) -> FileResult:
    missing = [h for h, s, _ in notes if s == "missing"]
    lines = split_lines(current)
    doubled = [h for h in missing if len(_find(lines, _core(h))) > 1]
    if doubled:  # a merge would pick one copy of duplicated code: never guess
        details = tuple(
            _detail(
                fp.path, h, "the lines it changes occur more than once; refusing to guess which"
            )
            for h in doubled
        )
        return FileResult(Outcome.AMBIGUOUS, Step.NONE, details=details)
    base = blob(fp.old_blob) if fp.old_blob else None
    if base is None:
        details = tuple(
            _detail(
                fp.path,
                h,
                "context not found, and the base blob "
                f"{fp.old_blob or '(none in the diff)'} is not available for a "
                "three-way merge",
            )
            for h in missing
        )
        return FileResult(Outcome.CONFLICT, Step.NONE, details=details)
    theirs = b"".join(_apply_exact(split_lines(base), fp.hunks))
    base_label = f"base {(fp.old_blob or '')[:12]}"
    merged = merge(current, base, theirs, ("tree", base_label, label))
    if merged.conflicts == 0:
        return _result(fp, Outcome.CARRIED, Step.THREE_WAY, split_lines(merged.content))
    details = tuple(
        _detail(fp.path, h, "three-way merge conflict with an upstream change", current)
        for h in missing
    )
    conflicted = FileChange(fp.path, merged.content)
    return FileResult(Outcome.CONFLICT, Step.THREE_WAY, details=details, conflicted=conflicted)


def combine(patch_id: str, results: Sequence[FileResult], message: str = "") -> PatchResult:
    """One patch's result from its files' results: the worst outcome wins."""
    outcomes = {r.outcome for r in results}
    if Outcome.UPSTREAMED in outcomes and outcomes & {Outcome.APPLIED, Outcome.CARRIED}:
        outcome = Outcome.PARTLY_UPSTREAMED
    else:
        outcome = min(outcomes, key=SEVERITY.index)
    steps = [r.step for r in results if r.outcome == outcome] or [Step.NONE]
    step = Step.THREE_WAY if Step.THREE_WAY in steps else steps[0]
    return PatchResult(
        patch_id=patch_id,
        outcome=outcome,
        step=step,
        changes=tuple(r.change for r in results if r.change is not None),
        message=message,
        details=tuple(d for r in results for d in r.details),
        conflicted=tuple(r.conflicted for r in results if r.conflicted is not None),
    )
