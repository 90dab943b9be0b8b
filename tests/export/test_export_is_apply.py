"""Export is apply: for every shipped patch, on the real locked tree, the change its exported
commit makes (less the upstream test it adds) is byte for byte what ``apply`` writes for it.

(A rewrite that searches the tree for moved code once found its sites only in the file it
names when exported, so the exported ``mxfp4-triton-sm12x`` changed one file of the two that
``apply`` changes.)"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from patchkit.export.prtext import Identity
from patchkit.model import PrState
from patchkit.ops.apply_tree import apply
from patchkit.ops.context import blobs_for
from patchkit.ops.export_pr import export_pr
from patchkit.project.load import Project, load_project
from patchkit.workspace.tree import checkout_tree

ROOT = Path(__file__).resolve().parents[2]
ADA = Identity("Ada Lovelace", "ada@example.com")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def _applied(project: Project, target: str, tree_root: Path) -> dict[str, dict[str, bytes]]:
    """patch id -> path -> the bytes ``apply`` wrote, for every patch of ``target`` (opt-in
    ones included), applied as one series."""
    entry = project.entry(target)
    patches = project.patches(target, include=tuple(p.id for p in project.listed(target)))
    tree = checkout_tree(tree_root, target)
    report = apply(tree=tree, entry=entry, patches=patches, blobs=blobs_for(entry, tree))
    assert all(r.outcome.ok for r in report.results), [r.reasons() for r in report.results]
    on_disk = {p: (tree_root / p).read_bytes() for p in report.written}
    changed = {}
    for result in report.results:
        changed[result.patch_id] = {c.path: on_disk[c.path] for c in result.changes}
    return changed


def _exported(project: Project, target: str, clone: Path, patch_id: str) -> dict[str, bytes] | None:
    """path -> bytes of each file the patch's exported commit changes, its upstream test left
    out; None where the export stops the patch because its upstream test cannot show the fix."""
    report = export_pr(
        project=project,
        target=target,
        tree_root=clone,
        patch_ids=[patch_id],
        identity=ADA,
        run_tests=False,
        onto="pin",  # what apply writes at the lock (the default is upstream's newest code)
    )
    if report.stopped:
        assert "passes without the change too" in report.stopped[0], report.stopped
        return None
    (export,) = report.exports
    test_files = set(_git(clone, "diff", "--name-only", export.parent, export.commit).split())
    meta = project.patch(patch_id)
    if meta.export.test:
        test_diff = (meta.file.parent.parent / meta.export.test.file).read_text()
        test_files = {p for p in test_files if f"b/{p}" in test_diff}
    else:
        test_files = set()
    paths = _git(clone, "diff", "--name-only", export.parent, export.commit).split()
    out = {}
    for path in paths:
        if path not in test_files:
            out[path] = subprocess.run(
                ["git", "show", f"{export.commit}:{path}"], cwd=clone, check=True,
                capture_output=True,
            ).stdout  # fmt: skip
    return out


@pytest.mark.parametrize("target", ["vllm", "flashinfer"])
def test_every_shipped_patch_exports_what_apply_writes(
    target: str, real_tree: Callable[[str], Path], tmp_path: Path
) -> None:
    project = load_project(ROOT)
    tree_root = real_tree(target)
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--shared", "--no-checkout", _git_dir(tree_root), str(clone))
    applied = _applied(project, target, tree_root)
    assert applied
    unproven: list[str] = []
    for patch_id, files in applied.items():
        if project.patch(patch_id).upstream.state is PrState.MERGED:
            continue  # nothing to export: its PR is merged (export-pr refuses it)
        exported = _exported(project, target, clone, patch_id)
        if exported is None:  # its recorded upstream test cannot show the fix: no branch
            unproven.append(patch_id)
            continue
        assert exported == files, patch_id
    assert unproven == []  # every shipped upstream test fails without its change


def _git_dir(tree_root: Path) -> str:
    return _git(tree_root, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
