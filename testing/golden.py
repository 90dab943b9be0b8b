"""Inline golden text: the expected output is a module-level string constant of the test file
itself, compared as is; ``pytest --update-golden`` rewrites that constant in place (under a
lock, so parallel workers do not race) instead of comparing."""

from __future__ import annotations

import ast
import hashlib
import tempfile
from pathlib import Path

import pytest
from filelock import FileLock

OPTION = "--update-golden"


def literal(text: str) -> str:
    """``text`` as a triple-quoted Python literal starting on its own line."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    out = '"""\\\n' + body + '"""'
    assert ast.literal_eval(out) == text
    return out


def _assignment(path: Path, source: str, name: str) -> ast.expr:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
    raise AssertionError(f"{path}: no module-level `{name} = ...`")


def _rewrite(path: Path, name: str, text: str) -> None:
    source = path.read_bytes()  # ast's column offsets count UTF-8 bytes
    value = _assignment(path, source.decode(), name)
    lines = source.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: value.lineno - 1]) + value.col_offset
    end = sum(len(line) for line in lines[: (value.end_lineno or value.lineno) - 1])
    end += value.end_col_offset or 0
    path.write_bytes(source[:start] + literal(text).encode() + source[end:])


def check_inline(config: pytest.Config, path: str | Path, name: str, actual: str) -> None:
    """Compare ``actual`` with the string constant ``name`` of the test module at ``path``."""
    path = Path(path)
    if config.getoption("update_golden"):
        key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
        with FileLock(Path(tempfile.gettempdir()) / f"golden-{key}.lock"):
            _rewrite(path, name, actual)
        return
    expected = ast.literal_eval(_assignment(path, path.read_text(), name))
    assert actual == expected, f"{name} in {path.name} differs; pytest {OPTION} rewrites it"
