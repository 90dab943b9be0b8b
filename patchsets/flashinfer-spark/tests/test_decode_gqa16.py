"""GPU test for patch ``decode-gqa-group-size-16``: batch decode with GQA group size 16.

32 query heads over 2 KV heads, head_dim 128, bf16, through ``BatchDecodeWithPagedKVCacheWrapper``
on the CUDA-core decode kernels (``use_tensor_cores=False``: the path that dispatches on
``DISPATCH_GQA_GROUP_SIZE``), over several batch sizes, page sizes and KV lengths, with pages
scattered in the cache. Each output is compared with attention computed in float32 by torch:
norm(out - ref) / norm(ref) < 1e-2, and a NaN or inf never passes. Unpatched, ``plan``/``run`` fail
with ``Unsupported group_size: 16``.

Runs FlashInfer from the (patched) source tree on ``sys.path``; ``conftest.py`` says what that
needs. Skips (reported "not run") without torch, FlashInfer's dependencies, or a GPU.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import pytest

NUM_QO_HEADS, NUM_KV_HEADS, HEAD_DIM = 32, 2, 128
GROUP = NUM_QO_HEADS // NUM_KV_HEADS  # 16
TOLERANCE = 1e-2  # relative error, in the norm; bf16 inputs, fp32 accumulation


def _kv_lens(batch: int, kv_len: int, generator: Any) -> list[int]:
    """Mixed lengths in [1, kv_len], the longest always present."""
    import torch

    lens = torch.randint(1, kv_len + 1, (batch,), generator=generator).tolist()
    lens[0] = kv_len
    return lens


def _page_table(lens: list[int], page_size: int, generator: Any) -> tuple[Any, Any, Any]:
    """indptr, scattered page indices and last-page lengths for requests of ``lens`` tokens."""
    import torch

    pages = [math.ceil(n / page_size) for n in lens]
    indptr = torch.tensor([0, *torch.tensor(pages).cumsum(0).tolist()], dtype=torch.int32)
    indices = torch.randperm(sum(pages), generator=generator).to(torch.int32)
    last = torch.tensor(
        [n - (p - 1) * page_size for n, p in zip(lens, pages, strict=True)], dtype=torch.int32
    )
    return indptr, indices, last


def _reference(
    q: Any, k_cache: Any, v_cache: Any, indptr: Any, indices: Any, lens: list[int]
) -> Any:
    """Attention in float32: each query head attends over its request's tokens, KV head h // 16."""
    import torch

    outputs = []
    for b, n in enumerate(lens):
        pages = indices[indptr[b] : indptr[b + 1]].long()
        k = k_cache[pages].reshape(-1, NUM_KV_HEADS, HEAD_DIM)[:n].float()
        v = v_cache[pages].reshape(-1, NUM_KV_HEADS, HEAD_DIM)[:n].float()
        k, v = k.repeat_interleave(GROUP, dim=1), v.repeat_interleave(GROUP, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b].float(), k) / math.sqrt(HEAD_DIM)
        outputs.append(torch.einsum("hn,nhd->hd", scores.softmax(dim=-1), v))
    return torch.stack(outputs)


@pytest.mark.gpu
@pytest.mark.parametrize("kv_len", [1, 45, 1031])
@pytest.mark.parametrize("page_size", [1, 16])
@pytest.mark.parametrize("batch", [1, 7, 64])
def test_batch_decode_group_size_16(
    flashinfer: ModuleType, batch: int, page_size: int, kv_len: int
) -> None:
    import torch

    generator = torch.Generator().manual_seed(batch * 10_007 + page_size * 101 + kv_len)
    lens = _kv_lens(batch, kv_len, generator)
    indptr, indices, last = _page_table(lens, page_size, generator)
    shape = (int(indptr[-1]), page_size, NUM_KV_HEADS, HEAD_DIM)  # NHD
    k_cache = torch.randn(shape, generator=generator).to("cuda", torch.bfloat16)
    v_cache = torch.randn(shape, generator=generator).to("cuda", torch.bfloat16)
    q = torch.randn(batch, NUM_QO_HEADS, HEAD_DIM, generator=generator).to("cuda", torch.bfloat16)

    workspace = torch.zeros(128 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
        workspace, "NHD", use_tensor_cores=False
    )
    wrapper.plan(
        indptr.cuda(),
        indices.cuda(),
        last.cuda(),
        NUM_QO_HEADS,
        NUM_KV_HEADS,
        HEAD_DIM,
        page_size,
        pos_encoding_mode="NONE",
        q_data_type=torch.bfloat16,
        kv_data_type=torch.bfloat16,
    )
    out = wrapper.run(q, (k_cache, v_cache))
    torch.cuda.synchronize()

    ref = _reference(q.cpu(), k_cache.cpu(), v_cache.cpu(), indptr, indices, lens)
    out = out.float().cpu()
    assert out.shape == ref.shape
    assert torch.isfinite(out).all(), "non-finite values in the decode output"
    error = ((out - ref).norm() / ref.norm()).item()
    assert error < TOLERANCE, f"relative error {error:.2e} >= {TOLERANCE:.0e}"
