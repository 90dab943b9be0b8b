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
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from patchkit.errors import ImportRefused
from patchkit.importers.model import FileEdits, Replace
from patchkit.importers.paths import repo_path

SITE = "/site-packages"  # where ``pkg.__file__`` is taken to live
_MAX_ITERATIONS = 1000
_MODULES = {"os", "os.path", "pathlib", "pathlib.Path", "sys", "io"}
_IGNORED_CALLS = {"print", "logging.info", "logging.warning", "sys.stdout.write"}
_EXITS = {"sys.exit", "exit", "quit", "os._exit"}


@dataclass(frozen=True)
class _Module:
    name: str  # "os.path", "pathlib.Path", "vllm" (a package: only its __file__ is read)


@dataclass(frozen=True)
class _File:
    path: str  # as the script spells it
    mode: str = "r"


@dataclass(frozen=True)
class _Code:
    path: str  # the file it was read from
    replaces: tuple[Replace, ...] = ()


class _Dynamic(Exception):
    def __init__(self, node: cst.CSTNode, reason: str) -> None:
        super().__init__(reason)
        self.node, self.reason = node, reason


@dataclass
class _Run:
    packages: frozenset[str]  # import names standing for the target's installed package
    env: dict[str, Any] = field(default_factory=dict)
    written: dict[str, tuple[Replace, ...]] = field(default_factory=dict)  # path -> edits
    order: list[str] = field(default_factory=list)
    lines: dict[cst.CSTNode, int] = field(default_factory=dict)


def read_script(source: bytes, where: Path, target: str) -> tuple[FileEdits, ...]:
    """The edits ``source`` makes, on the target's repository paths; ImportRefused naming the
    line when it does anything but the literal read/replace/write it is allowed to."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise ImportRefused(f"{where}: not valid Python ({exc.message})") from None
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise ImportRefused(f"{where}: not Python that can be read ({exc})") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    run = _Run(frozenset({target, *_package_names(target)}))
    run.lines = {node: pos.start.line for node, pos in positions.items()}
    try:
        _block(run, wrapper.module.body)
    except _Dynamic as exc:
        line = _line_of(run, exc.node)
        code = module.code_for_node(exc.node).strip().splitlines()[0][:80]
        raise ImportRefused(
            f"{where} line {line}: {exc.reason} (`{code}`); a replace script is read, never run",
            hint="reduce the script to literal strings, read/replace/write and `for` over "
            "literal lists, or make the edit and `patchkit record` it",
        ) from None
    if not run.written:
        raise ImportRefused(f"{where}: writes no file back; there is no edit to import")
    return tuple(_edits(run, path, where, target) for path in run.order)


def _package_names(target: str) -> tuple[str, ...]:
    from patchkit.targets import profile

    prof = profile(target)
    return tuple({inst.split("/")[0] for _, inst in prof.installed_map}) if prof else ()


def _edits(run: _Run, path: str, where: Path, target: str) -> FileEdits:
    mapped = repo_path(path, target)
    if mapped is None or mapped.startswith(("/", "..")):
        raise ImportRefused(
            f"{where}: writes {path}, which is not a file of {target}",
            hint="import only scripts that edit the target's installed package",
        )
    return FileEdits(mapped, run.written[path])


def _line_of(run: _Run, node: cst.CSTNode) -> int:
    return run.lines.get(node, 0)


# -- statements -------------------------------------------------------------------------------
def _block(run: _Run, body: Sequence[cst.CSTNode]) -> None:
    for statement in body:
        _statement(run, statement)


def _statement(run: _Run, node: cst.CSTNode) -> None:
    if isinstance(node, cst.SimpleStatementLine):
        for small in node.body:
            run.lines.setdefault(small, _line_of(run, node))
            _small(run, small)
    elif isinstance(node, cst.With):
        _with(run, node)
    elif isinstance(node, cst.For):
        _for(run, node)
    elif isinstance(node, cst.If):
        _if(run, node)
    elif isinstance(node, cst.FunctionDef | cst.ClassDef):
        raise _Dynamic(node, f"defines {node.name.value}(), and import runs no functions")
    else:
        raise _Dynamic(node, f"a {type(node).__name__} statement cannot be read statically")


def _small(run: _Run, node: cst.BaseSmallStatement) -> None:
    if isinstance(node, cst.Import | cst.ImportFrom):
        _import(run, node)
    elif isinstance(node, cst.Assign):
        value = _eval(run, node.value)
        for target in node.targets:
            _bind(run, target.target, value)
    elif isinstance(node, cst.Expr):
        _expr_statement(run, node)
    elif isinstance(node, cst.Assert):
        _assert(run, node)
    elif isinstance(node, cst.Pass):
        return
    else:
        raise _Dynamic(node, f"a {type(node).__name__} cannot be read statically")


def _expr_statement(run: _Run, node: cst.Expr) -> None:
    if isinstance(node.value, cst.SimpleString | cst.ConcatenatedString):
        return  # a docstring
    if isinstance(node.value, cst.Call) and _dotted(node.value.func) in _IGNORED_CALLS:
        return
    _eval(run, node.value)


def _import(run: _Run, node: cst.Import | cst.ImportFrom) -> None:
    if isinstance(node, cst.Import):
        for alias in node.names:
            name = _dotted(alias.name)
            bound = _dotted(alias.asname.name) if alias.asname else name.split(".")[0]
            run.env[bound] = _Module(name if alias.asname else name.split(".")[0])
        return
    module = _dotted(node.module) if node.module else ""
    if isinstance(node.names, cst.ImportStar):
        raise _Dynamic(node, "`import *` binds names import cannot know")
    for alias in node.names:
        name = _dotted(alias.name)
        bound = _dotted(alias.asname.name) if alias.asname else name
        run.env[bound] = _Module(f"{module}.{name}")


def _bind(run: _Run, target: cst.BaseExpression, value: Any) -> None:
    if isinstance(target, cst.Name):
        run.env[target.value] = value
        return
    if isinstance(target, cst.Tuple | cst.List) and isinstance(value, tuple):
        names = [e.value for e in target.elements]
        if len(names) != len(value):
            raise _Dynamic(target, f"unpacks {len(value)} values into {len(names)} names")
        for name, item in zip(names, value, strict=True):
            _bind(run, name, item)
        return
    raise _Dynamic(target, "assigns to something other than a name")


def _with(run: _Run, node: cst.With) -> None:
    for item in node.items:
        value = _eval(run, item.item)
        if not isinstance(value, _File):
            raise _Dynamic(item.item, "`with` over something other than an open file")
        if item.asname is not None:
            _bind(run, item.asname.name, value)
    _block(run, _body(node.body))


def _for(run: _Run, node: cst.For) -> None:
    items = _eval(run, node.iter)
    if not isinstance(items, tuple):
        raise _Dynamic(node.iter, "`for` over something other than a literal list")
    if len(items) > _MAX_ITERATIONS or node.orelse is not None:
        raise _Dynamic(node, "`for` too long, or with an `else`")
    for item in items:
        _bind(run, node.target, item)
        _block(run, _body(node.body))


def _if(run: _Run, node: cst.If) -> None:
    """Guards: ``if old not in code: sys.exit(...)`` (an assert) and ``if new in code: exit``
    (already applied: the engine sees that itself). Nothing else branches."""
    test = node.test
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if isinstance(test, cst.UnaryOperation) else test
    check = _membership(run, inner) if isinstance(inner, cst.Comparison) else None
    body = _body(node.body)
    if check is None or node.orelse is not None or not all(_is_exit(run, s) for s in body):
        raise _Dynamic(node, "an `if` that is not a guard around exit/raise")
    if check[2] == negated:  # exits when the text is missing: the script requires it
        _require(run, inner, check[0], node)


def _assert(run: _Run, node: cst.Assert) -> None:
    check = _membership(run, node.test) if isinstance(node.test, cst.Comparison) else None
    if check is None:
        raise _Dynamic(node, "an assert other than `text in code`")
    if check[2]:
        _require(run, node.test, check[0], node)


def _require(run: _Run, test: cst.BaseExpression, needle: str, node: cst.CSTNode) -> None:
    """``text in code`` required: recorded as an edit whose old and new text are the same, so
    a base must have it. Only a name can carry it on; a check on a fresh read is left as is."""
    assert isinstance(test, cst.Comparison)
    holder = test.comparisons[0].comparator
    if isinstance(holder, cst.Name):
        code = run.env[holder.value]
        edit = Replace(needle, needle, -1, _line_of(run, node))
        run.env[holder.value] = _Code(code.path, (*code.replaces, edit))


def _membership(run: _Run, test: cst.Comparison) -> tuple[str, _Code, bool] | None:
    if len(test.comparisons) != 1:
        return None
    op = test.comparisons[0].operator
    if not isinstance(op, cst.In | cst.NotIn):
        return None
    needle = _eval(run, test.left)
    code = _eval(run, test.comparisons[0].comparator)
    if not isinstance(needle, str) or not isinstance(code, _Code):
        return None
    return needle, code, isinstance(op, cst.In)


def _is_exit(run: _Run, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.SimpleStatementLine):
        return False
    for small in node.body:
        if isinstance(small, cst.Raise | cst.Pass):
            continue
        call = small.value if isinstance(small, cst.Expr) else None
        if not isinstance(call, cst.Call):
            return False
        if _dotted(call.func) not in _EXITS | _IGNORED_CALLS:
            return False
    return True


def _body(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return body.body


# -- expressions ------------------------------------------------------------------------------
def _eval(run: _Run, node: cst.BaseExpression) -> Any:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.ConcatenatedString):
        return _eval(run, node.left) + _eval(run, node.right)
    if isinstance(node, cst.FormattedString):
        return _fstring(run, node)
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Name):
        return _name(run, node)
    if isinstance(node, cst.List | cst.Tuple):
        return tuple(_element(run, e) for e in node.elements)
    if isinstance(node, cst.BinaryOperation):
        return _binary(run, node)
    if isinstance(node, cst.Attribute):
        return _attribute(run, node)
    if isinstance(node, cst.Call):
        return _call(run, node)
    raise _Dynamic(node, f"a {type(node).__name__} expression cannot be read statically")


def _element(run: _Run, element: cst.BaseElement) -> Any:
    if not isinstance(element, cst.Element):
        raise _Dynamic(element, "a starred element cannot be read statically")
    return _eval(run, element.value)


def _name(run: _Run, node: cst.Name) -> Any:
    constants = {"True": True, "False": False, "None": None}
    if node.value in constants:
        return constants[node.value]
    if node.value not in run.env:
        raise _Dynamic(node, f"name {node.value!r} is not bound to a literal")
    return run.env[node.value]


def _fstring(run: _Run, node: cst.FormattedString) -> str:
    quote = node.start.lstrip("fFrRbB")
    raw = "r" in node.start.lower()
    out = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            text = part.value.replace("{{", "{").replace("}}", "}")
            out.append(text if raw else ast.literal_eval(quote + text + quote))
            continue
        assert isinstance(part, cst.FormattedStringExpression)
        if part.format_spec is not None:
            raise _Dynamic(part, "an f-string format spec cannot be read statically")
        value = _eval(run, part.expression)
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise _Dynamic(part, "an f-string field that is not a string or integer")
        out.append(repr(value) if part.conversion == "r" else str(value))
    return "".join(out)


def _binary(run: _Run, node: cst.BinaryOperation) -> Any:
    left, right = _eval(run, node.left), _eval(run, node.right)
    if (
        isinstance(node.operator, cst.Add)
        and type(left) is type(right)
        and type(left) in (str, tuple)
    ):
        return left + right
    if isinstance(node.operator, cst.Divide) and isinstance(left, _File) and isinstance(right, str):
        return _File(posixpath.join(left.path, right))
    raise _Dynamic(node, "an operation other than `+` on strings or lists")


def _attribute(run: _Run, node: cst.Attribute) -> Any:
    base = _eval(run, node.value)
    attr = node.attr.value
    if isinstance(base, _Module) and attr == "__file__" and base.name.split(".")[0] in run.packages:
        return f"{SITE}/{base.name.replace('.', '/')}/__init__.py"
    if isinstance(base, _Module) and f"{base.name}.{attr}" in _MODULES:
        return _Module(f"{base.name}.{attr}")
    if isinstance(base, _File) and attr == "parent":
        return _File(posixpath.dirname(base.path))
    raise _Dynamic(node, f"attribute {attr!r} cannot be read statically")


def _call(run: _Run, node: cst.Call) -> Any:
    name = _dotted(node.func)
    if isinstance(node.func, cst.Attribute):
        owner = _eval(run, node.func.value)
        if isinstance(owner, _Code | _File):
            return _method(run, node, owner, node.func.attr.value)
    args = [_eval(run, a.value) for a in node.args if a.keyword is None]
    kwargs = {a.keyword.value: _eval(run, a.value) for a in node.args if a.keyword}
    if name in ("open", "io.open") and args and isinstance(args[0], str):
        return _File(args[0], str(args[1] if len(args) > 1 else kwargs.get("mode", "r")))
    if name in ("Path", "pathlib.Path") and len(args) == 1 and isinstance(args[0], str | _File):
        return _File(args[0] if isinstance(args[0], str) else args[0].path)
    if name == "os.path.join" and all(isinstance(a, str) for a in args):
        return posixpath.join(*args)
    if name == "os.path.dirname" and len(args) == 1 and isinstance(args[0], str):
        return posixpath.dirname(args[0])
    if name in _IGNORED_CALLS:
        return None
    raise _Dynamic(node, f"calls {name or 'something'}(), which import does not run")


def _method(run: _Run, node: cst.Call, owner: _Code | _File, method: str) -> Any:
    args = [_eval(run, a.value) for a in node.args]
    if isinstance(owner, _File) and method in ("read", "read_text"):
        return _Code(owner.path, run.written.get(owner.path, ()))
    if isinstance(owner, _File) and method in ("write", "write_text") and len(args) == 1:
        return _write(run, node, owner, args[0])
    if isinstance(owner, _File) and method == "open":
        return _File(owner.path, str(args[0]) if args else "r")
    if (
        isinstance(owner, _Code)
        and method == "replace"
        and _strings(args[:2])
        and len(args) in (2, 3)
    ):
        count = args[2] if len(args) == 3 else -1
        if not isinstance(count, int):
            raise _Dynamic(node, "a replace count that is not an integer literal")
        edit = Replace(args[0], args[1], count, _line_of(run, node))
        return _Code(owner.path, (*owner.replaces, edit))
    raise _Dynamic(node, f"calls .{method}() in a way import cannot read")


def _write(run: _Run, node: cst.Call, file: _File, code: Any) -> None:
    if not isinstance(code, _Code):
        raise _Dynamic(node, "writes something other than the file's own edited text")
    if code.path != file.path:
        raise _Dynamic(node, f"writes the text of {code.path} into another file, {file.path}")
    if file.path not in run.written:
        run.order.append(file.path)
    run.written[file.path] = code.replaces


def _strings(values: Sequence[Any]) -> bool:
    return all(isinstance(v, str) for v in values)


def _dotted(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""


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
