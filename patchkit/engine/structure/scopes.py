"""A file's scope tree: every line belongs to a scope path such as
``("class Mxfp4Config", "def get_quant_method")`` or
``("namespace flashinfer", "struct Foo", "operator()")``; ``()`` is the file's top level.

Trees are parsed lazily and cached per content, so a blob several hunks (or several patches)
ask about is parsed once.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import tree_sitter

from patchkit.engine.structure.languages import grammar, language_of
from patchkit.engine.structure.names import cmake_branches, first_row, last_row, scope_name
from patchkit.engine.structure.reparse import Span, reparsed, touched

ScopePath = tuple[str, ...]
_BLOCKS = {
    "preproc_if",
    "preproc_ifdef",
    "preproc_elif",
    "preproc_else",
    "if_condition",
    "foreach_loop",
    "while_loop",
    "block_def",
}


@dataclass(frozen=True)
class Scope:
    path: ScopePath
    start: int  # 0-based index of its first line
    end: int  # 0-based index of its last line, inclusive
    # A definition (function, class, struct, macro) has an identity: two with one path are
    # look-alike twins. A control block (#if, CMake if/foreach) does not: blocks with the
    # same condition are told apart by what is around them.
    named: bool = True

    def holds(self, line: int) -> bool:
        return self.start <= line <= self.end


@dataclass
class ScopeTree:
    """The scopes of one file, outermost first (a parent before its children)."""

    language: str
    line_count: int
    scopes: tuple[Scope, ...]
    has_errors: bool = False  # the grammar could not read all of it (scopes may be partial)
    _owner: list[int] | None = field(default=None, repr=False)

    def _owners(self) -> list[int]:
        if self._owner is None:
            owner = [-1] * self.line_count
            for i, scope in enumerate(self.scopes):  # children after parents: innermost wins
                end = min(scope.end, self.line_count - 1)
                owner[scope.start : end + 1] = [i] * (end + 1 - scope.start)
            self._owner = owner
        return self._owner

    def scope_at(self, line: int) -> Scope | None:
        """The innermost scope holding 0-based ``line`` (None: top level or out of range)."""
        owners = self._owners()
        i = owners[line] if 0 <= line < len(owners) else -1
        return self.scopes[i] if i >= 0 else None

    def scope_path(self, line: int) -> ScopePath:
        """The scope path of 0-based ``line``; ``()`` at top level."""
        scope = self.scope_at(line)
        return scope.path if scope else ()

    def named(self, path: ScopePath) -> bool:
        """Whether the scopes with this path are definitions (not control blocks)."""
        found = self.find(path)
        return bool(found) and found[0].named

    def ending_with(self, tail: ScopePath) -> list[Scope]:
        """Every scope whose path ends with ``tail``, wherever it sits."""
        n = len(tail)
        return [s for s in self.scopes if s.path[-n:] == tail] if n else []

    def find(self, path: ScopePath) -> list[Scope]:
        """Every scope with exactly this path (more than one: look-alike twins or overloads)."""
        return [s for s in self.scopes if s.path == path]


def _collect(
    language: str,
    root: tree_sitter.Node,
    query: tree_sitter.Query,
    within: tuple[int, int] | None = None,
) -> list[Scope]:
    cursor = tree_sitter.QueryCursor(query)
    if within is not None:
        cursor.set_byte_range(*within)
    captured = cursor.captures(root).get("scope", [])
    nodes = sorted(captured, key=lambda n: (n.start_byte, -n.end_byte))
    stack: list[tuple[int, int, ScopePath]] = []  # (start byte, end byte, path)
    scopes: list[Scope] = []
    for node in nodes:
        while stack and not (stack[-1][0] <= node.start_byte and node.end_byte <= stack[-1][1]):
            stack.pop()
        name = scope_name(language, node)
        if name is None:
            continue
        path = (stack[-1][2] if stack else ()) + (name,)
        scopes.append(Scope(path, first_row(node), last_row(node), node.type not in _BLOCKS))
        stack.append((node.start_byte, node.end_byte, path))
        if node.type == "if_condition":
            scopes.extend(Scope((*path, n), a, b, False) for n, a, b in cmake_branches(node))
    return scopes


def parse_scopes(language: str, content: bytes) -> ScopeTree:
    """Parse ``content`` with the grammar of ``language`` (no cache)."""
    found = grammar(language)
    tree = found.parser.parse(content)
    lines = content.count(b"\n") + (0 if content.endswith(b"\n") or not content else 1)
    scopes = _collect(language, tree.root_node, found.query)
    return ScopeTree(language, lines, tuple(scopes), tree.root_node.has_error)


_CACHE: OrderedDict[tuple[str, bytes], ScopeTree] = OrderedDict()
_CACHE_SIZE = 128
# the syntax trees of the last files parsed, for parsing a result of theirs from them
_TREES: OrderedDict[tuple[str, bytes], tuple[bytes, tree_sitter.Tree]] = OrderedDict()
_TREES_SIZE = 8


def _span_rows(
    previous: ScopeTree, root: tree_sitter.Node, edit: Span, changed: tuple[int, int]
) -> tuple[int, int]:
    """The new rows to collect again: the edit's, the top-level nodes the changed bytes
    touch, and every old scope overlapping those rows (at its new extent)."""
    first, last = edit.first, edit.new_stop - 1
    where = touched(root, *changed)
    if where is not None:
        first, last = min(first, where[0]), max(last, where[1])
    delta = edit.new_stop - edit.old_stop
    for scope in previous.scopes:  # outermost first: a container covers what it holds
        if scope.start <= last - delta and scope.end >= first:
            first = min(first, scope.start)
            last = max(last, scope.end + delta if scope.end >= edit.old_stop else last)
    return first, last


def _merged(
    previous: ScopeTree, fresh: Sequence[Scope], edit: Span, rows: tuple[int, int]
) -> tuple[Scope, ...]:
    """The old scopes before ``rows`` (new rows, collected afresh as ``fresh``), the fresh
    ones, and the old ones after, shifted by the lines the edit adds."""
    delta = edit.new_stop - edit.old_stop
    first, last = rows
    before = [s for s in previous.scopes if s.end < first]
    inside = [s for s in fresh if s.end >= first and s.start <= last]
    after = [
        replace(s, start=s.start + delta, end=s.end + delta)
        for s in previous.scopes
        if s.start > last - delta
    ]
    return (*before, *inside, *after)


def _row_bytes(content: bytes, first: int, last: int) -> tuple[int, int]:
    """The byte range of rows ``first`` to ``last`` (inclusive)."""
    start = 0
    for _ in range(first):
        start = content.index(b"\n", start) + 1
    end = start
    for _ in range(last - first + 1):
        found = content.find(b"\n", end)
        end = len(content) if found < 0 else found + 1
    return start, end


def _parse(language: str, content: bytes, near: bytes | None) -> tuple[ScopeTree, tree_sitter.Tree]:
    """``content`` parsed, from the tree of ``near`` when that was parsed lately (a result
    from its target): only the scopes around the edit are collected again."""
    found = grammar(language)
    lines = content.count(b"\n") + (0 if content.endswith(b"\n") or not content else 1)
    key = (language, hashlib.sha1(near).digest()) if near is not None else None
    old, previous = (_TREES.get(key), _CACHE.get(key)) if key else (None, None)
    again = reparsed(found, old[1], old[0], content) if old and language != "cmake" else None
    if again is None or previous is None or again[0].root_node.has_error:
        # (a tree with errors may recover otherwise than a fresh parse: parsed afresh)
        tree = found.parser.parse(content)
        scopes = tuple(_collect(language, tree.root_node, found.query))
        return ScopeTree(language, lines, scopes, tree.root_node.has_error), tree
    tree, edit, changed = again
    rows = _span_rows(previous, tree.root_node, edit, changed)
    fresh = _collect(language, tree.root_node, found.query, _row_bytes(content, *rows))
    scopes = _merged(previous, fresh, edit, rows)
    return ScopeTree(language, lines, scopes, False), tree


def scopes_for(path: str, content: bytes, near: bytes | None = None) -> ScopeTree | None:
    """The scope tree of a file's content, cached by (language, content); ``None`` when no
    grammar reads files named like ``path`` (placement then goes by lines alone). ``near``:
    the content it was edited from, parsed lately (its tree is reused)."""
    language = language_of(path)
    if language is None:
        return None
    key = (language, hashlib.sha1(content).digest())
    tree = _CACHE.get(key)
    if tree is None:
        tree, syntax = _parse(language, content, near)
        _CACHE[key], _TREES[key] = tree, (content, syntax)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        if len(_TREES) > _TREES_SIZE:
            _TREES.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return tree
