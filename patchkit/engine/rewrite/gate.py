"""The check a rewrite module passes, as text, before Python runs any of it.

A patch set is data anyone may share, and a rewrite is a Python module: importing it runs it.
So its syntax tree is read first and the module is refused (ConfigError naming the file and
the line) unless it only builds libcst transforms:

- it imports only ``__future__``, ``libcst``, ``libcst.matchers``, ``collections.abc``,
  ``re``, ``itertools``, a few names of ``typing`` (``TypeVar``, ``Any``...: none that
  evaluates a string) and ``Rewrite`` from ``patchkit.engine.rewrite``, and of those only
  public names (``__all__``); a module is used only as ``module.name``, never passed around;
- it names no builtin that reaches code, files or other modules (``eval``, ``exec``,
  ``open``, ``__import__``, ``getattr``, ``globals``, ``print``...), no dunder name and no
  exception that stops a program (``BaseException``, ``SystemExit``...); it has no bare
  ``except:`` (either would catch the time limit, ``deadline``, and go on);
- it reads no dunder attribute but ``__init__`` and ``__name__`` (``().__class__.__bases__``),
  no private attribute (``ForwardRef._evaluate``) but those it defines itself, and no frame,
  code or traceback attribute (``gi_frame``, ``f_globals``, ``tb_frame``...);
- it defines no dunder method but ``__init__`` (``__exit__`` returning True swallows errors);
- no annotation is a string, and no string is a subscript's key (``typing`` would
  evaluate ``List["code"]``).

Shipped and imported rewrites pass unchanged; this is a fence around the common escapes, not
a sandbox for arbitrary Python (the README says so)."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

from patchkit.errors import ConfigError, shown

_DENIED: dict[str, frozenset[str]] = {
    "libcst.matchers": frozenset({"MatcherDecoratableTransformer", "MatcherDecoratableVisitor"}),
}
_ONLY: dict[str, frozenset[str]] = {
    "patchkit.engine.rewrite": frozenset({"Rewrite"}),
    # (the importer's template uses TypeVar; get_args, get_type_hints, ForwardRef evaluate code)
    "typing": frozenset(
        {"TypeVar", "Any", "ClassVar", "Final", "Generic", "Optional", "Union", "TYPE_CHECKING"}
    ),
}
MODULES = frozenset(
    {"libcst", "libcst.matchers", "collections.abc", "re", "itertools"} | set(_ONLY)
)
STOPPERS = frozenset({"BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit"})
BUILTINS = frozenset(
    [
        "eval",
        "exec",
        "compile",
        "open",
        "__import__",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "globals",
        "locals",
        "vars",
        "dir",
        "breakpoint",
        "input",
        "help",
        "exit",
        "quit",
        "memoryview",
        "license",
        "credits",
        "print",  # (raw control characters to the terminal)
        "copyright",
    ]
)
DUNDERS = frozenset({"__init__", "__name__"})
FRAME_PREFIXES = ("gi_", "cr_", "ag_", "f_", "tb_", "co_", "func_", "im_")


def check_source(source: bytes, file: Path) -> None:
    """Refuse the rewrite module ``source`` (read from ``file``) unless it stays inside the
    fence above; nothing of it runs here."""
    try:
        tree = ast.parse(source, filename=str(file))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ConfigError(f"{file}: not a Python module patchkit can read: {exc}") from None
    problem = next(_problems(tree), None)
    if problem is not None:
        line, why = problem
        raise ConfigError(
            f"{file}: line {line}: {why}; the rewrite was not run",
            hint="a rewrite only builds libcst transforms: import libcst, libcst.matchers and "
            "Rewrite from patchkit.engine.rewrite, and use no eval/exec/open/getattr, imports "
            "of other modules or dunder attributes",
        )


def _problems(tree: ast.Module) -> Iterator[tuple[int, str]]:
    modules = _imported_modules(tree)
    module_names = {alias for alias, _ in modules}
    own = _own_names(tree)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from ((line, why) for why in _import_problems(node))
        elif isinstance(node, ast.Name):
            why = _name_problem(node, module_names, parents.get(node))
            if why:
                yield line, why
        elif isinstance(node, ast.Attribute):
            why = _attribute_problem(node.attr, modules, node, own)
            if why:
                yield line, why
        elif isinstance(node, ast.MatchClass):
            for attr in node.kwd_attrs:
                if _attribute_problem(attr, modules, None, own):
                    yield line, f"a match pattern reads the attribute {shown(attr)}"
        else:
            why = _node_problem(node)
            if why:
                yield line, why


def _node_problem(node: ast.AST) -> str | None:
    if _string_annotation(node):
        return "an annotation is a string (typing would evaluate it as code)"
    if isinstance(node, ast.Subscript) and any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(node.slice)
    ):
        return "a string is a subscript's key (typing would evaluate `X['code']` as code)"
    if isinstance(node, ast.ExceptHandler) and node.type is None:
        return "a bare `except:` would catch the time limit (name the exceptions it handles)"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
        node.name.startswith("__") and node.name.endswith("__") and node.name != "__init__"
    ):
        return f"it defines {shown(node.name)} (no dunder but __init__)"
    return None


def _own_names(tree: ast.Module) -> frozenset[str]:
    """The private names the module defines itself (``def _edit``, ``self._seen = ...``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return frozenset(n for n in found if n.startswith("_"))


def _imported_modules(tree: ast.Module) -> set[tuple[str, str]]:
    """(name bound, module) of every ``import M`` / ``import M as a``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                found.add((bound, alias.name if alias.asname else alias.name.split(".")[0]))
    return found


def _import_problems(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in MODULES:
                yield f"it imports {shown(alias.name)}, which a rewrite may not use"
        return
    module = node.module or ""
    if node.level or (module != "__future__" and module not in MODULES):
        yield f"it imports from {shown('.' * node.level + module)}, which a rewrite may not use"
        return
    for alias in node.names:
        if module != "__future__" and alias.name not in _public(module):
            yield f"it imports {shown(alias.name)} from {module}, which a rewrite may not use"


def _public(module: str) -> frozenset[str]:
    if module in _ONLY:
        return _ONLY[module]
    loaded = importlib.import_module(module)  # one of MODULES: the standard library or libcst
    names = getattr(loaded, "__all__", None) or [n for n in vars(loaded) if not n.startswith("_")]
    return frozenset(names) - _DENIED.get(module, frozenset())


def _name_problem(node: ast.Name, modules: set[str], parent: ast.AST | None) -> str | None:
    name = node.id
    if name in BUILTINS:
        return f"it names {shown(name)}, which reaches code, files or other modules"
    if name in STOPPERS:
        return f"it names {shown(name)}, which would catch the time limit"
    if name.startswith("__") and name.endswith("__") and name not in DUNDERS:
        return f"it names {shown(name)}"
    if name in modules and not (isinstance(parent, ast.Attribute) and parent.value is node):
        return f"it passes the module {shown(name)} around (use `{name}.Name` only)"
    return None


def _attribute_problem(
    attr: str, modules: set[tuple[str, str]], node: ast.Attribute | None, own: frozenset[str]
) -> str | None:
    if attr.startswith("__") and attr.endswith("__") and attr not in DUNDERS:
        return f"it reads the attribute {shown(attr)}"
    if attr.startswith("_") and attr not in DUNDERS and attr not in own:
        return f"it reads the private attribute {shown(attr)}, which it does not define"
    if attr.startswith(FRAME_PREFIXES):
        return f"it reads the attribute {shown(attr)} (frames, code and tracebacks are off limits)"
    module = _module_of(node.value, modules) if node is not None else None
    if module is not None:
        inner = f"{module}.{attr}"
        if inner not in MODULES and attr not in _public(module):
            return f"it reads {shown(attr)} of the module {module}, which a rewrite may not use"
    return None


def _module_of(value: ast.expr, modules: set[tuple[str, str]]) -> str | None:
    """The module an expression names (``cst``, ``libcst.matchers``), else None."""
    if isinstance(value, ast.Name):
        return next((module for bound, module in modules if bound == value.id), None)
    if isinstance(value, ast.Attribute):
        outer = _module_of(value.value, modules)
        if outer is not None and f"{outer}.{value.attr}" in MODULES:
            return f"{outer}.{value.attr}"
    return None


def _string_annotation(node: ast.AST) -> bool:
    annotations: list[ast.expr | None] = []
    if isinstance(node, ast.arg):
        annotations.append(node.annotation)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        annotations.append(node.returns)
    elif isinstance(node, ast.AnnAssign):
        annotations.append(node.annotation)
    return any(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in annotations)
