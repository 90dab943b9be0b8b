"""A three-way merge by statements, where a line merge stops at changes that touch.

``git merge-file`` calls two changes a conflict when no unchanged line stands between them:
upstream rewrote the line right above the lines a patch changes, and the merge cannot tell
whether the two belong together. Read with the file's grammar they often do not: upstream
renamed a callee in one statement, the patch rewrote the next one. So the changes of both
sides are taken from the base (each a span of base lines, or a point where lines go in), and
merged when no two share a base line or a point, and every two that touch (the patch's
rewriting lines, not only inserting them: lines inserted beside a rewrite may belong on either
side of it) meet between two statements of one block (a function body, a file's top level),
neither of them a comment (a comment speaks for the statement under it), and neither side's
statements assign (or hand to a bare call: ``items.sort()``, ``memset(buf, ...)``) a name the
other side's statements name (a rewritten ``eigvals = solve(tol=...)`` right above the
patch's ``assert_close(eigvals, ...)`` stays a conflict). Anything else, or a file without a
grammar, or a region the grammar cannot read, is ``None``: the conflict stands.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import tree_sitter
import tree_sitter_bash

from patchkit.engine.diff.parse import split_lines
from patchkit.engine.ends import common_ends
from patchkit.engine.structure.languages import grammar, language_of

# nodes whose children are statements, per grammar
_BLOCKS = {
    "python": {"module", "block"},
    "c": {
        "translation_unit",
        "compound_statement",
        "declaration_list",
        "field_declaration_list",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "case_statement",
    },
    "bash": {"program", "compound_statement", "do_group", "subshell"},
}
_GRAMMAR_BLOCKS = {"cpp": "c", "cuda": "c", "c": "c", "python": "python", "bash": "bash"}
# (node kind, field) whose identifiers the statement assigns or declares
_DEFINES = {
    ("assignment", "left"),
    ("augmented_assignment", "left"),
    ("for_statement", "left"),
    ("for_in_clause", "left"),
    ("as_pattern", "alias"),
    ("named_expression", "name"),
    ("function_definition", "name"),
    ("class_definition", "name"),
    ("import_statement", "name"),
    ("import_from_statement", "name"),
    ("aliased_import", "alias"),
    ("assignment_expression", "left"),
    ("update_expression", "argument"),
    ("declaration", "declarator"),
    ("init_declarator", "declarator"),
    ("field_declaration", "declarator"),
    ("function_definition", "declarator"),
    ("type_definition", "declarator"),
    ("preproc_def", "name"),
    ("preproc_function_def", "name"),
    ("variable_assignment", "name"),
}
_NOT_DEFINED = {"argument_list", "template_argument_list"}  # a call inside a left side
_MEMBERS = {"attribute", "field_expression"}  # obj.name, obj->name: sets the name
_INDEXED = {"subscript", "subscript_expression"}  # rows[i]: sets rows
_CALLS = {"call", "call_expression"}  # a statement of a call alone may change what it is given


@functools.cache
def _bash() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _reader(path: str) -> tuple[tree_sitter.Parser, set[str]] | None:
    """The parser for ``path`` and the node kinds that hold statements (None: no grammar)."""
    language = language_of(path)
    if language is None and PurePosixPath(path).suffix in (".sh", ".bash"):
        return _bash(), _BLOCKS["bash"]
    family = _GRAMMAR_BLOCKS.get(language or "")
    if language is None or family is None:
        return None
    return grammar(language).parser, _BLOCKS[family]


@dataclass(frozen=True)
class Change:
    """Base lines ``[start, end)`` replaced by ``lines`` (``start == end``: inserted there);
    ``new_at``: where ``lines`` start in the changed side."""

    start: int
    end: int
    lines: tuple[bytes, ...]
    new_at: int


_MIDDLE = 5000  # lines between the common head and tail compared at most (a longer one: no merge)


def changes(base: Sequence[bytes], new: Sequence[bytes]) -> list[Change] | None:
    """The changes from ``base`` to ``new`` (lines), or None when the part between their
    common head and tail is too long to compare here."""
    head, tail = common_ends(base, new)
    middle = (base[head : len(base) - tail], new[head : len(new) - tail])
    if max(map(len, middle)) > _MIDDLE:
        return None
    matcher = difflib.SequenceMatcher(None, *middle, autojunk=False)
    return [
        Change(head + i1, head + i2, tuple(middle[1][j1:j2]), head + j1)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _overlap(a: Change, b: Change) -> bool:
    """The two claim one base line, or lines go in at one point, or inside the other's span."""
    if a.start == a.end and b.start == b.end:
        return a.start == b.start
    return a.start < b.end and b.start < a.end


def _touch(a: Change, b: Change) -> int | None:
    """The base row boundary where the two meet (one ends where the other starts), or None."""
    if a.end == b.start:
        return a.end
    if b.end == a.start:
        return b.end
    return None


@dataclass
class _Side:
    """One side's parsed text (base, ours or theirs) and the statements of its rows."""

    tree: tree_sitter.Tree
    blocks: set[str]
    lines: Sequence[bytes]

    def statement(self, row: int) -> tree_sitter.Node | None:
        """The child of the innermost block holding ``row``, or None (none holds it)."""
        node, found = self.tree.root_node, None
        while True:
            child = next((c for c in node.children if _rows(c)[0] <= row <= _rows(c)[1]), None)
            if child is None:
                return found
            if node.type in self.blocks:
                found = child
            node = child


def _rows(node: tree_sitter.Node) -> tuple[int, int]:
    end = node.end_point
    return node.start_point.row, end.row - (1 if end.column == 0 and end.row else 0)


def _between(side: _Side, row: int) -> bool:
    """Rows ``row - 1`` and ``row`` lie in two statements of one block, the upper no comment."""
    node = side.tree.root_node
    while True:
        child = next(
            (c for c in node.children if _rows(c)[0] <= row - 1 and row <= _rows(c)[1]), None
        )
        if child is None:
            break
        node = child
    if node.type not in side.blocks or node.has_error:
        return False
    above = [c for c in node.children if _rows(c)[1] < row]
    return bool(above) and above[-1].type != "comment"


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """``node`` and every node under it (no recursion: a hostile file nests deeper than
    Python's stack)."""
    stack = [node]
    while stack:
        here = stack.pop()
        yield here
        stack.extend(reversed(here.children))


def _is_name(node: tree_sitter.Node) -> bool:
    return node.type.endswith("identifier") or node.type == "variable_name"


def _names(node: tree_sitter.Node) -> Iterator[bytes]:
    return (n.text or b"" for n in _walk(node) if _is_name(n))


def _defined(node: tree_sitter.Node) -> Iterator[bytes]:
    for here in _walk(node):
        yield from _called(here)
        for i, child in enumerate(here.children):
            field = here.field_name_for_child(i)
            if field and (here.type, field) in _DEFINES:
                yield from _targets(child)


def _called(node: tree_sitter.Node) -> Iterator[bytes]:
    """The names a bare call statement may change: its receiver's (``items`` in
    ``items.sort()``), its first argument's (``memset(buf, ...)``), any passed by address
    (``&n``); a shell command: each of its words (``read x``, ``export x``)."""
    if node.type == "command":
        yield from (word.text or b"" for word in node.children_by_field_name("argument"))
        return
    kids = node.named_children if node.type == "expression_statement" else []
    call = kids[0] if kids else None  # a lone ``;`` holds nothing
    if call is None or call.type not in _CALLS:
        return
    function = call.child_by_field_name("function")
    if function is not None and function.type in _MEMBERS:
        held = function.child_by_field_name("object") or function.child_by_field_name("argument")
        yield from _targets(held) if held is not None else ()
    listed = call.child_by_field_name("arguments")
    for i, arg in enumerate(
        a for a in (listed.named_children if listed else []) if a.type != "comment"
    ):
        if i == 0 or (arg.type == "pointer_expression" and arg.text and arg.text.startswith(b"&")):
            yield from _targets(arg)


def _targets(node: tree_sitter.Node) -> Iterator[bytes]:
    """The names a left side sets: ``self.total`` sets ``total`` (``self`` it only reads),
    ``rows[i]`` sets ``rows``; a call inside it sets nothing."""
    stack = [node]
    while stack:
        here = stack.pop()
        if here.type in _NOT_DEFINED:
            continue
        if _is_name(here):
            yield here.text or b""
            continue
        member = here.child_by_field_name("attribute") or here.child_by_field_name("field")
        held = here.child_by_field_name("value") or here.child_by_field_name("argument")
        if here.type in _MEMBERS and member is not None:
            stack.append(member)
        elif here.type in _INDEXED and held is not None:
            stack.append(held)
        elif here.type not in _INDEXED:
            stack.extend(here.children)


def _statements(side: _Side, start: int, count: int) -> list[tree_sitter.Node]:
    """The statements holding ``count`` rows of ``side`` from ``start`` (blank rows left out)."""
    found = {}
    for row in range(start, start + count):
        node = side.statement(row) if side.lines[row].strip() else None
        if node is not None:
            found[(node.start_byte, node.end_byte)] = node
    return list(found.values())


def _named(statements: list[tree_sitter.Node]) -> set[bytes]:
    return {name for node in statements for name in _names(node)}


def _independent(mine: list[tree_sitter.Node], other: list[tree_sitter.Node]) -> bool:
    """Neither list of statements assigns a name the other names."""
    named = [_named(mine), _named(other)]
    defined = [{n for s in group for n in _defined(s)} for group in (mine, other)]
    return not (defined[0] & named[1] or defined[1] & named[0])


def _dedented(lines: Sequence[bytes], indent: bytes) -> bytes:
    return b"".join(line.removeprefix(indent) for line in lines)


def _indent(lines: Sequence[bytes]) -> bytes:
    first = next((line for line in lines if line.strip()), b"")
    return first[: len(first) - len(first.lstrip())]


@dataclass
class _Sides:
    base: _Side
    ours: _Side
    theirs: _Side


def _parse(path: str, texts: Sequence[Sequence[bytes]]) -> _Sides | None:
    reader = _reader(path)
    if reader is None:
        return None
    parser, blocks = reader
    indent = _indent(texts[0])  # a method's lines are read as if at the top level
    trees = [parser.parse(_dedented(lines, indent)) for lines in texts]
    return _Sides(*(_Side(tree, blocks, lines) for tree, lines in zip(trees, texts, strict=True)))


def _fits(sides: _Sides, mine: Change, other: Change, at: int) -> bool:
    """Two changes (upstream's, the patch's) that meet at base row ``at`` may both be made:
    between two statements, neither assigning what the other names, and the patch's new
    lines naming nothing upstream's change took away (a renamed field: its old name)."""
    if not _between(sides.base, at):
        return False
    gone = _statements(sides.base, mine.start, mine.end - mine.start)
    came = _statements(sides.ours, mine.new_at, len(mine.lines))
    added = _statements(sides.theirs, other.new_at, len(other.lines))
    theirs = _statements(sides.base, other.start, other.end - other.start) + added
    if not (gone or came) or not theirs:
        return False
    dropped = _named(gone) - _named(came)
    return _independent(gone + came, theirs) and not dropped & _named(added)


def both_changes(
    base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]
) -> tuple[list[Change], list[Change]] | None:
    """The changes from ``base`` to ``ours`` (upstream's) and to ``theirs`` (the patch's), a
    change both made counted once, as upstream's; None when either is too long to compare."""
    upstream, patch = changes(base, ours), changes(base, theirs)
    if upstream is None or patch is None:
        return None
    made = {(c.start, c.end, c.lines) for c in upstream}
    return upstream, [c for c in patch if (c.start, c.end, c.lines) not in made]


def merge_statements(path: str, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """``ours`` with the change from ``base`` to ``theirs``, merged by statements as the
    module says; None when they cannot be (the line merge's conflict stands)."""
    texts = [split_lines(text) for text in (base, ours, theirs)]
    both = both_changes(*texts)
    if both is None:
        return None
    upstream, patch = both
    meets = []
    for mine in upstream:
        for other in patch:
            if _overlap(mine, other):
                return None
            at = _touch(mine, other)
            if at is not None:
                if not 0 < at < len(texts[0]) or other.start == other.end:
                    return None  # lines the patch only inserts beside a rewrite: a guess
                meets.append((mine, other, at))
    if not meets:
        return None
    sides = _parse(path, texts)
    if sides is None or not all(_fits(sides, *meet) for meet in meets):
        return None
    return _made(texts[0], sorted([*upstream, *patch], key=lambda c: (c.start, c.end)))


def _made(base: Sequence[bytes], made: Sequence[Change]) -> bytes:
    out: list[bytes] = []
    cursor = 0
    for change in made:
        out += base[cursor : change.start]
        out += change.lines
        cursor = change.end
    return b"".join(out + list(base[cursor:]))
