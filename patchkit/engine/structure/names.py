"""The name a scope node goes by in a scope path: ``def get_quant_method``, ``struct Foo``,
``operator()``, ``#if defined(X)``, ``foreach(arch IN LISTS ARCHS)``; and the first line it
covers (decorators and ``template <...>`` lines belong to what they decorate)."""

from __future__ import annotations

import re

import tree_sitter

_SPACE = re.compile(r"\s+")
_MAX = 80


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    text = _SPACE.sub(" ", node.text.decode("utf-8", "replace")).strip()
    return text if len(text) <= _MAX else text[: _MAX - 1] + "…"


def _python(node: tree_sitter.Node) -> str:
    word = "class" if node.type == "class_definition" else "def"
    return f"{word} {_text(node.child_by_field_name('name'))}"


_MACRO = re.compile(r"[A-Z][A-Z0-9_]*")
_WORD = re.compile(r"\w+")


def _declarator_name(node: tree_sitter.Node) -> str:
    """The name inside a (possibly pointer/reference) function declarator."""
    seen = node.child_by_field_name("declarator")
    while seen is not None and seen.type != "function_declarator":
        inner = seen.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in seen.named_children if "declarator" in c.type), None)
        seen = inner
    if seen is None:
        first = _text(node).split("{")[0]
        return first.strip() or node.type
    name = _text(seen.child_by_field_name("declarator"))
    if node.child_by_field_name("type") is None and _MACRO.fullmatch(name):
        # TEST_F(Suite, Name) { ... }: a macro that defines a function; its arguments are the
        # name (without them every test of a file would be a look-alike twin of the others)
        arguments = _text(seen.child_by_field_name("parameters"))
        return _test_name(name, " ".join(arguments.split()))
    return name


def _test_name(macro: str, arguments: str) -> str:
    """A test macro's suite and test name, whatever its variant: ``UCS_TEST_F(s, t)`` and
    ``UCS_TEST_SKIP_COND_F(s, t, COND)`` are the same test ``TEST(s, t)`` (a release adds or
    drops a skip condition; the test is the same one)."""
    parts = [p.strip() for p in arguments.strip("()").split(",")]
    if "TEST" not in macro or len(parts) < 2 or not all(_WORD.fullmatch(p) for p in parts[:2]):
        return macro + arguments
    return f"TEST({parts[0]}, {parts[1]})"


def _include_guard(node: tree_sitter.Node) -> bool:
    """``#ifndef X`` straight followed by ``#define X``: the whole header, not a scope."""
    name = node.child_by_field_name("name")
    named = node.named_children
    nxt = named[1] if len(named) > 1 else None
    return (
        node.children[0].type == "#ifndef"
        and name is not None
        and nxt is not None
        and nxt.type == "preproc_def"
        and _text(nxt.child_by_field_name("name")) == _text(name)
    )


def _preproc(node: tree_sitter.Node) -> str | None:
    if node.type == "preproc_function_def":
        return f"#define {_text(node.child_by_field_name('name'))}"
    if node.type == "preproc_ifdef" and _include_guard(node):
        return None
    if node.type == "preproc_else":
        return "#else"
    if node.type == "preproc_ifdef":
        keyword = _text(node.children[0]) if node.children else "#ifdef"
        return f"{keyword} {_text(node.child_by_field_name('name'))}"
    keyword = "#elif" if node.type == "preproc_elif" else "#if"
    return f"{keyword} {_text(node.child_by_field_name('condition'))}"


def _c_family(node: tree_sitter.Node) -> str | None:
    kind = node.type
    if kind == "function_definition":
        return _declarator_name(node)
    if kind == "namespace_definition":
        return f"namespace {_text(node.child_by_field_name('name'))}".rstrip()
    if kind.startswith("preproc_"):
        return _preproc(node)
    if kind == "linkage_specification":
        return f"extern {_text(node.child_by_field_name('value'))}"
    if node.child_by_field_name("body") is None:  # `struct Foo x;` declares, opens nothing
        return None
    word = kind.removesuffix("_specifier")
    return f"{word} {_text(node.child_by_field_name('name'))}".rstrip()


def _cmake(node: tree_sitter.Node) -> str:
    head = node.named_children[0] if node.named_children else None
    word = {"if_condition": "if", "foreach_loop": "foreach", "while_loop": "while"}.get(
        node.type, node.type.removesuffix("_def")
    )
    args = (
        None
        if head is None
        else next((c for c in head.named_children if c.type == "argument_list"), None)
    )
    text = _text(args)
    if word in ("function", "macro"):
        text = text.split(" ")[0]
    return f"{word}({text})"


def scope_name(language: str, node: tree_sitter.Node) -> str | None:
    """The node's name in a scope path; ``None`` when the node opens no scope after all."""
    if language == "python":
        return _python(node)
    if language == "cmake":
        return _cmake(node)
    return _c_family(node)


def first_row(node: tree_sitter.Node) -> int:
    """The first line a scope covers: its decorators and template headers included."""
    parent = node.parent
    while parent is not None and parent.type in ("decorated_definition", "template_declaration"):
        node, parent = parent, parent.parent
    return node.start_point.row


def last_row(node: tree_sitter.Node) -> int:
    """The last line a scope covers (a node ending at column 0 ends on the line before)."""
    end = node.end_point
    return max(end.row - 1, node.start_point.row) if end.column == 0 else end.row


def cmake_branches(node: tree_sitter.Node) -> list[tuple[str, int, int]]:
    """The ``elseif(...)`` and ``else()`` parts of a CMake ``if`` block: (name, first, last)."""
    parts: list[tuple[str, int, int]] = []
    children = node.named_children
    for i, child in enumerate(children):
        if child.type not in ("elseif_command", "else_command"):
            continue
        nxt = next((c for c in children[i + 1 :] if c.type.endswith("_command")), None)
        last = nxt.start_point.row - 1 if nxt is not None else last_row(node)
        args = next((c for c in child.named_children if c.type == "argument_list"), None)
        word = "elseif" if child.type == "elseif_command" else "else"
        parts.append(
            (f"{word}({_text(args)})", child.start_point.row, max(last, child.start_point.row))
        )
    return parts
