"""One side of a file (the target, or the diff's base blob) as placement reads it.

A :class:`FileView` holds the lines, finds a block of lines exactly or ignoring whitespace
(an index of lines, built once a file is searched more than a few times), and parses its scope
tree on first use, to tell which scope a hunk changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

from patchkit.engine.diff.parse import Hunk
from patchkit.engine.structure import ScopePath, ScopeTree, scopes_for

_SPACE = re.compile(rb"\s+")


def squash(line: bytes) -> bytes:
    return _SPACE.sub(b"", line)


def common_prefix(paths: Sequence[ScopePath]) -> ScopePath:
    if not paths:
        return ()
    first = paths[0]
    n = min(len(p) for p in paths)
    i = 0
    while i < n and all(p[i] == first[i] for p in paths):
        i += 1
    return first[:i]


def _indexes(lines: list[bytes], line: bytes) -> list[int]:
    """Every index of ``line`` in ``lines`` (``list.index`` runs in C: a file's first few
    searches cost less than building an index of all its lines)."""
    found, i = [], -1
    try:
        while True:
            i = lines.index(line, i + 1)
            found.append(i)
    except ValueError:
        return found


def _index(lines: Sequence[bytes]) -> dict[bytes, list[int]]:
    """Every line's indexes, by the line."""
    index: dict[bytes, list[int]] = {}
    for i, line in enumerate(lines):
        index.setdefault(line, []).append(i)
    return index


class FileView:
    """One side of a file (target or base): its lines, an index of them, its scope tree."""

    def __init__(self, path: str, lines: Sequence[bytes]) -> None:
        self.path, self.lines = path, list(lines)
        self._finds = 0  # searches so far: past a few, an index of all lines pays for itself

    @cached_property
    def _exact(self) -> dict[bytes, list[int]]:
        return _index(self.lines)

    @cached_property
    def _squashed(self) -> list[bytes]:
        return [squash(line) for line in self.lines]

    @cached_property
    def _loose(self) -> dict[bytes, list[int]]:
        return _index(self._squashed)

    def find(self, block: Sequence[bytes]) -> list[int]:
        """Every index where ``block`` starts, exactly."""
        if not block:
            return []
        n, lines = len(block), self.lines
        want = list(block)
        self._finds += 1
        starts = self._exact.get(want[0], ()) if self._finds > 8 else _indexes(lines, want[0])
        return [i for i in starts if lines[i : i + n] == want]

    def find_loose(self, block: Sequence[bytes]) -> list[int]:
        """Every index where ``block`` starts when whitespace inside lines is ignored."""
        if not block:
            return []
        want = [squash(line) for line in block]
        n, lines = len(want), self._squashed
        return [i for i in self._loose.get(want[0], ()) if lines[i : i + n] == want]

    @cached_property
    def tree(self) -> ScopeTree | None:
        return scopes_for(self.path, b"".join(self.lines))

    def hunk_scope(self, hunk: Hunk, at: int) -> ScopePath:
        """The scope path of the lines a hunk changes when its old lines start at ``at``: the
        common scope of its removed lines, or for a pure insertion of the lines either side."""
        tree = self.tree
        if tree is None:
            return ()
        first = at + hunk.lead
        removed = len(hunk.old) - hunk.lead - hunk.trail
        rows = [first, first + removed - 1] if removed > 0 else []
        if not rows and hunk.lead:
            rows.append(first - 1)
        if not removed and hunk.trail:
            rows.append(first)
        return common_prefix([tree.scope_path(r) for r in rows]) if rows else ()

    def touched_scopes(self, hunk: Hunk, at: int) -> set[ScopePath]:
        """Every scope path a hunk changes lines in (its removed lines, and the scope of its
        insertion point), when its old lines start at ``at``."""
        tree = self.tree
        if tree is None:
            return set()
        first = at + hunk.lead
        removed = len(hunk.old) - hunk.lead - hunk.trail
        found = {tree.scope_path(r) for r in range(first, first + removed)}
        return found | {self.hunk_scope(hunk, at)}
