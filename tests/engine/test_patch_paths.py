"""The paths a patch may change, asked before it runs: a broken patch file has none (the run
reports it as that patch's failure), a path out of the tree stops the operation as the run does."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.engine.series import patch_paths
from patchkit.errors import UnsafePathError
from patchkit.model import PatchKind, PatchMeta


def _meta(tmp_path: Path, diff: bytes) -> PatchMeta:
    file = tmp_path / "p.patch"
    file.write_bytes(diff)
    return PatchMeta("p", "p", "", "demo", PatchKind.DIFF, file, tmp_path / "p.toml", "set")


def _diff(path: str) -> bytes:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n".encode()


def test_a_diff_names_its_files(tmp_path: Path) -> None:
    assert patch_paths(_meta(tmp_path, _diff("pkg/a.py"))) == ["pkg/a.py"]


def test_a_malformed_diff_has_none(tmp_path: Path) -> None:
    assert patch_paths(_meta(tmp_path, b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n")) == []


def test_a_path_out_of_the_tree_stops(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        patch_paths(_meta(tmp_path, _diff("../outside.py")))
