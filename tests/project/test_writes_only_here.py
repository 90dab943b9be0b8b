"""The project's own files (``upstream.lock``, ``patchset.toml``, patch metadata and patch files)
are written only by ``patchkit/project/``: seen as the verbs run (every file write under the
project, with the code on the stack), and read from the source (no other module edits their
TOML or writes a path named like one of them)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from patchkit.export.publish import record_pr
from patchkit.model import PrState, UpstreamPr
from patchkit.ops.retire import retire
from patchkit.ops.upstream_check import write_upstream
from patchkit.project.load import load_project
from testing.builders import Scenario
from tests.project.verbs import PACKAGE, READY, scenario, watching


def ready_retire(s: Scenario) -> Callable[[], object]:
    project = load_project(s.project.path)
    return lambda: retire(project=project, patch_id="p1", merged_in="1.1")


def ready_upstream_check(s: Scenario) -> Callable[[], object]:
    up = UpstreamPr("https://github.com/o/r/pull/7", PrState.OPEN, "2026-11-26")
    return lambda: write_upstream(s.project.path, s.set_root / "patches" / "p1.toml", up)


def ready_export_pr(s: Scenario) -> Callable[[], object]:
    return lambda: record_pr(s.set_root / "patches" / "p1.toml", "https://github.com/o/r/pull/8")


EVERY = {
    **READY,
    "retire": ready_retire,
    "upstream-check": ready_upstream_check,
    "export-pr": ready_export_pr,
}


@pytest.mark.parametrize("verb", sorted(EVERY))
def test_every_write_to_a_project_file_is_made_by_patchkit_project(
    tmp_path: Path, verb: str
) -> None:
    s = scenario(tmp_path)
    run = EVERY[verb](s)
    with watching(s.project.path) as watch:
        run()
    assert watch.seen, "the verb wrote nothing: the watch saw nothing to judge"
    assert watch.outside_owner() == []


# -- in the source ----------------------------------------------------------------------------
ALLOWED = ("project/", "workspace/")  # the owner, and the journal it writes through
TOMLKIT_READ = "tomlread.py"  # reads TOML with tomlkit on Python 3.10, never writes
WRITES = {"write_text", "write_bytes", "replace", "rename", "write_file", "open"}
PROJECT_NAMES = re.compile(
    r"meta_file|meta\.file|\bmanifest\b|\bMANIFEST\b|patch_file|patchset|patches\b|\.toml|"
    r"upstream\.lock|lock_path|lock\.path|\.lock\b|lock_text"
)


def _modules() -> list[tuple[str, ast.Module, str]]:
    root = Path(PACKAGE)
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(ALLOWED):
            text = path.read_text()
            found.append((rel, ast.parse(text), text))
    return found


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _writes_a_project_file(call: ast.Call, text: str) -> bool:
    """A call that writes (``x.write_text``, ``os.replace``, ``open(.., "w")``...) where the
    file it writes is named like a project file."""
    name = _name(call)
    if name not in WRITES:
        return False
    if name == "open" and not any(
        isinstance(a, ast.Constant) and isinstance(a.value, str) and set(a.value) & set("wax+")
        for a in call.args[1:2]
    ):
        return False
    func = call.func
    target = func.value if isinstance(func, ast.Attribute) else None
    parts = [*call.args[:2]] + ([target] if target is not None and name != "replace" else [])
    if name == "replace" and isinstance(target, ast.expr):
        parts.append(target)
        if not call.args or isinstance(call.args[0], ast.Constant):
            return False  # str.replace("a", "b"), dataclasses.replace(x, ...)
    return any(PROJECT_NAMES.search(ast.get_source_segment(text, p) or "") for p in parts)


def test_no_module_outside_patchkit_project_writes_a_project_file() -> None:
    found = [
        f"{rel}:{node.lineno}: {ast.get_source_segment(text, node)}"
        for rel, tree, text in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _writes_a_project_file(node, text)
    ]
    assert found == []


def test_tomlkit_edits_the_project_only_in_patchkit_project() -> None:
    found = [
        f"{rel}:{node.lineno}"
        for rel, tree, _ in _modules()
        if rel != TOMLKIT_READ
        for node in ast.walk(tree)
        if (isinstance(node, ast.Import) and any(a.name.startswith("tomlkit") for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tomlkit"))
    ]
    assert found == []
