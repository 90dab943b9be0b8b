"""Benchmark for patch ``mamba-ssu-blackwell-sm12x``: one decode step of vLLM's Triton
``selective_state_update`` with the tuning the tree's ``MambaMixer2`` gate chooses for the case's
``capability``.

The gate (``self.is_blackwell`` in ``MambaMixer2.__init__``) is read from the tree's own source
and evaluated for that capability with vLLM's family semantics, as the set's test does; the
kernel then runs on the GPU at hand with that flag (``True``: BLOCK_SIZE_M 32, 8 warps for
dstate > 64). So ``capability = "12.1"`` times, on this GPU, the two settings the unpatched and
the patched gate give SM121; ``capability`` of the GPU at hand times the path this GPU takes.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

MIXER = "model_executor/layers/mamba/mamba_mixer2.py"


class _Platform:
    def __init__(self, capability: str) -> None:
        major, minor = (int(p) for p in capability.split("."))
        self.capability = major * 10 + minor

    def is_device_capability_family(self, capability: int, device_id: int = 0) -> bool:
        return self.capability // 10 == capability // 10


def gate(capability: str) -> bool:
    """The tree's ``is_blackwell`` for a GPU of ``capability`` ("12.1")."""
    spec = importlib.util.find_spec("vllm")
    assert spec is not None and spec.submodule_search_locations, "vllm is not on sys.path"
    path = Path(next(iter(spec.submodule_search_locations))) / MIXER
    tree = ast.parse(path.read_text())
    mixer = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MambaMixer2")
    init = next(n for n in mixer.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    (value,) = (
        node.value
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        and any(ast.unparse(t) == "self.is_blackwell" for t in node.targets)
    )
    namespace = {"current_platform": _Platform(capability)}
    return bool(eval(compile(ast.Expression(value), str(path), "eval"), namespace))


def ssu(case: dict[str, Any]) -> dict[str, Any]:
    import torch
    from vllm.model_executor.layers.mamba.ops.mamba_ssm import selective_state_update

    flag = gate(case["capability"])
    batch, nheads, dim = case["batch"], case["nheads"], case["head_dim"]
    dstate, ngroups = case["dstate"], case["ngroups"]
    torch.manual_seed(batch * 31 + dstate)
    dev, bf16 = "cuda", torch.bfloat16
    state = torch.randn(batch, nheads, dim, dstate, device=dev, dtype=bf16)
    x = torch.randn(batch, nheads, dim, device=dev, dtype=bf16)
    dt = torch.randn(batch, nheads, dim, device=dev, dtype=bf16)
    dt_bias = torch.rand(nheads, dim, device=dev) - 4.0
    A = -torch.rand(nheads, dim, dstate, device=dev) - 1.0
    B = torch.randn(batch, ngroups, dstate, device=dev, dtype=bf16)
    C = torch.randn(batch, ngroups, dstate, device=dev, dtype=bf16)
    D = torch.randn(nheads, dim, device=dev)
    z = torch.randn(batch, nheads, dim, device=dev, dtype=bf16)
    out = torch.empty_like(x)

    def step() -> None:
        selective_state_update(
            state,
            x,
            dt,
            A,
            B,
            C,
            D=D,
            z=z,
            dt_bias=dt_bias,
            dt_softplus=True,
            out=out,
            is_blackwell=flag,
        )

    return {
        "fn": step,
        "work": batch,
        "label": f"gate for sm_{case['capability'].replace('.', '')}: is_blackwell={flag}",
    }
