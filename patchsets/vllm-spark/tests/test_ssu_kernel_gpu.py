"""GPU: the tree's Triton ``selective_state_update`` kernel, with the tuning SM12x now gets
(``is_blackwell=True``: BLOCK_SIZE_M 32, 8 warps for dstate > 64) and without it, matches a
float32 reference on random inputs.

The patch ``mamba-ssu-blackwell-sm12x`` routes SM12x to the Blackwell block sizes; SM121 itself
was not available, so this proves the kernel computes the same function with those block sizes
on the GPU at hand (Hopper), not the speed on SM121.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

if not torch.cuda.is_available():
    pytest.skip("no GPU", allow_module_level=True)

from vllm.model_executor.layers.mamba.ops.mamba_ssm import (  # noqa: E402
    selective_state_update,
)


def reference(state, x, dt, A, B, C, D, z, dt_bias):  # type: ignore[no-untyped-def]
    """Mamba-2 state update in float64 on copies: (batch, nheads, dim, dstate) states."""
    state, x, dt, A, B, C, D, z, dt_bias = (
        t.double() for t in (state, x, dt, A, B, C, D, z, dt_bias)
    )
    nheads, ngroups = x.shape[1], B.shape[1]
    B = B.repeat_interleave(nheads // ngroups, dim=1)  # (batch, nheads, dstate)
    C = C.repeat_interleave(nheads // ngroups, dim=1)
    dt = torch.nn.functional.softplus(dt + dt_bias)  # (batch, nheads, dim)
    dA = torch.exp(dt.unsqueeze(-1) * A)  # (batch, nheads, dim, dstate)
    dBx = (dt * x).unsqueeze(-1) * B.unsqueeze(2)
    new_state = state * dA + dBx
    out = (new_state * C.unsqueeze(2)).sum(-1) + x * D
    out = out * z * torch.sigmoid(z)
    return new_state, out


@pytest.mark.parametrize("is_blackwell", [True, False])
@pytest.mark.parametrize("batch", [1, 7, 64])
@pytest.mark.parametrize("dstate", [128, 256])
def test_selective_state_update_matches_reference(is_blackwell, batch, dstate):  # type: ignore[no-untyped-def]
    torch.manual_seed(1000 * batch + dstate + is_blackwell)
    device, nheads, dim, ngroups = "cuda", 16, 64, 2
    state = torch.randn(batch, nheads, dim, dstate, device=device, dtype=torch.float32)
    x = torch.randn(batch, nheads, dim, device=device, dtype=torch.bfloat16)
    dt = torch.randn(batch, nheads, dim, device=device, dtype=torch.bfloat16)
    dt_bias = torch.rand(nheads, dim, device=device) - 4.0
    A = -torch.rand(nheads, dim, dstate, device=device) - 1.0
    B = torch.randn(batch, ngroups, dstate, device=device, dtype=torch.bfloat16)
    C = torch.randn(batch, ngroups, dstate, device=device, dtype=torch.bfloat16)
    D = torch.randn(nheads, dim, device=device)
    z = torch.randn(batch, nheads, dim, device=device, dtype=torch.bfloat16)
    ref_state, ref_out = reference(state, x, dt, A, B, C, D, z, dt_bias)

    out = torch.full_like(x, float("nan"))  # every element must be written
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
        is_blackwell=is_blackwell,
    )
    torch.cuda.synchronize()

    assert not torch.isnan(out).any()
    out_err = (out.double() - ref_out).norm() / ref_out.norm()
    state_err = (state.double() - ref_state).norm() / ref_state.norm()
    print(
        f"batch={batch} dstate={dstate} is_blackwell={is_blackwell}: "
        f"|out-ref|/|ref|={out_err:.2e} |state-ref|/|ref|={state_err:.2e}"
    )
    assert out_err < 1e-2
    assert state_err < 1e-3
