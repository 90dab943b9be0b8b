"""Patch ``mamba-ssu-blackwell-sm12x``: SM12x gets the Blackwell SSU block sizes.

The tree's real ``MambaMixer2`` is built (on the CPU: vLLM's single-process model-parallel
groups on gloo) with vLLM's real CUDA platform, whose device query
(``torch.cuda.get_device_capability``) is stubbed to report each GPU (``cuda_platform``); the
``is_blackwell`` flag it sets is what ``selective_state_update`` receives and what picks
BLOCK_SIZE_M/num_warps for dstate > 64. Unpatched, SM12x (family 120) gets False.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cuda_platform import cuda_platform

torch = pytest.importorskip("torch")
mamba_mixer2 = pytest.importorskip("vllm.model_executor.layers.mamba.mamba_mixer2")

from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config  # noqa: E402
from vllm.distributed import parallel_state  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def config() -> Iterator[VllmConfig]:
    """A CPU vLLM config with model-parallel groups of one process (gloo)."""
    vllm_config = VllmConfig(device_config=DeviceConfig(device="cpu"))
    with set_current_vllm_config(vllm_config):
        parallel_state.init_distributed_environment(
            world_size=1,
            rank=0,
            local_rank=0,
            distributed_init_method=f"tcp://127.0.0.1:{_free_port()}",
            backend="gloo",
        )
        parallel_state.initialize_model_parallel(1, 1)
        try:
            yield vllm_config
        finally:
            parallel_state.destroy_model_parallel()
            parallel_state.destroy_distributed_environment()


def _mixer(config: VllmConfig, prefix: str) -> Any:
    with set_current_vllm_config(config):
        return mamba_mixer2.MambaMixer2(
            hidden_size=64,
            ssm_state_size=128,
            conv_kernel_size=4,
            intermediate_size=128,
            use_conv_bias=True,
            use_bias=False,
            n_groups=1,
            num_heads=2,
            head_dim=64,
            prefix=prefix,  # a layer name of its own: each is registered with the config
        )


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
def test_mixer_takes_blackwell_tuning_on_sm12x(
    capability: tuple[int, int],
    expected: bool,
    config: VllmConfig,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mamba_mixer2, "current_platform", cuda_platform(monkeypatch, capability))
    mixer = _mixer(config, prefix=f"mixer_sm{capability[0]}{capability[1]}")
    assert mixer.is_blackwell is expected


def test_selective_state_update_uses_the_flag() -> None:
    """The flag is what picks BLOCK_SIZE_M/num_warps for dstate > 64, and the mixer passes it."""
    ops = Path(mamba_mixer2.__file__).parent / "ops" / "mamba_ssm.py"
    assert "if is_blackwell:" in ops.read_text()
    assert "is_blackwell=self.is_blackwell" in Path(mamba_mixer2.__file__).read_text()
