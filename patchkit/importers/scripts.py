"""Replace scripts, read statically with libcst: never executed.

The scripts people carry read a file of an installed package, check ``assert old in code``,
do ``code = code.replace(old, new)`` and write the file back, for one file or several. This
module walks the script's statements and evaluates only what cannot run anything: literals,
names bound to literals, ``+``, f-strings, and ``for`` over literal lists (unrolled). File
reads and writes are recognised by their shape (``open(p).read()``, ``Path(p).read_text()``,
``with open(p, "w") as f: f.write(code)``...), and ``pkg.__file__`` of the target's package
stands for its installed location. Anything else (a function, a regex, ``sys.argv``, a loop
over something computed) refuses the script, naming the line.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from patchkit.errors import ImportRefused
from patchkit.importers.model import FileEdits, Replace
from patchkit.importers.paths import repo_path
from patchkit.importers.script_values import (
    EXITS,
    IGNORED_CALLS,
    MAX_ITERATIONS,
    MAX_STEPS,
    SITE,
    Code,
    Dynamic,
    File,
    Module,
    Run,
    dotted,
    evaluate,
    line_of,
)

__all__ = ["SITE", "check_nesting", "read_script", "script_comments"]
MAX_NESTING = 100  # brackets and indented blocks inside each other in a replace script


def check_nesting(source: bytes, where: Path) -> None:
    """Refuse, before libcst sees it, a script whose brackets and blocks nest deeper than
    MAX_NESTING (libcst's parser recurses and overflows the C stack: a segfault, at 2000
    parentheses), naming the line."""
    depth = 0
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            bracket = token.string if token.type == tokenize.OP else ""
            if token.type == tokenize.INDENT or bracket in ("(", "[", "{"):
                depth += 1
            elif token.type == tokenize.DEDENT or bracket in (")", "]", "}"):
                depth -= 1
            if depth > MAX_NESTING:
                raise ImportRefused(
                    f"{where} line {token.start[0]}: brackets and blocks nest deeper than "
                    f"{MAX_NESTING} (MAX_NESTING); import does not read it",
                    hint="a replace script is literal reads, replaces and writes: flatten it",
                )
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError) as exc:
        raise ImportRefused(f"{where}: not Python that can be read ({exc})") from None


def read_script(
    source: bytes, where: Path, target: str, argv: tuple[str, ...] = ()
) -> tuple[FileEdits, ...]:
    """The edits ``source`` makes, on the target's repository paths; ImportRefused naming the
    line when it does anything but the literal read/replace/write it is allowed to."""
    check_nesting(source, where)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise ImportRefused(f"{where}: not valid Python ({exc.message})") from None
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise ImportRefused(f"{where}: not Python that can be read ({exc})") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    run = Run(frozenset({target, *package_names(target)}), argv=argv)
    run.lines = {node: pos.start.line for node, pos in positions.items()}
    try:
        _block(run, wrapper.module.body)
    except Dynamic as exc:
        line = line_of(run, exc.node)
        code = module.code_for_node(exc.node).strip().splitlines()[0][:80]
        raise ImportRefused(
            f"{where} line {line}: {exc.reason} (`{code}`); a replace script is read, never run",
            hint="reduce the script to literal strings, read/replace/write and `for` over "
            "literal lists, or make the edit and `patchkit record` it",
        ) from None
    if not run.written:
        raise ImportRefused(f"{where}: writes no file back; there is no edit to import")
    return tuple(_edits(run, path, where, target) for path in run.order)


def package_names(target: str) -> tuple[str, ...]:
    from patchkit.targets import profile

    prof = profile(target)
    return tuple(sorted({inst.split("/")[0] for _, inst in prof.installed_map})) if prof else ()


def _edits(run: Run, path: str, where: Path, target: str) -> FileEdits:
    mapped = repo_path(path, target)
    if mapped is None or mapped.startswith(("/", "..")):
        raise ImportRefused(
            f"{where}: writes {path}, which is not a file of {target}",
            hint="import only scripts that edit the target's installed package",
        )
    return FileEdits(mapped, run.written[path])


# -- statements -------------------------------------------------------------------------------
def _block(run: Run, body: Sequence[cst.CSTNode]) -> None:
    for statement in body:
        _statement(run, statement)


def _statement(run: Run, node: cst.CSTNode) -> None:
    if isinstance(node, cst.SimpleStatementLine):
        for small in node.body:
            run.lines.setdefault(small, line_of(run, node))
            _small(run, small)
    elif isinstance(node, cst.With):
        _with(run, node)
    elif isinstance(node, cst.For):
        _for(run, node)
    elif isinstance(node, cst.If):
        _if(run, node)
    elif isinstance(node, cst.FunctionDef | cst.ClassDef):
        raise Dynamic(node, f"defines {node.name.value}(), and import runs no functions")
    else:
        raise Dynamic(node, f"a {type(node).__name__} statement cannot be read statically")


def _small(run: Run, node: cst.BaseSmallStatement) -> None:
    if isinstance(node, cst.Import | cst.ImportFrom):
        _import(run, node)
    elif isinstance(node, cst.Assign):
        value = evaluate(run, node.value)
        for target in node.targets:
            _bind(run, target.target, value)
    elif isinstance(node, cst.Expr):
        _expr_statement(run, node)
    elif isinstance(node, cst.Assert):
        _assert(run, node)
    elif isinstance(node, cst.Pass):
        return
    else:
        raise Dynamic(node, f"a {type(node).__name__} cannot be read statically")


def _expr_statement(run: Run, node: cst.Expr) -> None:
    if isinstance(node.value, cst.SimpleString | cst.ConcatenatedString):
        return  # a docstring
    if isinstance(node.value, cst.Call) and dotted(node.value.func) in IGNORED_CALLS:
        return
    evaluate(run, node.value)


def _import(run: Run, node: cst.Import | cst.ImportFrom) -> None:
    if isinstance(node, cst.Import):
        for alias in node.names:
            name = dotted(alias.name)
            bound = dotted(alias.asname.name) if alias.asname else name.split(".")[0]
            run.env[bound] = Module(name if alias.asname else name.split(".")[0])
        return
    module = dotted(node.module) if node.module else ""
    if isinstance(node.names, cst.ImportStar):
        raise Dynamic(node, "`import *` binds names import cannot know")
    for alias in node.names:
        name = dotted(alias.name)
        bound = dotted(alias.asname.name) if alias.asname else name
        run.env[bound] = Module(f"{module}.{name}")


def _bind(run: Run, target: cst.BaseExpression, value: Any) -> None:
    if isinstance(target, cst.Name):
        run.env[target.value] = value
        return
    if isinstance(target, cst.Tuple | cst.List) and isinstance(value, tuple):
        names = [e.value for e in target.elements]
        if len(names) != len(value):
            raise Dynamic(target, f"unpacks {len(value)} values into {len(names)} names")
        for name, item in zip(names, value, strict=True):
            _bind(run, name, item)
        return
    raise Dynamic(target, "assigns to something other than a name")


def _with(run: Run, node: cst.With) -> None:
    for item in node.items:
        value = evaluate(run, item.item)
        if not isinstance(value, File):
            raise Dynamic(item.item, "`with` over something other than an open file")
        if item.asname is not None:
            _bind(run, item.asname.name, value)
    _block(run, _body(node.body))


def _for(run: Run, node: cst.For) -> None:
    items = evaluate(run, node.iter)
    if not isinstance(items, tuple):
        raise Dynamic(node.iter, "`for` over something other than a literal list")
    if len(items) > MAX_ITERATIONS or node.orelse is not None:
        raise Dynamic(node, "`for` too long, or with an `else`")
    for item in items:
        run.steps += 1
        if run.steps > MAX_STEPS:
            raise Dynamic(node, f"loops run more than {MAX_STEPS} times in all (MAX_STEPS)")
        _bind(run, node.target, item)
        _block(run, _body(node.body))


def _if(run: Run, node: cst.If) -> None:
    """Guards: ``if old not in code: sys.exit(...)`` (an assert) and ``if new in code: exit``
    (already applied: the engine sees that itself). Nothing else branches."""
    test = node.test
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if isinstance(test, cst.UnaryOperation) else test
    check = _membership(run, inner) if isinstance(inner, cst.Comparison) else None
    body = _body(node.body)
    if check is None or node.orelse is not None or not all(_is_exit(run, s) for s in body):
        raise Dynamic(node, "an `if` that is not a guard around exit/raise")
    if check[2] == negated:  # exits when the text is missing: the script requires it
        _require(run, inner, check[0], node)


def _assert(run: Run, node: cst.Assert) -> None:
    check = _membership(run, node.test) if isinstance(node.test, cst.Comparison) else None
    if check is None:
        raise Dynamic(node, "an assert other than `text in code`")
    if check[2]:
        _require(run, node.test, check[0], node)


def _require(run: Run, test: cst.BaseExpression, needle: str, node: cst.CSTNode) -> None:
    """``text in code`` required: recorded as an edit whose old and new text are the same, so
    a base must have it. Only a name can carry it on; a check on a fresh read is left as is."""
    assert isinstance(test, cst.Comparison)
    holder = test.comparisons[0].comparator
    if isinstance(holder, cst.Name):
        code = run.env[holder.value]
        edit = Replace(needle, needle, -1, line_of(run, node))
        run.env[holder.value] = Code(code.path, (*code.replaces, edit))


def _membership(run: Run, test: cst.Comparison) -> tuple[str, Code, bool] | None:
    if len(test.comparisons) != 1:
        return None
    op = test.comparisons[0].operator
    if not isinstance(op, cst.In | cst.NotIn):
        return None
    needle = evaluate(run, test.left)
    code = evaluate(run, test.comparisons[0].comparator)
    if not isinstance(needle, str) or not isinstance(code, Code):
        return None
    return needle, code, isinstance(op, cst.In)


def _is_exit(run: Run, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.SimpleStatementLine):
        return False
    for small in node.body:
        if isinstance(small, cst.Raise | cst.Pass):
            continue
        call = small.value if isinstance(small, cst.Expr) else None
        if not isinstance(call, cst.Call):
            return False
        if dotted(call.func) not in EXITS | IGNORED_CALLS:
            return False
    return True


def _body(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return body.body


# -- expressions ------------------------------------------------------------------------------
def script_comments(source: bytes) -> list[str]:
    """The script's docstring lines and ``#`` comments, in order (for its metadata)."""
    text = source.decode("utf-8", "replace")
    out: list[str] = []
    try:
        doc = ast.get_docstring(ast.parse(text))
    except SyntaxError:
        doc = None
    if doc:
        out += doc.splitlines()
    out += [
        line.strip().lstrip("#").strip()
        for line in text.splitlines()
        if line.strip().startswith("#")
    ]
    return [line for line in out if line and not line.startswith("!")]
