"""Import FlashInfer from the (patched or unpatched) source tree on ``sys.path``, its JIT
compiling that tree's own sources; shared by ``conftest.py`` (tests) and ``bench_decode.py``.

An installed FlashInfer finds its C++ sources in ``flashinfer/data/{include,csrc,cutlass,spdlog}``,
which its build backend creates. A plain source tree (git checkout or sdist) has no
``flashinfer/data``, so ``point_at_sources`` aims ``flashinfer.jit.env`` at ``include/``, ``csrc/``
and ``3rdparty/`` of the tree itself, as FlashInfer's own AOT build does; prebuilt kernels
(``flashinfer-jit-cache``) are ignored, since they were built from upstream sources.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any


def point_at_sources(jit_env: Any, tree: Path) -> None:
    jit_env.FLASHINFER_INCLUDE_DIR = tree / "include"
    jit_env.FLASHINFER_CSRC_DIR = tree / "csrc"
    jit_env.CUTLASS_INCLUDE_DIRS = [
        tree / "3rdparty" / "cutlass" / "include",
        tree / "3rdparty" / "cutlass" / "tools" / "util" / "include",
    ]
    jit_env.SPDLOG_INCLUDE_DIR = tree / "3rdparty" / "spdlog" / "include"


def import_from_tree(workspace: str) -> ModuleType:
    """``flashinfer`` from ``sys.path``, compiling into ``workspace`` (unless
    ``FLASHINFER_WORKSPACE_BASE`` is set already: it is read when flashinfer is imported)."""
    os.environ.setdefault("FLASHINFER_WORKSPACE_BASE", workspace)
    import flashinfer
    from flashinfer.jit import env as jit_env

    package = Path(flashinfer.__file__).resolve().parent
    if not (package / "data" / "include").is_dir():  # a source tree, not an install
        point_at_sources(jit_env, package.parent)
    jit_env.FLASHINFER_AOT_DIR = Path(workspace) / "no-prebuilt-kernels"
    return flashinfer
