"""Run FlashInfer's JIT kernels straight from a (patched) source tree.

An installed FlashInfer finds its C++ sources in ``flashinfer/data/{include,csrc,cutlass,spdlog}``,
which its build backend creates (copies in a wheel, symlinks in an editable install). A plain
source tree (git checkout or sdist) on ``PYTHONPATH`` has no ``flashinfer/data``, so the fixture
below points ``flashinfer.jit.env`` at ``include/``, ``csrc/`` and ``3rdparty/`` of the tree
itself, as FlashInfer's own AOT build does. It also:

- compiles into a fresh workspace (``FLASHINFER_WORKSPACE_BASE``: a temporary directory unless
  set; a set one keeps the JIT cache between runs, and ninja rebuilds what a changed header
  touches), and writes nothing under ``~/.cache/flashinfer``;
- ignores prebuilt kernels (``flashinfer-jit-cache``'s AOT directory), which were built from
  upstream sources and would hide the patch.

Needs: torch with CUDA, nvcc (``CUDA_HOME`` or on ``PATH``), ninja, and FlashInfer's import-time
dependencies (``apache-tvm-ffi`` above all). Nothing is written into the tree.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def flashinfer() -> Iterator[ModuleType]:
    """``flashinfer`` from the tree on ``sys.path``, its JIT compiling that tree's sources."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    with tempfile.TemporaryDirectory(prefix="flashinfer-jit-") as tmp:
        if not os.environ.get("FLASHINFER_WORKSPACE_BASE"):  # read when flashinfer is imported
            os.environ["FLASHINFER_WORKSPACE_BASE"] = tmp
        pytest.importorskip("flashinfer")
        from flashinfer_tree import import_from_tree

        yield import_from_tree(tmp)
