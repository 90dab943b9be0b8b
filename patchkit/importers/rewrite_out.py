"""A simple replace script offered as a rewrite anchored by scope (``import --as-rewrite``).

"Simple": at the lock, every text the script replaces occurs exactly once in its file, inside
one class or function (the innermost definition holding it, found with the standard library's
``ast``), and its lines are indented at least as deep as that definition. The rewrite written
then names the definition as its anchor, with the number of replacements expected under it,
and replaces the text within that definition's own code only: moved elsewhere in the file, or
into a look-alike function, the text is not touched, and a count that does not match stops the
patch. The module is self-contained (it imports only :class:`patchkit.engine.rewrite.Rewrite`),
so a person can read and edit it like any other rewrite.
"""

from __future__ import annotations

import ast
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.series import Blobs, run_patch
from patchkit.importers.model import Candidate, FileEdits, Replace
from patchkit.model import PatchKind, PatchMeta
from patchkit.outcome import FileChange, Outcome, PatchResult

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class ScopedEdit:
    anchor: str  # qualified name of the innermost class or function holding the text
    old: str  # as the definition's own code spells it (dedented by its column)
    new: str


def _definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Every class and function with its qualified name."""
    out: list[tuple[str, ast.AST]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                out.append((name, child))
                walk(child, f"{name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def _start(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    first: int = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
    return first


def _dedent(text: str, col: int, at_line_start: bool) -> str | None:
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if i == 0 and not at_line_start:
            out.append(line)
        elif line.strip() and not line.startswith(" " * col):
            return None
        else:
            out.append(line[col:])
    return "\n".join(out)


def _scoped(text: str, tree: ast.Module, edit: Replace) -> ScopedEdit | str:
    """The edit anchored to its innermost definition, or why it cannot be."""
    if edit.old in edit.new:
        return f"script line {edit.line}: its new text contains the old, so done is not told"
    if text.count(edit.old) != 1:
        return f"script line {edit.line}: its text occurs {text.count(edit.old)} times"
    offset = text.index(edit.old)
    first = text.count("\n", 0, offset) + 1
    last = first + edit.old.rstrip("\n").count("\n")
    holders = [
        (name, node)
        for name, node in _definitions(tree)
        if _start(node) <= first and last <= (node.end_lineno or 0)  # type: ignore[attr-defined]
    ]
    if not holders:
        return f"script line {edit.line}: its text is at module level, in no class or function"
    name, node = holders[-1]
    col = node.col_offset  # type: ignore[attr-defined]
    at_line_start = offset == 0 or text[offset - 1] == "\n"
    old, new = _dedent(edit.old, col, at_line_start), _dedent(edit.new, col, at_line_start)
    if old is None or new is None:
        return f"script line {edit.line}: its text is indented less than {name}"
    return ScopedEdit(name, old, new)


def scoped_edits(edits: FileEdits, read: Reader) -> list[ScopedEdit] | str:
    """Each replacement of ``edits`` anchored by scope at the files ``read`` gives, or why not."""
    if edits.sed or edits.content is not None:
        return f"{edits.path}: a sed edit or a copied file is kept as a diff, not a rewrite"
    content = read(edits.path)
    if content is None:
        return f"{edits.path} does not exist at the lock"
    text = content.decode("utf-8", "surrogateescape")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return f"{edits.path} is not Python that parses"
    out = []
    for edit in edits.replaces:
        if edit.old == edit.new:
            continue  # a check, not an edit
        scoped = _scoped(text, tree, edit)
        if isinstance(scoped, str):
            return scoped
        out.append(scoped)
        text = text.replace(edit.old, edit.new, edit.count)
        tree = ast.parse(text)
    return out or "the script replaces nothing"


_TEMPLATE = '''"""{title}

Imported by `patchkit import --as-rewrite` from {source}, a replace script: each text is
replaced only inside the definition named as its anchor (the innermost class or function that
held it at {lock}), and the number of replacements under each anchor is checked.
"""

from __future__ import annotations

from typing import TypeVar

import libcst as cst

from patchkit.engine.rewrite import Rewrite

Definition = TypeVar("Definition", cst.ClassDef, cst.FunctionDef)

# (anchor, old text, new text): the text as the anchor's own code spells it (its indentation
# counted from the definition's column)
EDITS: list[tuple[str, str, str]] = [
{edits}]


class {name}(Rewrite):
    path = {path!r}
    anchors = {anchors!r}

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        return self._edit(updated_node)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        return self._edit(updated_node)

    def _edit(self, node: Definition) -> Definition:
        anchor = self.current_anchor
        if anchor is None or self.scope != anchor:
            return node
        code = cst.Module([]).code_for_node(node)
        for where, old, new in EDITS:
            if where != anchor:
                continue
            if code.count(old) == 1:
                code = code.replace(old, new)
                self.changed(None)
            elif old not in code and new in code:
                self.present(None)
        replaced = cst.parse_statement(code)
        assert isinstance(replaced, type(node))
        return replaced
'''


def rewrite_module(
    edits: FileEdits, scoped: list[ScopedEdit], *, name: str, title: str, source: str, lock: str
) -> str:
    counts = dict(Counter(e.anchor for e in scoped))
    lines = "".join(
        f"    (\n        {e.anchor!r},\n        {e.old!r},\n        {e.new!r},\n    ),\n"
        for e in scoped
    )
    words = "".join(
        w.capitalize() for w in "".join(c if c.isalnum() else " " for c in name).split()
    )
    return _TEMPLATE.format(
        title=title.replace('"""', "'''") or "Imported replace script",
        source=source,
        lock=lock,
        edits=lines,
        name=f"Imported{words[:40] or 'Replace'}",
        path=edits.path,
        anchors=counts,
    )


def offer(
    candidate: Candidate, read_lock: Reader, *, lock: str, expected: Sequence[FileChange]
) -> tuple[str, str]:
    """The rewrite module for a simple one-file replace script, checked by the engine to make
    exactly the ``expected`` files at the lock; or ("", why it is not offered)."""
    if len(candidate.edits) != 1:
        return "", f"the script edits {len(candidate.edits)} files; a rewrite is offered for one"
    edits = candidate.edits[0]
    scoped = scoped_edits(edits, read_lock)
    if isinstance(scoped, str):
        return "", scoped
    source = rewrite_module(
        edits,
        scoped,
        name=candidate.name,
        title=candidate.meta.title,
        source=candidate.source.name,
        lock=lock,
    )
    result = _run(source, candidate.name, read_lock)
    made = {c.path: c.content for c in result.changes}
    if result.outcome is not Outcome.APPLIED or made != {c.path: c.content for c in expected}:
        return "", f"the rewrite does not make the script's change ({result.outcome.value})"
    return source, ""


def _run(source: str, name: str, read: Reader) -> PatchResult:
    with tempfile.TemporaryDirectory(prefix="patchkit-import-") as tmp:
        file = Path(tmp) / f"{name.replace('-', '_')}.py"
        file.write_text(source)
        meta = PatchMeta(name, name, "import", "import", PatchKind.REWRITE, file, file, "")
        blobs = Blobs([])
        try:
            return run_patch(meta, read, blobs)
        finally:
            blobs.close()
