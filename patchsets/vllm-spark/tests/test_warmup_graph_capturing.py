"""Patch ``warmup-graph-capturing`` (vLLM PR #39483), exercised on the tree's own code.

``GPUModelRunner._warmup_and_capture`` is taken from the tree's ``gpu_model_runner.py`` (found
through the ``vllm`` package on ``sys.path``, without importing vLLM, whose model runner needs
CUDA-era dependencies) and run against a recording ``self``: the warmup ``_dummy_run`` calls must
pass ``is_graph_capturing`` equal to ``force_attention`` (True for FULL graphs, so the
spec-decode Triton kernels compile before capture; False for PIECEWISE).
"""

from __future__ import annotations

import ast
import contextlib
import enum
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

RUNNER = "v1/worker/gpu_model_runner.py"


class CUDAGraphMode(enum.Enum):  # the two members the function compares against
    NONE = 0
    PIECEWISE = 1
    FULL = 2


def _vllm_file(relative: str) -> Path:
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vllm source tree not on sys.path")
    return Path(next(iter(spec.submodule_search_locations))) / relative


# What the method may use from torch around the calls it makes (later releases synchronise and
# profile around capture); nothing here touches a device.
FAKE_TORCH = SimpleNamespace(
    accelerator=SimpleNamespace(synchronize=lambda *a, **k: None),
    cuda=SimpleNamespace(synchronize=lambda *a, **k: None),
    profiler=SimpleNamespace(record_function=lambda *a, **k: contextlib.nullcontext()),
)


def _stdlib_imports(tree: ast.Module) -> list[ast.stmt]:
    """The module's own imports from the standard library (contextlib's nullcontext, ...)."""
    return [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and all(
            (alias.name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
            in sys.stdlib_module_names
            for alias in node.names
        )
        and not (isinstance(node, ast.ImportFrom) and node.level)
    ]


def _method(relative: str, cls: str, name: str) -> Any:
    """Compile one method from the tree's source, annotations dropped, into a function, with
    the module's standard-library imports and a stand-in torch."""
    tree = ast.parse(_vllm_file(relative).read_text())
    owner = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    func = next(n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name)
    func.returns = None
    for arg in func.args.args + func.args.kwonlyargs:
        arg.annotation = None
    func.decorator_list = []
    namespace: dict[str, Any] = {"CUDAGraphMode": CUDAGraphMode, "torch": FAKE_TORCH}
    body = [*_stdlib_imports(tree), func]
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    exec(compile(module, str(_vllm_file(relative)), "exec"), namespace)
    return namespace[name]


class _Runner:
    def __init__(self) -> None:
        self.compilation_config = SimpleNamespace(cudagraph_num_of_warmups=2)
        self.calls: list[dict[str, Any]] = []

    def _dummy_run(self, num_tokens: int, **kwargs: Any) -> None:
        self.calls.append(kwargs)


@pytest.mark.parametrize("mode", [CUDAGraphMode.FULL, CUDAGraphMode.PIECEWISE])
def test_warmup_runs_compile_graph_capture_kernels(mode: CUDAGraphMode) -> None:
    warmup_and_capture = _method(RUNNER, "GPUModelRunner", "_warmup_and_capture")
    runner = _Runner()
    desc = SimpleNamespace(num_tokens=8, uniform=True, num_active_loras=0)

    warmup_and_capture(runner, desc, mode)

    *warmups, capture = runner.calls
    assert len(warmups) == 2
    for call in warmups:
        assert call["cudagraph_runtime_mode"] is CUDAGraphMode.NONE
        assert call.get("is_graph_capturing") is (mode is CUDAGraphMode.FULL)
    assert capture["is_graph_capturing"] is True
