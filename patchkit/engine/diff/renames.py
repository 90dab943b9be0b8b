"""Renames upstream made in a scope, carried into a patch's lines before merging them.

Upstream renamed a field the patch's lines name (``worker->ifaces[i].attr`` became
``worker->iface_attrs[i]``): the hunk's context no longer matches, and its added lines would
name what is gone. The renames are learned from the scope itself: each line of the base scope
that upstream rewrote in place (one line for one, in a line diff of the scope) is compared with
its new self token by token; where every token that differs is a name (no keyword, no
``None``, ``NULL``, ``self``), or the ``.``, ``->``, ``::`` between names, and they make one
run (read with the names and brackets between its parts), that run is a rename: old tokens →
new text. A rename counts only when two lines at least show it and all the evidence agrees:
one new spelling for each old one, and the old spelling found nowhere in upstream's scope any
more (a name upstream kept anywhere there is not renamed). A line rewritten otherwise (a number, an
operator, another argument) teaches nothing. The renames are then made in the base scope and
in the patched one alike, and merged against upstream's scope as before.
"""

from __future__ import annotations

import dataclasses
import difflib
import keyword
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from patchkit.engine.diff.parse import Hunk

_TOKEN = re.compile(
    rb""""(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\.?\d(?:[eE][+-]|[\w.])*|[A-Za-z_]\w*|->|::|\S"""
)
_WORD = re.compile(rb"[A-Za-z_]\w*\Z")
# words that name no variable, field or function: a change of one is no rename
_KEYWORDS = {w.encode() for w in keyword.kwlist} | set(
    b"auto bool break case catch char class const constexpr continue default delete do double"
    b" else enum explicit extern false float for goto if inline int long namespace new noexcept"
    b" nullptr NULL operator private protected public register return short signed sizeof"
    b" static struct switch template this throw true try typedef typename union unsigned using"
    b" virtual void volatile while self cls".split()
)
_EVIDENCE = 2  # lines a rename must be seen on, at least
_JOINS = {b".", b"->", b"::"}
_BRACKETS = {b"[", b"]"}

Token = tuple[bytes, int, int]  # text, start, end (in its line)


@dataclass(frozen=True)
class Rename:
    old: tuple[bytes, ...]  # the tokens upstream replaced
    new: bytes  # what it wrote instead (its own spacing)

    def __str__(self) -> str:
        return (
            f"{b''.join(self.old).decode(errors='replace')} -> {self.new.decode(errors='replace')}"
        )


def tokens(line: bytes) -> list[Token]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(line)]


def _name(token: bytes) -> bool:
    return bool(_WORD.match(token)) and token not in _KEYWORDS


def _renaming(token: bytes) -> bool:
    return _name(token) or token in _JOINS


def _runs(old: list[Token], new: list[Token]) -> list[tuple[int, int, int, int]] | None:
    """The differing runs of two token lists, neighbours joined across names and brackets;
    None when a differing token is no name (the line changed otherwise)."""
    matcher = difflib.SequenceMatcher(None, [t[0] for t in old], [t[0] for t in new], False)
    runs: list[tuple[int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if not all(_renaming(t[0]) for t in [*old[i1:i2], *new[j1:j2]]):
            return None
        gap = old[runs[-1][1] : i1] if runs else None
        if runs and all(_renaming(t[0]) or t[0] in _BRACKETS for t in gap or ()):
            runs[-1] = (runs[-1][0], i2, runs[-1][2], j2)
        else:
            runs.append((i1, i2, j1, j2))
    return runs


def _widened(old: list[Token], run: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """A run that only inserts (``cfg->limit`` became ``cfg->common.limit``) or only deletes,
    taken with the name it stands next to (after it, else before it)."""
    i1, i2, j1, j2 = run
    if i1 != i2 and j1 != j2:
        return run
    if i2 < len(old) and _name(old[i2][0]):
        return i1, i2 + 1, j1, j2 + 1
    if i1 > 0 and _name(old[i1 - 1][0]):
        return i1 - 1, i2, j1 - 1, j2
    return run


_LONG = 2000  # characters: a longer line (minified, generated) teaches no rename


def _learned(old_line: bytes, new_line: bytes) -> Rename | None:
    """The one rename a line rewritten in one place shows, or None (rewritten otherwise, or
    in several places: too little to tell a rename from a rework)."""
    if max(len(old_line), len(new_line)) > _LONG:
        return None
    old, new = tokens(old_line), tokens(new_line)
    runs = _runs(old, new)
    if not runs or len(runs) > 1:
        return None
    i1, i2, j1, j2 = _widened(old, runs[0])
    if i1 == i2 or j1 == j2 or not any(_name(t[0]) for t in old[i1:i2]):
        return None
    return Rename(tuple(t[0] for t in old[i1:i2]), new_line[new[j1][1] : new[j2 - 1][2]])


def _pairs(base: Sequence[bytes], ours: Sequence[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """Base lines upstream rewrote one for one, with what they became."""
    matcher = difflib.SequenceMatcher(None, base, ours, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            yield from zip(base[i1:i2], ours[j1:j2], strict=True)


def _holds(line: list[bytes], old: tuple[bytes, ...]) -> bool:
    n = len(old)
    return any(tuple(line[i : i + n]) == old for i in range(len(line) - n + 1))


def learn(base: Sequence[bytes], ours: Sequence[bytes]) -> list[Rename]:
    """The renames upstream made from ``base`` to ``ours`` (a scope's lines), each seen on
    ``_EVIDENCE`` lines at least, all evidence agreeing; empty when any two disagree."""
    spelled: dict[tuple[bytes, ...], list[bytes]] = {}
    for old_line, new_line in _pairs(base, ours):
        rename = _learned(old_line, new_line)
        if rename is not None:
            spelled.setdefault(rename.old, []).append(rename.new)
    if any(len(set(news)) > 1 for news in spelled.values()):
        return []
    found = [Rename(old, news[0]) for old, news in spelled.items() if len(news) >= _EVIDENCE]
    return [r for r in found if not any(_still(line, r) for line in ours) and _new(base, r)]


def _new(base: Sequence[bytes], rename: Rename) -> bool:
    """The base does not spell anything so already (the rename is made once, not twice)."""
    new = tuple(t[0] for t in tokens(rename.new))
    return not any(_holds([t[0] for t in tokens(line)], new) for line in base)


def _still(line: bytes, rename: Rename) -> bool:
    """The old spelling stands in ``line`` outside the new one (``limit`` in ``common.limit``
    is no trace of ``cfg->limit``)."""
    words = [t[0] for t in tokens(line)]
    new = [t[0] for t in tokens(rename.new)]
    i = 0
    while i <= len(words) - len(new):
        if words[i : i + len(new)] == new:
            words[i : i + len(new)] = [b""]
        i += 1
    return _holds(words, rename.old)


def renamed(lines: Sequence[bytes], renames: Sequence[Rename]) -> list[bytes]:
    """``lines`` with every rename made wherever its old tokens stand in a line."""
    out = list(lines)
    for rename in renames:
        out = [_made(line, rename) for line in out]
    return out


def _made(line: bytes, rename: Rename) -> bytes:
    found, n = tokens(line), len(rename.old)
    pieces, cursor, i = [], 0, 0
    while i <= len(found) - n:
        if tuple(t[0] for t in found[i : i + n]) == rename.old:
            pieces += [line[cursor : found[i][1]], rename.new]
            cursor, i = found[i + n - 1][2], i + n
        else:
            i += 1
    return b"".join([*pieces, line[cursor:]])


def renamed_hunk(hunk: Hunk, renames: Sequence[Rename]) -> Hunk:
    """``hunk`` with the renames made in every line of it."""
    ops = tuple((kind, renamed([text], renames)[0]) for kind, text in hunk.ops)
    return dataclasses.replace(
        hunk,
        old=tuple(text for kind, text in ops if kind != "+"),
        new=tuple(text for kind, text in ops if kind != "-"),
        added=tuple(text for kind, text in ops if kind == "+"),
        ops=ops,
    )
