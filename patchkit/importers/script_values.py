"""The values a replace script is evaluated to, and its expressions: literals, names bound to
them, ``+``, f-strings, file objects (``open(p)``, ``Path(p)``), the text read from a file
(:class:`Code`, with the replacements made on it so far), and ``pkg.__file__`` of the target's
package. Anything else raises :class:`Dynamic` naming the node. Statements are
:mod:`patchkit.importers.scripts`."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from patchkit.errors import shown
from patchkit.importers.model import Replace

SITE = "/site-packages"  # where ``pkg.__file__`` is taken to live
UNKNOWN_WORD = "\0"  # a shell word whose value is not known (importers.shell)
MAX_ITERATIONS = 1000  # items of one literal `for`
MAX_STEPS = 100_000  # loop bodies run in one script, nested loops included
MAX_VALUE_CHARS = 1_000_000  # characters (or items) of one value the script builds
MAX_REPLACE_COUNT = 2**31 - 1  # a replace count beyond this is not a count
MODULES = {"os", "os.path", "pathlib", "pathlib.Path", "sys", "io"}
IGNORED_CALLS = {"print", "logging.info", "logging.warning", "sys.stdout.write"}
EXITS = {"sys.exit", "exit", "quit", "os._exit"}


@dataclass(frozen=True)
class Module:
    name: str  # "os.path", "pathlib.Path", "vllm" (a package: only its __file__ is read)


@dataclass(frozen=True)
class File:
    path: str  # as the script spells it
    mode: str = "r"


@dataclass(frozen=True)
class Code:
    path: str  # the file it was read from
    replaces: tuple[Replace, ...] = ()


class Dynamic(Exception):
    def __init__(self, node: cst.CSTNode, reason: str) -> None:
        super().__init__(reason)
        self.node, self.reason = node, reason


@dataclass
class Run:
    packages: frozenset[str]  # import names standing for the target's installed package
    env: dict[str, Any] = field(default_factory=dict)
    written: dict[str, tuple[Replace, ...]] = field(default_factory=dict)  # path -> edits
    order: list[str] = field(default_factory=list)
    lines: dict[cst.CSTNode, int] = field(default_factory=dict)
    argv: tuple[str, ...] = ()  # sys.argv as the mod's run.sh passes it (known words only)
    steps: int = 0  # loop bodies run so far (MAX_STEPS)


def line_of(run: Run, node: cst.CSTNode) -> int:
    return run.lines.get(node, 0)


def evaluate(run: Run, node: cst.BaseExpression) -> Any:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.ConcatenatedString):
        return evaluate(run, node.left) + evaluate(run, node.right)
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
    if isinstance(node, cst.Subscript):
        return _argv(run, node)
    raise Dynamic(node, f"a {type(node).__name__} expression cannot be read statically")


def _argv(run: Run, node: cst.Subscript) -> str:
    """``sys.argv[N]``: the word run.sh passes there, when it is known."""
    index = node.slice[0].slice if len(node.slice) == 1 else None
    if (
        dotted(node.value) == "sys.argv"
        and isinstance(index, cst.Index)
        and isinstance(index.value, cst.Integer)
    ):
        n = int(index.value.value)
        if n < len(run.argv) and UNKNOWN_WORD not in run.argv[n]:
            return run.argv[n]
        raise Dynamic(node, f"sys.argv[{n}] is not given a known value by the script calling it")
    raise Dynamic(node, "a subscript other than sys.argv[N] cannot be read statically")


def _element(run: Run, element: cst.BaseElement) -> Any:
    if not isinstance(element, cst.Element):
        raise Dynamic(element, "a starred element cannot be read statically")
    return evaluate(run, element.value)


def _name(run: Run, node: cst.Name) -> Any:
    constants = {"True": True, "False": False, "None": None}
    if node.value in constants:
        return constants[node.value]
    if node.value not in run.env:
        raise Dynamic(node, f"name {shown(node.value)} is not bound to a literal")
    return run.env[node.value]


def _fstring(run: Run, node: cst.FormattedString) -> str:
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
            raise Dynamic(part, "an f-string format spec cannot be read statically")
        value = evaluate(run, part.expression)
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise Dynamic(part, "an f-string field that is not a string or integer")
        out.append(repr(value) if part.conversion == "r" else str(value))
    return "".join(out)


def _binary(run: Run, node: cst.BinaryOperation) -> Any:
    left, right = evaluate(run, node.left), evaluate(run, node.right)
    if (
        isinstance(node.operator, cst.Add)
        and type(left) is type(right)
        and type(left) in (str, tuple)
    ):
        if len(left) + len(right) > MAX_VALUE_CHARS:
            raise Dynamic(node, f"builds a value over {MAX_VALUE_CHARS} long (MAX_VALUE_CHARS)")
        return left + right
    if isinstance(node.operator, cst.Divide) and isinstance(left, File) and isinstance(right, str):
        return File(posixpath.join(left.path, right))
    raise Dynamic(node, "an operation other than `+` on strings or lists")


def _attribute(run: Run, node: cst.Attribute) -> Any:
    base = evaluate(run, node.value)
    attr = node.attr.value
    if isinstance(base, Module) and attr == "__file__" and base.name.split(".")[0] in run.packages:
        return f"{SITE}/{base.name.replace('.', '/')}/__init__.py"
    if isinstance(base, Module) and f"{base.name}.{attr}" in MODULES:
        return Module(f"{base.name}.{attr}")
    if isinstance(base, File) and attr == "parent":
        return File(posixpath.dirname(base.path))
    raise Dynamic(node, f"attribute {shown(attr)} cannot be read statically")


def _call(run: Run, node: cst.Call) -> Any:
    name = dotted(node.func)
    if isinstance(node.func, cst.Attribute):
        owner = evaluate(run, node.func.value)
        if isinstance(owner, Code | File):
            return _method(run, node, owner, node.func.attr.value)
    args = [evaluate(run, a.value) for a in node.args if a.keyword is None]
    kwargs = {a.keyword.value: evaluate(run, a.value) for a in node.args if a.keyword}
    if name in ("open", "io.open") and args and isinstance(args[0], str):
        return File(args[0], str(args[1] if len(args) > 1 else kwargs.get("mode", "r")))
    if name in ("Path", "pathlib.Path") and len(args) == 1 and isinstance(args[0], str | File):
        return File(args[0] if isinstance(args[0], str) else args[0].path)
    if name == "os.path.join" and all(isinstance(a, str) for a in args):
        return posixpath.join(*args)
    if name == "os.path.dirname" and len(args) == 1 and isinstance(args[0], str):
        return posixpath.dirname(args[0])
    if name in IGNORED_CALLS:
        return None
    raise Dynamic(node, f"calls {name or 'something'}(), which import does not run")


def _method(run: Run, node: cst.Call, owner: Code | File, method: str) -> Any:
    args = [evaluate(run, a.value) for a in node.args]
    if isinstance(owner, File) and method in ("read", "read_text"):
        return Code(owner.path, run.written.get(owner.path, ()))
    if isinstance(owner, File) and method in ("write", "write_text") and len(args) == 1:
        return _write(run, node, owner, args[0])
    if isinstance(owner, File) and method == "open":
        return File(owner.path, str(args[0]) if args else "r")
    if (
        isinstance(owner, Code)
        and method == "replace"
        and _strings(args[:2])
        and len(args) in (2, 3)
    ):
        count = args[2] if len(args) == 3 else -1
        if not isinstance(count, int) or isinstance(count, bool):
            raise Dynamic(node, "a replace count that is not an integer literal")
        if not -1 <= count <= MAX_REPLACE_COUNT:
            raise Dynamic(
                node, f"a replace count outside -1..{MAX_REPLACE_COUNT} (MAX_REPLACE_COUNT)"
            )
        edit = Replace(args[0], args[1], count, line_of(run, node))
        return Code(owner.path, (*owner.replaces, edit))
    raise Dynamic(node, f"calls .{method}() in a way import cannot read")


def _write(run: Run, node: cst.Call, file: File, code: Any) -> None:
    if not isinstance(code, Code):
        raise Dynamic(node, "writes something other than the file's own edited text")
    if code.path != file.path:
        raise Dynamic(node, f"writes the text of {code.path} into another file, {file.path}")
    if file.path not in run.written:
        run.order.append(file.path)
    run.written[file.path] = code.replaces


def _strings(values: Sequence[Any]) -> bool:
    return all(isinstance(v, str) for v in values)


def dotted(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""
