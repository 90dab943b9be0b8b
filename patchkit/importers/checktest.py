"""A mod's self-check made the test of its imported patch: this module's source, after its
``PACKAGE`` and ``CHECKS`` lines are filled in, is the test file written into the set's
``tests/`` (standard library only: it runs with the tree's interpreter, without patchkit).

Each check names a file of the tree (a repository path), the definition it looked at
(``inspect.getsource(m.Class.method)``: ``"Class.method"``; ``""`` for the whole module), and
the texts that must be there and must not. The file is found through the package on
``sys.path`` (the patched tree ``verify`` puts first) without importing it, and the definition
by parsing the file, so the test needs nothing the package imports. Import runs :func:`failure`
on the file without and with the patch, and keeps a check only where it tells them apart.
"""

from __future__ import annotations

import ast
import importlib.util
import unittest
from pathlib import Path

PACKAGE = "vllm"  # the target's package: the tree is the directory holding it
CHECKS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = ()


def _definition(text: str, qualname: str) -> str | None:
    """The source of ``qualname`` (``Class.method``) in the module ``text``."""
    try:
        body: list[ast.stmt] = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: ast.stmt | None = None
    for name in qualname.split("."):
        kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        found = next((n for n in body if isinstance(n, kinds) and n.name == name), None)
        if found is None:
            return None
        body = found.body
    return ast.get_source_segment(text, found) if found is not None else None


def failure(text: str, qualname: str, present: tuple[str, ...], absent: tuple[str, ...]) -> str:
    """Why the check does not hold on ``text`` (a module's source); "" when it holds."""
    source = _definition(text, qualname) if qualname else text
    where = qualname or "the file"
    if source is None:
        return f"{qualname} is not defined there"
    missing = [marker for marker in present if marker not in source]
    if missing:
        return f"{missing[0]!r} is not in {where}"
    there = [marker for marker in absent if marker in source]
    return f"{there[0]!r} is still in {where}" if there else ""


def _tree_file(path: str) -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise unittest.SkipTest(f"the {PACKAGE} source tree is not on sys.path")
    return Path(next(iter(spec.submodule_search_locations))).parent / path


def test_self_check() -> None:
    for path, qualname, present, absent in CHECKS:
        file = _tree_file(path)
        assert file.is_file(), f"{path} is not in the tree"
        why = failure(file.read_text(encoding="utf-8"), qualname, present, absent)
        assert not why, f"{path}: {why}"
