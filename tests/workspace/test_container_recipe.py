"""docs/container.md is a tested recipe: its Dockerfile's ``patchkit apply --installed`` lines run
as written (the image's interpreter stood in for by a virtual environment with the real FlashInfer
0.6.6 wheel, the project copied to ``/opt/patches`` stood in for by this repository), then its
status check; with ``flashinfer-jit-cache`` installed beside it, apply says the patch is moot."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from patchkit.cli import main
from tests.workspace.test_installed import fi_python as fi_python
from tests.workspace.test_installed import fi_venv_pristine as fi_venv_pristine
from tests.workspace.test_installed import flashinfer_wheel as flashinfer_wheel
from tests.workspace.test_installed import site_packages

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "container.md"

pytestmark = pytest.mark.upstream


def recipe_commands(target: str) -> list[list[str]]:
    """The ``patchkit ...`` commands of the doc's first Dockerfile block for ``target``."""
    block = re.search(r"```dockerfile\n(.*?)```", DOC.read_text(), re.S)
    assert block, "docs/container.md has no dockerfile block"
    joined = block.group(1).replace("\\\n", " ")
    commands = []
    for part in re.split(r"&&|\n", joined):
        words = shlex.split(part.replace('"$(command -v python3)"', "PYTHON"))
        if words and words[0].endswith("patchkit") and f"--target={target}" in "=".join(words):
            commands.append(words[1:])
    return commands


def run_recipe(python: Path, target: str) -> list[int]:
    codes = []
    for args in recipe_commands(target):
        args = [
            str(REPO) if a == "/opt/patches" else str(python) if a == "PYTHON" else a for a in args
        ]
        codes.append(main(args))
    return codes


def test_the_recipe_patches_the_installed_flashinfer(
    fi_python: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert len(recipe_commands("flashinfer")) == 1
    assert run_recipe(fi_python, "flashinfer") == [0]
    header = site_packages(fi_python) / "flashinfer/data/include/flashinfer/utils.cuh"
    assert b"group_size == 16" in header.read_bytes()
    capsys.readouterr()
    status = ["status", "--project", str(REPO), "--target", "flashinfer", "--installed"]
    assert main([*status, "--python", str(fi_python), "--json"]) == 0
    assert '"state": "applied"' in capsys.readouterr().out


def test_prebuilt_kernels_make_the_patch_moot_and_apply_says_so(
    fi_python: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (site_packages(fi_python) / "flashinfer_jit_cache-0.6.6.dist-info").mkdir()
    assert run_recipe(fi_python, "flashinfer") == [0]
    err = capsys.readouterr().err
    assert (
        "flashinfer-jit-cache is installed" in err and "pip uninstall flashinfer-jit-cache" in err
    )
