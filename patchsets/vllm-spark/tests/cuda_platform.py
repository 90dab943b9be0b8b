"""vLLM's own CUDA platform for the tree on ``sys.path``, with the device query stubbed at its
boundary: ``torch.cuda.get_device_capability``. Capability gates then run vLLM's real code
(``NonNvmlCudaPlatform.get_device_capability``, ``is_device_capability_family``, ...) on a GPU
of any compute capability, on a CPU too.

A source tree has no compiled extensions (``vllm._C``, ``vllm._C_stable_libtorch``); importing
them only registers custom kernels, which no gate calls, so where they do not import an empty
module stands in for them for the test's duration.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

import pytest

EXTENSIONS = ("vllm._C", "vllm._C_stable_libtorch")


def cuda_platform(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int]) -> Any:
    """A new instance of vLLM's CUDA platform whose GPU reports ``capability``."""
    torch = pytest.importorskip("torch")
    for name in EXTENSIONS:
        try:
            importlib.import_module(name)
        except ImportError:
            monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    from vllm.platforms.cuda import NonNvmlCudaPlatform

    class Gpu(NonNvmlCudaPlatform):  # a class of its own: vLLM caches the capability per class
        pass

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    return Gpu()
