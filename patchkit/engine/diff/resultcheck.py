"""The structural check of a file's result before its verdict counts (diffs and rewrites alike).

A result is refused, with the reason, when it

- defines a name a second time in one scope, where neither the target nor the patched base
  had two (upstream added the same test in its own words, and the patch adds it again);
- does not parse where the target did;
- changes a line in another scope than the one the patch changed at base (compared by the
  innermost definition's name, so a class upstream renamed around it still counts);
- puts a definition the patch adds on the other side of one of its neighbours at base.

``before`` is the target file, ``after`` the result; ``base`` and ``patched`` (the file the diff
was made on, and as the diff leaves it) are known for diffs only: without them only the first
two checks run. A file without a grammar is not checked.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from patchkit.engine.diff.parse import FilePatch, split_lines
from patchkit.engine.diff.result import BlobReader, FileResult, Reader
from patchkit.engine.ends import common_ends
from patchkit.engine.structure import Scope, ScopePath, ScopeTree, scopes_for
from patchkit.engine.structure.overloads import overloaded
from patchkit.outcome import ConflictDetail, Outcome, Rule, Step


@dataclass(frozen=True)
class Side:
    """One version of the file: its lines and scope tree."""

    lines: list[bytes]
    tree: ScopeTree

    @classmethod
    def of(cls, path: str, content: bytes, near: bytes | None = None) -> Side | None:
        """``near``: the content it was made from (parsed from its tree: the cost of the
        edit, not of the file's length)."""
        tree = scopes_for(path, content, near)
        return cls(split_lines(content), tree) if tree is not None else None


def _show(path: ScopePath) -> str:
    return " > ".join(path) or "the top level"


def _definitions(tree: ScopeTree) -> Counter[ScopePath]:
    return Counter(s.path for s in tree.scopes if s.named)


def doubled(before: Side, after: Side, patched: Side | None) -> str | None:
    """A name defined twice in one scope of ``after`` that neither other side had twice."""
    had, wanted = _definitions(before.tree), _definitions(patched.tree) if patched else Counter()
    for path, count in _definitions(after.tree).items():
        if count > max(1, had[path], wanted[path]) and not overloaded(
            after.tree, after.lines, path
        ):
            return (
                f"the result defines {path[-1]} {count} times in {_show(path[:-1])}, where the "
                f"target has it {had[path]} time(s): upstream may have added it in its own words"
            )
    return None


def _changed(old: Sequence[bytes], new: Sequence[bytes]) -> Iterator[tuple[str, int]]:
    """("new", row) for each line ``new`` adds or rewrites, ("old", row) for each line it
    drops; blank lines left out (they carry no scope)."""
    head, tail = common_ends(old, new)
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        yield from (("old", head + r) for r in range(i1, i2) if old[head + r].strip())
        yield from (("new", head + r) for r in range(j1, j2) if new[head + r].strip())


def _scopes(old: Side, new: Side) -> set[ScopePath]:
    return {
        (new if kind == "new" else old).tree.scope_path(row)
        for kind, row in _changed(old.lines, new.lines)
    }


def _fits(got: ScopePath, wanted: set[ScopePath]) -> bool:
    return any(got == w or got[: len(w)] == w or (got and w and got[-1] == w[-1]) for w in wanted)


def misplaced(before: Side, after: Side, base: Side, patched: Side) -> str | None:
    """A changed line of the result in a scope the patch changed no line in at base."""
    wanted = _scopes(base, patched)
    for kind, row in _changed(before.lines, after.lines):
        got = (after if kind == "new" else before).tree.scope_path(row)
        if not _fits(got, wanted):
            return (
                f"the result changes line {row + 1} in {_show(got)}, a scope the patch changes "
                "nothing in at base"
            )
    return None


def _neighbours(tree: ScopeTree, scope: Scope) -> tuple[ScopePath | None, ScopePath | None]:
    """The definitions just before and just after ``scope`` in its parent."""
    parent = scope.path[:-1]
    siblings = [s for s in tree.scopes if s.named and s.path[:-1] == parent and s is not scope]
    before = [s for s in siblings if s.end < scope.start]
    after = [s for s in siblings if s.start > scope.end]
    prev = max(before, key=lambda s: s.end).path if before else None
    nxt = min(after, key=lambda s: s.start).path if after else None
    return prev, nxt


def _one(tree: ScopeTree, path: ScopePath) -> Scope | None:
    found = tree.find(path)
    return found[0] if len(found) == 1 else None


def disordered(base: Side, patched: Side, after: Side) -> str | None:
    """A definition the patch adds that the result puts on the other side of a neighbour."""
    had = _definitions(base.tree)
    for scope in patched.tree.scopes:
        if not scope.named or had[scope.path] or len(patched.tree.find(scope.path)) != 1:
            continue
        mine = _one(after.tree, scope.path)
        if mine is None:
            continue
        prev, nxt = _neighbours(patched.tree, scope)
        for other, must_be_before in ((prev, True), (nxt, False)):
            there = _one(after.tree, other) if other else None
            if there is None or (there.start < mine.start) == must_be_before:
                continue
            side = "after" if must_be_before else "before"
            return (
                f"the result puts {_show(scope.path)} on the other side of {_show(there.path)}; "
                f"the patch adds it {side} it"
            )
    return None


def check(
    path: str,
    before: bytes,
    after: bytes,
    base: bytes | None = None,
    patched: bytes | None = None,
) -> str | None:
    """Why ``after`` (the result for ``path``, the target being ``before``) must not be
    written, or None when it passes every check."""
    b, a = Side.of(path, before), Side.of(path, after, before)
    if b is None or a is None:
        return None  # no grammar reads this file
    if a.tree.has_errors and not b.tree.has_errors:
        return "the result does not parse, where the target did"
    base_side = Side.of(path, base) if base is not None else None
    patched_side = Side.of(path, patched, base) if patched is not None else None
    why = doubled(b, a, patched_side)
    if why or base_side is None or patched_side is None or base_side.tree.has_errors:
        return why
    return misplaced(b, a, base_side, patched_side) or disordered(base_side, patched_side, a)


def patched_blob(fp: FilePatch, base: bytes) -> bytes | None:
    """The base file as the diff leaves it (its hunks at their own lines), or None when they
    do not fit it."""
    lines = split_lines(base)
    spans = []
    for hunk in fp.hunks:
        start = max(hunk.old_start - 1, 0) if hunk.old else hunk.old_start
        if lines[start : start + len(hunk.old)] != list(hunk.old):
            return None
        spans.append((start, start + len(hunk.old), hunk.new))
    out: list[bytes] = []
    cursor = 0
    for start, end, new in sorted(spans, key=lambda span: span[0]):
        if start < cursor:
            return None
        out += [*lines[cursor:start], *new]
        cursor = end
    return b"".join([*out, *lines[cursor:]])


# Hunks placed where their context stands verbatim, once: the result there is the patched base's
# own lines, so only a definition they add can collide (parsing every such file would cost a
# port ten times its placement).
_VERBATIM = (Rule.EXACT, Rule.CONTEXT, Rule.UPSTREAM)
_HEADS = ("def ", "async def ", "class ", "struct ", "namespace ", "template", "function(")


def _defines(line: bytes) -> bool:
    """The line may open a definition (Python, C-family at the top level, CMake)."""
    text = line.decode(errors="replace")
    stripped = text.strip()
    if stripped.startswith(_HEADS) or stripped.startswith("macro("):
        return True
    top = text[:1] not in (" ", "\t") and "(" in text
    return top and not stripped.endswith(";") and not stripped.startswith(("#", "//", "/*", "*"))


def _worth_parsing(fp: FilePatch, result: FileResult) -> bool:
    """Whether the result needs the parsed check: a hunk placed by more than its verbatim
    context (merged, one-sided, followed into another definition, by whitespace or order),
    or one that adds a definition. A file git renamed, its hunks placed by their verbatim
    context there, is no different from the file it was (parsing it would cost a port ten
    times its placement in a large file)."""
    if any(p.rule not in _VERBATIM for p in result.placements):
        return True
    return any(_defines(line) for hunk in fp.hunks for line in hunk.added)


def checked(fp: FilePatch, result: FileResult, read: Reader, blob: BlobReader) -> FileResult:
    """``result`` when it may be written: every hunk placed, and the content it writes passes
    :func:`check`; else a conflict naming why (nothing of the file is written)."""
    change = result.change
    if not result.outcome.writes or change is None or change.content is None:
        return result
    unplaced = [p.hunk for p in result.placements if p.rule is Rule.NONE]
    why = f"hunk {unplaced[0]} was not placed" if unplaced else None
    before = read(change.old_path or change.path)
    base = blob(fp.old_blob) if fp.old_blob else None
    worth = _worth_parsing(fp, result)
    if why is None and worth and before is not None and before != base:  # base: index vouches
        patched = patched_blob(fp, base) if base is not None else None
        why = check(change.path, before, change.content, base, patched)
    if why is None:
        return result
    detail = ConflictDetail(change.path, "result", f"{why}; nothing is written")
    return FileResult(Outcome.CONFLICT, Step.NONE, details=(detail,), placements=result.placements)
