"""Patch ``mxfp4-triton-sm12x`` (opt-in; vLLM #41477): the MXFP4 Triton MoE path admits SM12x.

vLLM's real selection code runs with its real CUDA platform, whose device query
(``torch.cuda.get_device_capability``) is stubbed to report each GPU (``cuda_platform``): the
backend oracle ``select_mxfp4_moe_backend`` (its LoRA branch, which decides between Triton and
Marlin on that capability alone; ``has_triton_kernels`` reports the package present) and the two
expert classes' ``_supports_current_device``. CPU is enough. This proves selection only: on
SM121 the Triton kernel still fails in ptxas on ``.tile::scatter4`` (see the patch notes).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from cuda_platform import cuda_platform

pytest.importorskip("torch")
oracle = pytest.importorskip("vllm.model_executor.layers.fused_moe.oracle.mxfp4")
experts = pytest.importorskip("vllm.model_executor.layers.fused_moe.gpt_oss_triton_kernels_moe")

CASES = [
    ((12, 1), True),
    ((12, 0), True),
    ((10, 0), True),
    ((9, 0), True),
    ((8, 9), False),
    ((13, 0), False),
]


@pytest.mark.parametrize(("capability", "expected"), CASES)
def test_oracle_picks_triton_on_sm12x(
    capability: tuple[int, int], expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oracle, "current_platform", cuda_platform(monkeypatch, capability))
    monkeypatch.setattr(oracle, "has_triton_kernels", lambda: True)
    monkeypatch.setenv("VLLM_MXFP4_USE_MARLIN", "0")  # no preference: the capability decides
    backend, _ = oracle.select_mxfp4_moe_backend(SimpleNamespace(is_lora_enabled=True))
    triton = backend is oracle.Mxfp4MoeBackend.TRITON_UNFUSED
    assert triton is expected, backend


@pytest.mark.parametrize("cls_name", ["BaseOAITritonExperts", "OAITritonMxfp4ExpertsMonolithic"])
@pytest.mark.parametrize(("capability", "expected"), CASES)
def test_experts_admit_sm12x(
    cls_name: str, capability: tuple[int, int], expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(experts, "current_platform", cuda_platform(monkeypatch, capability))
    assert getattr(experts, cls_name)._supports_current_device() is expected
