"""Patch ``mamba-ssu-blackwell-sm12x``: SM12x gets the Blackwell SSU block sizes.

The value ``MambaMixer2.__init__`` assigns to ``self.is_blackwell`` is taken from the tree's
``mamba_mixer2.py`` and evaluated against a platform with vLLM's family semantics
(``capability.to_int() // 10 == family // 10``) on several GPUs; then, where vLLM and torch
import, the tree's ``selective_state_update`` tuning is checked to depend on that flag.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import pytest

MIXER = "model_executor/layers/mamba/mamba_mixer2.py"


class _Platform:
    def __init__(self, major: int, minor: int) -> None:
        self.capability = major * 10 + minor

    def is_device_capability_family(self, capability: int, device_id: int = 0) -> bool:
        return self.capability // 10 == capability // 10


def _vllm_file(relative: str) -> Path:
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vllm source tree not on sys.path")
    return Path(next(iter(spec.submodule_search_locations))) / relative


def _is_blackwell_expression() -> ast.Expression:
    tree = ast.parse(_vllm_file(MIXER).read_text())
    mixer = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MambaMixer2")
    init = next(n for n in mixer.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    values = [
        node.value
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        and any(ast.unparse(t) == "self.is_blackwell" for t in node.targets)
    ]
    assert len(values) == 1, "MambaMixer2.__init__ must assign self.is_blackwell once"
    return ast.Expression(values[0])


@pytest.mark.parametrize(
    ("capability", "expected"),
    [
        ((12, 1), True),
        ((12, 0), True),
        ((10, 0), True),
        ((10, 3), True),
        ((9, 0), False),
        ((8, 9), False),
    ],
)
def test_is_blackwell_covers_sm12x(capability: tuple[int, int], expected: bool) -> None:
    expression = compile(_is_blackwell_expression(), MIXER, "eval")
    namespace: dict[str, Any] = {"current_platform": _Platform(*capability)}
    assert bool(eval(expression, namespace)) is expected


def test_selective_state_update_uses_the_flag() -> None:
    """The flag is what picks BLOCK_SIZE_M/num_warps for dstate > 64 (documented assumption)."""
    ops = _vllm_file("model_executor/layers/mamba/ops/mamba_ssm.py").read_text()
    assert "if is_blackwell:" in ops
    mixer = _vllm_file(MIXER).read_text()
    assert "is_blackwell=self.is_blackwell" in mixer
