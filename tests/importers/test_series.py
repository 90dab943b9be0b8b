"""Series in and out: a commit range and format-patch mail imported, then written back with
``export-series`` and applied by ``git am`` / ``patch -p1`` in series order."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from patchkit.engine.series import Blobs
from patchkit.errors import TreeError
from patchkit.ops.apply_tree import upstream_view
from patchkit.ops.export_series import SeriesExport, export_series
from patchkit.project.load import load_project
from patchkit.project.sets import read_toml
from patchkit.workspace.tree import checkout_tree
from testing.builders import run_git
from tests.importers.conftest import Releases3


def _feature_branch(releases3: Releases3) -> str:
    """Two commits on the lock (v1.2): an edit with a sign-off, and a new file plus an edit."""
    up = releases3.upstream.path
    run_git(up, "checkout", "-q", "-b", "feature", "v1.2")
    model = (up / "vllm" / "model.py").read_text()
    (up / "vllm" / "model.py").write_text(model.replace("return 2", "return 20"))
    run_git(
        up,
        "commit",
        "-qam",
        "model: return 20\n\nFixes https://github.com/vllm-project/vllm/issues/9\n\nSigned-off-by: Dev <dev@example.com>",
    )
    (up / "vllm" / "extra.py").write_text("EXTRA = 1\n")
    util = (up / "vllm" / "util.py").read_text()
    (up / "vllm" / "util.py").write_text(util.replace("y * 2", "y * 3"))
    run_git(up, "add", "-A")
    run_git(up, "commit", "-qm", "util: triple, and an extra module")
    run_git(up, "checkout", "-q", "main")
    return run_git(up, "rev-parse", "feature^{tree}").decode().strip()


def _export(releases3: Releases3, out: Path, fmt: str) -> SeriesExport:
    project = load_project(releases3.project.path, ["imported"])
    tree = checkout_tree(releases3.upstream.path, "vllm")
    blobs = Blobs([releases3.upstream.path])
    try:
        return export_series(
            patches=project.patches("vllm"),
            lock=upstream_view(tree, committed=True),
            blobs=blobs,
            directory=out,
            fmt=fmt,
        )
    finally:
        blobs.close()


def _fresh_clone(releases3: Releases3, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(releases3.upstream.path), str(clone))
    run_git(clone, "checkout", "-q", "-b", "work", "v1.2")
    return clone


def test_range_import_then_mbox_export_then_git_am_gives_the_same_tree(
    releases3: Releases3, tmp_path: Path
) -> None:
    feature_tree = _feature_branch(releases3)
    report = releases3.import_(f"{releases3.upstream.path}@v1.2..feature")
    assert [(p.form, p.outcome) for p in report.patches] == [("git-range", "applied")] * 2
    first = read_toml(releases3.set_dir() / "patches" / f"{report.patches[0].name}.toml")
    assert first["title"] == "model: return 20"
    assert first["issues"] == ["https://github.com/vllm-project/vllm/issues/9"]
    assert first["imported"]["fields"]["Signed-off-by"] == "Dev <dev@example.com>"

    out = tmp_path / "mbox"
    done = _export(releases3, out, "mbox")
    assert [p.name for p in done.files] == [
        "0001-model-return-20.patch",
        "0002-util-triple-and-an-extra-module.patch",
    ]
    clone = _fresh_clone(releases3, tmp_path)
    run_git(clone, "am", "-q", *(str(p) for p in done.files))
    assert run_git(clone, "rev-parse", "HEAD^{tree}").decode().strip() == feature_tree
    log = run_git(clone, "log", "-2", "--format=%s|%an").decode().splitlines()
    assert log == ["util: triple, and an extra module|Test Person", "model: return 20|Test Person"]


def test_quilt_export_applies_in_series_order_and_carries_dep3(
    releases3: Releases3, tmp_path: Path
) -> None:
    feature_tree = _feature_branch(releases3)
    releases3.import_(f"{releases3.upstream.path}@v1.2..feature")
    out = tmp_path / "quilt"
    done = _export(releases3, out, "quilt")
    series = (out / "series").read_text().split()
    first = (out / series[0]).read_text()
    assert first.startswith("Description: model: return 20\n")
    assert "Bug: https://github.com/vllm-project/vllm/issues/9\n" in first
    assert "Forwarded: no\n" in first
    clone = _fresh_clone(releases3, tmp_path)
    for name in series:  # what `quilt push -a` does: patch -p1, in series order
        subprocess.run(["patch", "-s", "-p1", "-i", str(out / name)], cwd=clone, check=True)
    run_git(clone, "add", "-A")
    assert run_git(clone, "write-tree").decode().strip() == feature_tree
    assert done.left_out == ()


@pytest.mark.skipif(shutil.which("quilt") is None, reason="quilt is not installed here")
def test_quilt_push_all_applies_the_exported_series(releases3: Releases3, tmp_path: Path) -> None:
    feature_tree = _feature_branch(releases3)
    releases3.import_(f"{releases3.upstream.path}@v1.2..feature")
    out = tmp_path / "quilt"
    _export(releases3, out, "quilt")
    clone = _fresh_clone(releases3, tmp_path)
    env = {**os.environ, "QUILT_PATCHES": str(out), "QUILTRC": "-"}
    done = subprocess.run(["quilt", "push", "-a"], cwd=clone, env=env, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(clone / ".pc")
    run_git(clone, "add", "-A")
    assert run_git(clone, "write-tree").decode().strip() == feature_tree


def test_export_refuses_a_directory_it_did_not_write(releases3: Releases3, tmp_path: Path) -> None:
    _feature_branch(releases3)
    releases3.import_(f"{releases3.upstream.path}@v1.2..feature")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.patch").write_text("mine\n")
    with pytest.raises(TreeError):
        _export(releases3, mine, "mbox")
    assert (mine / "keep.patch").read_text() == "mine\n"


def test_format_patch_mbox_file_imports_with_its_headers(
    releases3: Releases3, tmp_path: Path
) -> None:
    _feature_branch(releases3)
    mbox = run_git(releases3.upstream.path, "format-patch", "--stdout", "v1.2..feature")
    (tmp_path / "fixes.mbox").write_bytes(mbox)
    report = releases3.import_(tmp_path / "fixes.mbox")
    assert [(p.form, p.outcome, p.base) for p in report.patches] == [
        ("git-mbox", "applied", "1.2")
    ] * 2
    meta = read_toml(releases3.set_dir() / "patches" / "util-triple-and-an-extra-module.toml")
    assert meta["author"] == "Test Person <test@example.com>"
    assert meta["imported"]["date"].endswith("+0000")
