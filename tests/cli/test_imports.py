"""A command imports what it uses and nothing else: ``status`` and a warm ``apply`` (a rewrite
cache hit) run in a new process, output to a pipe, must not import libcst, the rewrite modules,
the package-index client, rich (no terminal), GitPython or tomlkit; a replayed ``apply`` or
``status`` (``ops/warm.py``) not even the engine, the patch-set reader or the data model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testing.builders import Scenario

REWRITE = """\
import libcst as cst
from patchkit.engine.rewrite import Rewrite


class Bump(Rewrite):
    path = "pkg/limits.py"
    anchors = {"LIMIT": 1}

    def leave_Integer(self, original_node, updated_node):
        if not self.in_anchor:
            return updated_node
        if updated_node.value == "2":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="2"))
"""

# Run one command in a new process; write the modules it imported (and its exit code) to a file.
PROBE = """\
import json, sys
from patchkit.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""

NEVER = (
    "pypi_simple",
    "requests",
    "bs4",
    "pydantic",
    "rich",
    "git",
    "tomlkit",
    "platformdirs",
    "filelock",
)
NOT_WARM = (
    "libcst",
    "patchkit_rewrites",
    "patchkit.engine.rewrite.run",
    "patchkit.engine.rewrite.load",
    "patchkit.engine.rewrite.file",
    "multiprocessing",
)


def _scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, {"pkg/limits.py": "LIMIT = 1\n", "a.txt": "a\n"})
    s.add("p1", {"a.txt": "A\n"})
    s.project.add_rewrite("bump", REWRITE)
    meta = s.set_root / "patches" / "bump.toml"
    meta.write_text(meta.read_text() + 'files = ["pkg/limits.py"]\n')
    return s


def _run(s: Scenario, tmp_path: Path, *args: str, probe: str = PROBE) -> set[str]:
    out = tmp_path / "modules.json"
    argv = [*args, "--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(out), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["code"] == 0, proc.stdout + proc.stderr
    return set(data["modules"])


def _imported(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture
def warm(tmp_path: Path) -> tuple[Scenario, Path]:
    s = _scenario(tmp_path)
    cold = _run(s, tmp_path, "apply")
    assert "libcst" in cold  # the first apply runs the rewrite: the probe can see imports
    assert s.read("pkg/limits.py") == b"LIMIT = 2\n"
    _run(s, tmp_path, "reset")
    assert s.read("pkg/limits.py") == b"LIMIT = 1\n"
    return s, tmp_path


def test_a_warm_apply_imports_no_libcst_rewrite_index_client_or_rich(
    warm: tuple[Scenario, Path],
) -> None:
    s, tmp_path = warm
    modules = _run(s, tmp_path, "apply")
    assert s.read("pkg/limits.py") == b"LIMIT = 2\n" and s.read("a.txt") == b"A\n"
    assert _imported(modules, NEVER + NOT_WARM) == []
    assert not [m for m in modules if m.startswith("patchkit_rewrites")]


def test_status_imports_no_libcst_index_client_or_rich(warm: tuple[Scenario, Path]) -> None:
    s, tmp_path = warm
    for args in (("status",), ("status", "--json")):
        modules = _run(s, tmp_path, *args)
        assert _imported(modules, NEVER + NOT_WARM + ("unidiff",)) == [], args


def test_port_imports_no_index_client_or_rich(warm: tuple[Scenario, Path]) -> None:
    s, tmp_path = warm
    out = tmp_path / "modules.json"
    patch = s.set_root / "patches" / "p1.patch"
    argv = ["port", str(patch), "--base", s.base, "--checkout", str(s.root)]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *argv], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["code"] == 0 and s.read("a.txt") == b"A\n"
    assert _imported(set(data["modules"]), NEVER) == []
    # a lone diff needs neither the status engine, the rewrites' warm path nor patch sets
    lone = ("patchkit.ops.status", "patchkit.project.sets", "patchkit.tomlread", *REWRITE_PATH)
    assert _imported(set(data["modules"]), lone) == []


REWRITE_PATH = ("patchkit.engine.rewrite.outcome", "patchkit.engine.rewrite.cache")


def test_every_patch_state_has_its_style() -> None:
    from patchkit.cli.render import _STATE_STYLE
    from patchkit.ops.status import PatchState

    assert set(_STATE_STYLE) == {state.value for state in PatchState}


# The same through the entry the console script and ``python -m patchkit`` use: the modules the
# command imported (not those the interpreter's start did, its site's .pth files), taken before
# the probe imports json to write them.
ENTRY_PROBE = """\
import sys
started = set(sys.modules)
from patchkit.__main__ import main
code = main(sys.argv[2:])
modules = sorted(set(sys.modules) - started)
import json
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": modules}, f)
"""

# What a replayed apply or status never loads: the engine and its parsers, the index client and
# the upstream sources, rich, the patch-set reader, the verbs' full paths, verification, the
# command line's parser, the workspace's full writer and the standard library's heavier
# modules (a warm run costs little more than the interpreter's start).
HEAVY = (
    "patchkit.cli",
    "argparse",
    "pathlib",
    "dataclasses",
    "json",
    "re",
    "typing",
    "threading",
    "patchkit.cache",
    "patchkit.workspace.tree",
    "patchkit.workspace.state",
    "patchkit.workspace.txn",
    "patchkit.workspace.locks",
    "patchkit.engine",
    "libcst",
    "tree_sitter",
    "rich",
    "pypi_simple",
    "patchkit.upstream",
    "patchkit.project",
    "patchkit.tomlread",
    "patchkit.model",
    "patchkit.outcome",
    "patchkit.ops.apply",
    "patchkit.ops.apply_tree",
    "patchkit.ops.status",
    "patchkit.ops.context",
    "patchkit.verification",
    "patchkit.gitrepo",
    "multiprocessing",
    "subprocess",
    "logging",
)


def test_a_replayed_apply_and_status_import_none_of_the_heavy_modules(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    time.sleep(2.1)  # inputs changed in the last two seconds make no record (racily clean)
    full = _run(s, tmp_path, "apply", probe=ENTRY_PROBE)
    assert "patchkit.engine.series" in full  # the probe sees the full path's imports
    _run(s, tmp_path, "reset")
    warm = _run(s, tmp_path, "apply", probe=ENTRY_PROBE)
    assert s.read("pkg/limits.py") == b"LIMIT = 2\n" and s.read("a.txt") == b"A\n"
    assert _imported(warm, HEAVY) == []
    time.sleep(2.1)  # the files apply wrote settle
    assert "patchkit.ops.status" in _run(s, tmp_path, "status", probe=ENTRY_PROBE)
    assert _imported(_run(s, tmp_path, "status", probe=ENTRY_PROBE), HEAVY) == []
