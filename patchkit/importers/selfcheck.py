"""A mod's self-check after patching, read statically into a test of the patch it checks.

The checks mods make (``python3 -c 'import inspect, vllm.x.y as m; assert "marker" in
inspect.getsource(m.Class)'``, a here-document of such asserts) say which text a file of the
target holds once patched. Read with :mod:`ast`, never run: imports name modules, a source is
``inspect.getsource(X)`` of an imported module or one of its definitions (bound to a name or
used in place), and each ``assert "text" in SRC`` / ``not in SRC`` is a probe. Anything else
(``torch.cuda.is_available()``, a call, a loop) cannot be a static test: the check is kept as
a refusal naming the line and why, never dropped.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from patchkit.importers import checktest
from patchkit.importers.checktest import failure
from patchkit.importers.paths import installed_to_repo

MAX_CHECK = 64 * 1024  # characters of one self-check program read


@dataclass(frozen=True)
class Probe:
    """Texts that must be (``present``) and must not be (``absent``) in the source of
    ``dotted``: a module, or a definition in one (``vllm.x.y.Class.method``)."""

    dotted: str
    present: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class SelfCheck:
    line: int  # of the step in the mod's script
    text: str  # as written
    probes: tuple[Probe, ...] = ()
    refused: str = ""  # why it cannot be made a test ("" when it can)


@dataclass(frozen=True)
class Placed:
    """A probe placed in the tree: the file (repository path) and the definition in it."""

    path: str
    qualname: str
    present: tuple[str, ...]
    absent: tuple[str, ...]


@dataclass
class _Reading:
    package: str
    names: dict[str, str] = field(default_factory=dict)  # local name -> dotted module
    sources: dict[str, str] = field(default_factory=dict)  # local name -> dotted source
    probes: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)


class _Dynamic(Exception):
    """The check does something a static test cannot redo."""


def is_check(code: str) -> bool:
    """A program that asserts and writes nothing: a check, not a change."""
    return "assert" in code


def read_check(code: str, *, line: int, text: str, package: str) -> SelfCheck:
    """The probes of a self-check program, or why it cannot be made a test."""
    if len(code) > MAX_CHECK:
        return SelfCheck(line, text, refused=f"longer than {MAX_CHECK} characters")
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return SelfCheck(line, text, refused=f"cannot be parsed ({type(exc).__name__})")
    reading = _Reading(package)
    try:
        for statement in tree.body:
            _statement(reading, statement)
    except _Dynamic as exc:
        return SelfCheck(line, text, refused=str(exc))
    probes = tuple(
        Probe(dotted, tuple(present), tuple(absent))
        for dotted, (present, absent) in reading.probes.items()
    )
    if not probes:
        return SelfCheck(line, text, refused=f"asserts nothing about the {package} source")
    return SelfCheck(line, text, probes)


def _statement(reading: _Reading, node: ast.stmt) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            reading.names[local] = alias.name if alias.asname else local
    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
        for alias in node.names:
            reading.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            raise _Dynamic(f"assigns {ast.unparse(target)}")
        reading.sources[target.id] = _source(reading, node.value)
    elif isinstance(node, ast.Assert):
        _assert(reading, node.test)
    elif isinstance(node, ast.Expr) and _call_name(node.value) == "print":
        return  # output only
    else:
        raise _Dynamic(f"runs {_shown(node)}")


def _assert(reading: _Reading, test: ast.expr) -> None:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for value in test.values:
            _assert(reading, value)
        return
    ops = test.ops if isinstance(test, ast.Compare) else []
    if not (
        isinstance(test, ast.Compare)
        and len(ops) == 1
        and isinstance(ops[0], ast.In | ast.NotIn)
        and isinstance(test.left, ast.Constant)
        and isinstance(test.left.value, str)
    ):
        raise _Dynamic(f"asserts {_shown(test)}")
    right = test.comparators[0]
    if isinstance(right, ast.Name) and right.id in reading.sources:
        dotted = reading.sources[right.id]
    else:
        dotted = _source(reading, right)
    present, absent = reading.probes.setdefault(dotted, ([], []))
    (absent if isinstance(ops[0], ast.NotIn) else present).append(test.left.value)


def _source(reading: _Reading, node: ast.expr) -> str:
    """``inspect.getsource(X)`` of the target's code: X's dotted name."""
    name = _call_name(node)
    if not isinstance(node, ast.Call) or name not in ("inspect.getsource", "getsource"):
        raise _Dynamic(f"reads {_shown(node)}, not the source of the {reading.package} code")
    if name == "getsource" and reading.names.get("getsource") != "inspect.getsource":
        raise _Dynamic(f"calls {_shown(node)}")
    if len(node.args) != 1 or node.keywords:
        raise _Dynamic(f"calls {_shown(node)}")
    dotted = _dotted(node.args[0])
    root, _, rest = dotted.partition(".")
    module = reading.names.get(root)
    if not dotted or module is None:
        raise _Dynamic(f"asks the source of {_shown(node.args[0])}, which it did not import")
    full = f"{module}.{rest}" if rest else module
    if full.split(".")[0] != reading.package:
        raise _Dynamic(f"asks the source of {full}, not of {reading.package}")
    return full


def _call_name(node: ast.expr) -> str:
    return _dotted(node.func) if isinstance(node, ast.Call) else ""


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return ""


def _shown(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass(frozen=True)
class CheckTest:
    """A self-check placed on the patch whose files it looks at: the test to write for it."""

    line: int
    text: str
    placed: tuple[Placed, ...]

    @property
    def said(self) -> str:
        return f"line {self.line}: {self.text}"


def place(probe: Probe, target: str, paths: Sequence[str]) -> Placed | None:
    """The probe's module among ``paths`` (files the mod's patches change): the longest
    prefix of its dotted name that is one of them; None when none is."""
    parts = probe.dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut])
        for installed in (f"{module}.py", posixpath.join(module, "__init__.py")):
            path = installed_to_repo(installed, target)
            if path is not None and path in paths:
                return Placed(path, ".".join(parts[cut:]), probe.present, probe.absent)
    return None


def _text(read: Callable[[str], bytes | None], path: str) -> str | None:
    content = read(path)
    return None if content is None else content.decode("utf-8", "replace")


def _holds(placed: Placed, read: Callable[[str], bytes | None]) -> str:
    """ "" when the probe holds on the file ``read`` gives; else why not."""
    text = _text(read, placed.path)
    if text is None:
        return f"{placed.path} is not there"
    return failure(text, placed.qualname, placed.present, placed.absent)


def judge(
    test: CheckTest, before: Callable[[str], bytes | None], after: Callable[[str], bytes | None]
) -> str:
    """ "" when the check holds with the patch (``after``) and fails without it (``before``):
    a test of the patch; else why it is none."""
    for placed in test.placed:
        why = _holds(placed, after)
        if why:
            return f"it fails with the patch: {placed.path}: {why}"
    if all(not _holds(placed, before) for placed in test.placed):
        return "it passes without the patch too"
    return ""


def render(test_id: str, tests: Sequence[CheckTest], package: str) -> bytes:
    """The test file for a patch's checks: :mod:`checktest`'s source with its data filled in
    (every value written with ``repr``: hostile text stays a string)."""
    module = Path(checktest.__file__).read_text(encoding="utf-8")
    checks = tuple((p.path, p.qualname, p.present, p.absent) for test in tests for p in test.placed)
    said = tuple(test.said for test in tests)
    data = (
        f"PACKAGE = {package!r}\n"
        f"PATCH = {test_id!r}\n"
        f"SELF_CHECKS = {said!r}  # as the mod's script wrote them\n"
        f"CHECKS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = {checks!r}\n"
    )
    lines = module.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("PACKAGE = "))
    end = next(i for i, line in enumerate(lines) if line.startswith("CHECKS: "))
    return "".join([*lines[:start], data, *lines[end + 1 :]]).encode()
