"""The shipped FlashInfer patch set on the real FlashInfer 0.6.6 source release: fetch, apply,
status, re-apply, reset — through the CLI, as a user runs it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from patchkit.cli import main
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.upstream

UTILS = "include/flashinfer/utils.cuh"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main([*args[:1], "--project", str(PROJECT_ROOT), *args[1:]])
    return code, capsys.readouterr().out


def test_gqa16_patch_on_real_flashinfer_066(
    real_tree: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tree = real_tree("flashinfer")
    pristine = (tree / UTILS).read_bytes()
    assert b"group_size == 16" not in pristine

    code, out = cli(capsys, "apply", "--target", "flashinfer", "--checkout", str(tree), "--json")
    assert code == 0, out
    report = json.loads(out)
    assert report["target"] == "flashinfer"
    assert report["commit"] == "70b142b75b46aa56e7f675a8e6ec1a977352c91f"
    assert [(p["id"], p["state"]) for p in report["patches"]] == [
        ("decode-gqa-group-size-16", "applied")
    ]
    patched = (tree / UTILS).read_bytes()
    assert b"} else if (group_size == 16) {" in patched
    assert b"constexpr size_t GROUP_SIZE = 16;" in patched

    code, out = cli(capsys, "status", "--target", "flashinfer", "--checkout", str(tree), "--json")
    assert code == 0
    assert [p["state"] for p in json.loads(out)["patches"]] == ["applied"]

    code, out = cli(capsys, "apply", "--target", "flashinfer", "--checkout", str(tree), "--json")
    assert code == 0 and json.loads(out)["noop"] is True
    assert (tree / UTILS).read_bytes() == patched

    code, out = cli(capsys, "reset", "--target", "flashinfer", "--checkout", str(tree))
    assert code == 0, out
    assert (tree / UTILS).read_bytes() == pristine
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True, check=True
    ).stdout
    assert dirty == ""

    code, out = cli(capsys, "status", "--target", "flashinfer", "--checkout", str(tree), "--json")
    assert [p["state"] for p in json.loads(out)["patches"]] == ["not applied"]
