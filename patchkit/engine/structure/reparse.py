"""Parsing a file again after an edit, from the tree of the content it was made from.

A result differs from the target file in a few lines (a hunk, a merged scope): its syntax
tree is the target's, edited there and re-parsed by tree-sitter from the old tree, and its
scopes are the target's outside the top-level definitions the edit touches (shifted by the
lines it adds or removes), collected afresh inside them. The scope tree is the one a full
parse gives (a test compares the two on many edits); a large file then costs its edit, not
its length.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from patchkit.engine.ends import common_ends
from patchkit.engine.structure.languages import Grammar


@dataclass(frozen=True)
class Span:
    """The edit from ``old`` to ``new``: lines ``first`` to ``old_stop`` replaced by lines
    ``first`` to ``new_stop`` (0-based, exclusive), and the same in bytes."""

    first: int
    old_stop: int
    new_stop: int
    byte: int
    old_byte: int
    new_byte: int


def _lines(content: bytes) -> list[bytes]:
    return content.splitlines(keepends=True)


def span(old: bytes, new: bytes) -> Span:
    """The lines ``new`` changes in ``old``: equal lines at both ends left out."""
    a, b = _lines(old), _lines(new)
    head, tail = common_ends(a, b)
    byte = sum(len(line) for line in a[:head])
    back = sum(len(line) for line in a[len(a) - tail :])
    return Span(head, len(a) - tail, len(b) - tail, byte, len(old) - back, len(new) - back)


def _point(content: bytes, byte: int) -> tuple[int, int]:
    row = content.count(b"\n", 0, byte)
    return row, byte - (content.rfind(b"\n", 0, byte) + 1)


def reparsed(
    grammar: Grammar, tree: tree_sitter.Tree, old: bytes, new: bytes
) -> tuple[tree_sitter.Tree, Span, tuple[int, int]]:
    """``new`` parsed from ``tree`` (the tree of ``old``, left as it was); the edit, and the
    byte range of the new tree whose structure may differ from the old one's (the edit, and
    what it changed further away: a quote that opens a string)."""
    edit = span(old, new)
    copy = tree.copy()
    copy.edit(
        start_byte=edit.byte,
        old_end_byte=edit.old_byte,
        new_end_byte=edit.new_byte,
        start_point=_point(old, edit.byte),
        old_end_point=_point(old, edit.old_byte),
        new_end_point=_point(new, edit.new_byte),
    )
    fresh = grammar.parser.parse(new, copy)
    lo, hi = edit.byte, edit.new_byte
    for changed in copy.changed_ranges(fresh):
        lo, hi = min(lo, changed.start_byte), max(hi, changed.end_byte)
    return fresh, edit, (lo, hi)


def touched(root: tree_sitter.Node, lo: int, hi: int) -> tuple[int, int] | None:
    """The first and last row of the top-level nodes that bytes ``lo`` to ``hi`` touch; None
    when they touch none (blank lines between them)."""
    lo, hi = max(lo - 1, 0), hi + 1
    nodes = [n for n in root.children if n.start_byte < hi and n.end_byte > lo]
    if not nodes:
        return None
    return nodes[0].start_point.row, nodes[-1].end_point.row
