"""Patch ``mxfp4-triton-sm12x`` (opt-in; vLLM #41477): the MXFP4 Triton MoE path admits SM12x.

Behavioural where vLLM imports (CPU is enough): the two expert classes'
``_supports_current_device`` run against a fake CUDA platform. The backend oracle's check is a
local expression inside ``select_mxfp4_moe_backend``; it is taken from the tree's source and
evaluated against the same fake. This proves selection only: on SM121 the Triton kernel still
fails in ptxas on ``.tile::scatter4`` (see the patch notes).
"""

from __future__ import annotations

import ast
import importlib.util
from collections import namedtuple
from pathlib import Path
from typing import Any

import pytest

ORACLE = "model_executor/layers/fused_moe/oracle/mxfp4.py"
Capability = namedtuple("Capability", "major minor")
CASES = [
    ((12, 1), True),
    ((12, 0), True),
    ((10, 0), True),
    ((9, 0), True),
    ((8, 9), False),
    ((13, 0), False),
]


class _Platform:
    def __init__(self, major: int, minor: int) -> None:
        self.capability = Capability(major, minor)

    def is_cuda_alike(self) -> bool:
        return True

    def get_device_capability(self, device_id: int = 0) -> Capability:
        return self.capability


def _vllm_file(relative: str) -> Path:
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vllm source tree not on sys.path")
    return Path(next(iter(spec.submodule_search_locations))) / relative


@pytest.mark.parametrize(("capability", "expected"), CASES)
def test_oracle_admits_sm12x(capability: tuple[int, int], expected: bool) -> None:
    tree = ast.parse(_vllm_file(ORACLE).read_text())
    select = next(
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == "select_mxfp4_moe_backend"
    )
    assign = next(
        n
        for n in ast.walk(select)
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "triton_kernels_supported"
    )
    namespace: dict[str, Any] = {
        "has_triton_kernels": lambda: True,
        "current_platform": _Platform(*capability),
    }
    assert eval(compile(ast.Expression(assign.value), ORACLE, "eval"), namespace) is expected


@pytest.mark.parametrize("cls_name", ["BaseOAITritonExperts", "OAITritonMxfp4ExpertsMonolithic"])
@pytest.mark.parametrize(("capability", "expected"), CASES)
def test_experts_admit_sm12x(
    cls_name: str, capability: tuple[int, int], expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    module = pytest.importorskip("vllm.model_executor.layers.fused_moe.gpt_oss_triton_kernels_moe")
    monkeypatch.setattr(module, "current_platform", _Platform(*capability))
    assert getattr(module, cls_name)._supports_current_device() is expected
