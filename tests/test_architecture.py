"""The import contracts (pyproject's [tool.importlinter]) hold for the package, and they would
catch a module of a lower layer importing a higher one (the engine reaching up into the CLI), two
modules of one package importing each other in a loop, and a new top-level module given no layer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    script = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run(
        [sys.executable, "-c", script, "--no-cache"],
        cwd=project,
        env={"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("arch")
    shutil.copytree(
        ROOT / "patchkit", dest / "patchkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def test_the_package_keeps_its_layers(copy: Path) -> None:
    proc = lint_imports(copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "KEPT" in proc.stdout


def test_engine_importing_the_cli_breaks_the_contract(copy: Path) -> None:
    module = copy / "patchkit" / "engine" / "diff" / "parse.py"
    original = module.read_text()
    module.write_text(original + "\nfrom patchkit.cli import render as _render  # noqa\n")
    try:
        proc = lint_imports(copy)
    finally:
        module.write_text(original)
    assert proc.returncode != 0
    assert "patchkit.engine.diff.parse -> patchkit.cli" in proc.stdout


def test_argparse_only_in_the_cli() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "patchkit").rglob("*.py")
        if "cli" not in path.relative_to(ROOT / "patchkit").parts
        and ("argparse" in path.read_text() or "Namespace" in path.read_text())
    ]
    assert offenders == []


def test_a_circle_inside_a_package_breaks_the_contract(copy: Path) -> None:
    package = copy / "patchkit" / "workspace"
    (package / "circle_a.py").write_text("from patchkit.workspace import circle_b  # noqa\n")
    (package / "circle_b.py").write_text("from patchkit.workspace import circle_a  # noqa\n")
    try:
        proc = lint_imports(copy)
    finally:
        (package / "circle_a.py").unlink()
        (package / "circle_b.py").unlink()
    assert proc.returncode != 0
    assert "No cycles are allowed in patchkit.workspace" in proc.stdout


def test_a_new_top_level_module_must_be_given_a_layer(copy: Path) -> None:
    module = copy / "patchkit" / "unplaced.py"
    module.write_text("VALUE = 1\n")
    try:
        proc = lint_imports(copy)
    finally:
        module.unlink()
    assert proc.returncode != 0
    assert "patchkit.unplaced" in proc.stdout
