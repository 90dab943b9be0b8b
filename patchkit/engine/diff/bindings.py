"""What a run of lines is as syntax, for :mod:`patchkit.engine.diff.deletions`: whether it is
made of whole nodes of its file's parse, which names it binds (a declaration, an assignment, an
import, a definition), and which names a file uses outside its imports. Read with the file's
tree-sitter grammar (:mod:`patchkit.engine.structure`); a file without one has no syntax here
(``None``), and the caller refuses what needs it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import tree_sitter

from patchkit.engine.structure.languages import grammar, language_of

# (node kind, field) whose child names what the node binds
_BINDS = {
    ("assignment", "left"),
    ("augmented_assignment", "left"),
    ("for_statement", "left"),
    ("as_pattern", "alias"),
    ("function_definition", "name"),
    ("class_definition", "name"),
    ("import_statement", "name"),
    ("import_from_statement", "name"),
    ("declaration", "declarator"),
    ("field_declaration", "declarator"),
    ("function_definition", "declarator"),
    ("type_definition", "declarator"),
    ("preproc_def", "name"),
    ("preproc_function_def", "name"),
    ("alias_declaration", "name"),
}
_IMPORTS = {"import_statement", "import_from_statement", "future_import_statement"}


def _rows(node: tree_sitter.Node) -> tuple[int, int]:
    end = node.end_point
    return node.start_point.row, end.row - (1 if end.column == 0 and end.row else 0)


def _is_name(node: tree_sitter.Node) -> bool:
    return node.type.endswith("identifier")


def _targets(node: tree_sitter.Node) -> Iterator[bytes]:
    """The names a bound part names: ``x`` of ``int *x = f(y)`` (its declarator, never its
    value), ``a`` of ``import a.b``, ``E`` of ``D as E``, ``total`` of ``self.total``."""
    stack = [node]
    while stack:
        here = stack.pop()
        if _is_name(here):
            yield here.text or b""
            continue
        inner = [here.child_by_field_name(f) for f in ("declarator", "alias", "attribute")]
        picked = next((n for n in inner if n is not None), None)
        if picked is not None:
            stack.append(picked)
        elif here.type == "dotted_name" and here.named_children:
            stack.append(here.named_children[0])
        elif here.type in ("subscript", "subscript_expression"):
            held = here.child_by_field_name("value") or here.child_by_field_name("argument")
            stack.extend([held] if held is not None else [])
        elif here.type in ("qualified_identifier",):
            stack.extend(here.named_children[-1:])
        elif here.type not in ("argument_list", "parameter_list", "call"):
            stack.extend(here.named_children)


@dataclass(frozen=True)
class Parsed:
    """One side's lines and their parse (Python read as if at the top level)."""

    tree: tree_sitter.Tree
    lines: Sequence[bytes]
    language: str

    def whole(self, rows: tuple[int, int], bounds: tuple[int, int]) -> bool:
        """Every node across ``rows`` (first, past-last) lies inside ``bounds`` (first,
        past-last) or holds all of them, and none is an error: the rows cut no node of the
        parse in two beyond ``bounds``."""
        lo, hi = bounds
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            first, last = _rows(node)
            if last < rows[0] or first >= rows[1]:
                continue
            if node.type == "ERROR" or node.is_missing:
                return False
            if lo <= first and last < hi:
                if node.has_error:
                    return False
                continue
            if not (first <= lo and last >= hi - 1):
                return False
            stack.extend(node.children)
        return True

    def binds(self, start: int, end: int) -> set[bytes]:
        """The names the statements on rows ``[start, end)`` bind."""
        found: set[bytes] = set()
        stack = [self.tree.root_node]
        while stack:  # only the nodes across the rows: a big file costs its depth there
            node = stack.pop()
            first, last = _rows(node)
            if last < start or first >= end:
                continue
            stack.extend(node.children)
            if first < start:
                continue
            for i, child in enumerate(node.children):
                field = node.field_name_for_child(i)
                if field and (node.type, field) in _BINDS:
                    found.update(_targets(child))
        return found

    def imports_only(self, start: int, end: int) -> bool:
        """Rows ``[start, end)`` hold import statements and nothing else (Python)."""
        kinds = {
            node.type
            for node in self.tree.root_node.children
            if _rows(node)[1] >= start and _rows(node)[0] < end
        }
        return bool(kinds) and kinds <= _IMPORTS and self.whole((start, end), (start, end))

    def used(self) -> set[bytes]:
        """The names the file uses outside its import statements (an attribute's own name
        left out: ``x.IteratingStates`` does not use ``IteratingStates``)."""
        found: set[bytes] = set()
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type in _IMPORTS:
                continue
            if _is_name(node):
                found.add(node.text or b"")
            for i, child in enumerate(node.children):
                if not (node.type == "attribute" and node.field_name_for_child(i) == "attribute"):
                    stack.append(child)
        return found


def _indent(lines: Sequence[bytes]) -> bytes:
    first = next((line for line in lines if line.strip()), b"")
    return first[: len(first) - len(first.lstrip())]


def parsed(path: str, lines: Sequence[bytes]) -> Parsed | None:
    """``lines`` of ``path`` parsed with its grammar; None without one (or for CMake, whose
    grammar names no bindings)."""
    language = language_of(path)
    if language is None or language == "cmake":
        return None
    indent = _indent(lines) if language == "python" else b""
    text = b"".join(line.removeprefix(indent) for line in lines)
    return Parsed(grammar(language).parser.parse(text), lines, language)
