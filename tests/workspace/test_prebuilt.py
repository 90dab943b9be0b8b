"""A patched FlashInfer source is moot when prebuilt kernels are installed beside it: apply on the
installed package warns, naming the package and what to do."""

from __future__ import annotations

from pathlib import Path

from patchkit.workspace.installed import InstalledTree, prebuilt_kernels
from patchkit.workspace.tree import Tree


def tree(root: Path, target: str = "flashinfer", installed: bool = True) -> Tree:
    kind = InstalledTree if installed else Tree
    return kind(root=root, state_dir=root / ".patchkit", target=target)


def test_flashinfer_jit_cache_beside_the_package_is_named(tmp_path: Path) -> None:
    (tmp_path / "flashinfer").mkdir()
    assert prebuilt_kernels(tree(tmp_path)) is None
    (tmp_path / "flashinfer_jit_cache-0.6.6+cu130.dist-info").mkdir()
    warning = prebuilt_kernels(tree(tmp_path))
    assert warning is not None
    assert "flashinfer-jit-cache" in warning and "pip uninstall flashinfer-jit-cache" in warning


def test_aot_kernels_in_the_package_are_named(tmp_path: Path) -> None:
    (tmp_path / "flashinfer" / "data" / "aot").mkdir(parents=True)
    warning = prebuilt_kernels(tree(tmp_path))
    assert warning is not None and "data/aot" in warning


def test_only_for_an_installed_flashinfer(tmp_path: Path) -> None:
    (tmp_path / "flashinfer_jit_cache").mkdir()
    assert prebuilt_kernels(tree(tmp_path, installed=False)) is None
    assert prebuilt_kernels(tree(tmp_path, target="vllm")) is None
