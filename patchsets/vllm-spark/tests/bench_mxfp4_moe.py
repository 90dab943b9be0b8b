"""Benchmark for patch ``mxfp4-triton-sm12x`` (opt-in): the MXFP4 MoE path the tree's backend
oracle selects for the case's ``capability``, one forward of a gpt-oss-20b MoE layer (hidden 2880,
intermediate 2880, 32 experts, top 4; bf16 activations, MXFP4 weights).

The oracle's ``triton_kernels_supported`` expression is read from the tree's own source and
evaluated for that capability (as the set's test does). Where it admits Triton, the layer runs
through ``triton_kernel_moe_forward`` with the weights in ``triton_kernels``' MXFP4 layout for the
GPU at hand. Where it does not, the oracle falls back to Marlin, vLLM's compiled CUDA extension
(``vllm._C``), which a source tree does not have: the case then fails with that reason.

Needs ``triton_kernels`` importable (vLLM's wheel ships it as ``vllm/third_party/triton_kernels``;
its source build fetches it from Triton's repository).
"""

from __future__ import annotations

import ast
import importlib.util
from collections import namedtuple
from pathlib import Path
from typing import Any

ORACLE = "model_executor/layers/fused_moe/oracle/mxfp4.py"
Capability = namedtuple("Capability", "major minor")


class _Platform:
    def __init__(self, capability: str) -> None:
        self.capability = Capability(*(int(p) for p in capability.split(".")))

    def is_cuda_alike(self) -> bool:
        return True

    def get_device_capability(self, device_id: int = 0) -> Capability:
        return self.capability


def triton_selected(capability: str) -> bool:
    spec = importlib.util.find_spec("vllm")
    assert spec is not None and spec.submodule_search_locations, "vllm is not on sys.path"
    path = Path(next(iter(spec.submodule_search_locations))) / ORACLE
    tree = ast.parse(path.read_text())
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
    namespace = {"has_triton_kernels": lambda: True, "current_platform": _Platform(capability)}
    return bool(eval(compile(ast.Expression(assign.value), str(path), "eval"), namespace))


def _mxfp4(w: Any, num_warps: int) -> tuple[Any, Any]:
    """(E, K, N) bf16 -> triton_kernels MXFP4 weight and scale in this GPU's layout."""
    import torch
    from triton_kernels.numerics_details.mxfp import downcast_to_mxfp
    from triton_kernels.tensor import FP4, convert_layout, wrap_torch_tensor
    from triton_kernels.tensor_details import layout

    w_layout, w_opts = layout.make_default_matmul_mxfp4_w_layout(mx_axis=1)
    s_layout, s_opts = layout.make_default_matmul_mxfp4_w_scale_layout(
        mx_axis=1, num_warps=num_warps
    )
    values, scale = downcast_to_mxfp(w, torch.uint8, axis=1)
    return (
        convert_layout(wrap_torch_tensor(values, FP4), w_layout, **w_opts),
        convert_layout(wrap_torch_tensor(scale), s_layout, **s_opts),
    )


def moe(case: dict[str, Any]) -> dict[str, Any]:
    capability = case["capability"]
    if not triton_selected(capability):
        raise RuntimeError(
            f"the oracle does not admit Triton for sm_{capability.replace('.', '')}: it falls "
            "back to Marlin (vllm._C, a compiled extension a source tree does not have)"
        )
    import torch
    from triton_kernels.matmul_ogs import FlexCtx, PrecisionConfig
    from triton_kernels.numerics import InFlexData
    from vllm.model_executor.layers.fused_moe.config import mxfp4_w4a16_moe_quant_config
    from vllm.model_executor.layers.fused_moe.gpt_oss_triton_kernels_moe import (
        triton_kernel_moe_forward,
    )

    tokens, experts, topk = case["tokens"], case["experts"], case["topk"]
    hidden, inter = case["hidden"], case["intermediate"]
    torch.manual_seed(tokens)
    dev, bf16 = "cuda", torch.bfloat16
    w1 = torch.randn(experts, hidden, 2 * inter, device=dev, dtype=bf16) / hidden**0.5
    w2 = torch.randn(experts, inter, hidden, device=dev, dtype=bf16) / inter**0.5
    w1_q, w1_s = _mxfp4(w1, num_warps=8)
    w2_q, w2_s = _mxfp4(w2, num_warps=8)
    del w1, w2
    config = mxfp4_w4a16_moe_quant_config(
        w1_scale=PrecisionConfig(weight_scale=w1_s, flex_ctx=FlexCtx(rhs_data=InFlexData())),
        w2_scale=PrecisionConfig(weight_scale=w2_s, flex_ctx=FlexCtx(rhs_data=InFlexData())),
        w1_bias=torch.zeros(experts, 2 * inter, device=dev, dtype=torch.float32),
        w2_bias=torch.zeros(experts, hidden, device=dev, dtype=torch.float32),
    )
    x = torch.randn(tokens, hidden, device=dev, dtype=bf16)
    logits = torch.randn(tokens, experts, device=dev, dtype=bf16)

    def forward() -> None:
        triton_kernel_moe_forward(
            hidden_states=x,
            w1=w1_q,
            w2=w2_q,
            gating_output=logits,
            topk=topk,
            renormalize=True,
            quant_config=config,
        )

    return {
        "fn": forward,
        "work": tokens,
        "label": f"Triton MXFP4 MoE (oracle for sm_{capability.replace('.', '')})",
    }
