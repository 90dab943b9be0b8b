"""Benchmark for patch ``decode-gqa-group-size-16``: one batch-decode step through
``BatchDecodeWithPagedKVCacheWrapper``, bf16, head_dim 128, paged KV cache (NHD) with pages
scattered, every request at ``kv_len`` tokens. ``patchkit verify --bench`` calls ``decode(case)``
in a process whose ``sys.path`` starts with the tree under test, then times what it returns.

The case names the heads (``num_qo_heads`` / ``num_kv_heads``) and the path:
``tensor_cores = false`` is the CUDA-core decode kernel, which dispatches on the GQA group size
(the patch adds 16); ``true`` is the tensor-core (prefill-kernel) decode, which takes any group
size. Unpatched FlashInfer 0.6.6 fails on group 16 in ``plan`` with ``Unsupported group_size: 16``;
the metadata's fallbacks then time what upstream does offer: the tensor-core path, or the KV heads
repeated to make group 8 (the same outputs, twice the KV bytes).
"""

from __future__ import annotations

import math
import tempfile
from typing import Any

HEAD_DIM = 128


def decode(case: dict[str, Any]) -> dict[str, Any]:
    import torch
    from flashinfer_tree import import_from_tree

    flashinfer = import_from_tree(tempfile.mkdtemp(prefix="flashinfer-jit-"))
    batch, kv_len, page_size = case["batch"], case["kv_len"], case.get("page_size", 16)
    qo_heads, kv_heads = case["num_qo_heads"], case["num_kv_heads"]
    tensor_cores = bool(case.get("tensor_cores", False))
    generator = torch.Generator(device="cuda").manual_seed(batch * 1009 + kv_len)

    pages_each = math.ceil(kv_len / page_size)
    total = batch * pages_each
    indptr = torch.arange(0, total + 1, pages_each, dtype=torch.int32, device="cuda")
    indices = torch.randperm(total, generator=generator, device="cuda").to(torch.int32)
    last = torch.full((batch,), kv_len - (pages_each - 1) * page_size, dtype=torch.int32)
    shape = (total, page_size, kv_heads, HEAD_DIM)
    k_cache = torch.randn(shape, generator=generator, device="cuda", dtype=torch.bfloat16)
    v_cache = torch.randn(shape, generator=generator, device="cuda", dtype=torch.bfloat16)
    q = torch.randn(
        batch, qo_heads, HEAD_DIM, generator=generator, device="cuda", dtype=torch.bfloat16
    )
    out = torch.empty_like(q)

    workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
        workspace, "NHD", use_tensor_cores=tensor_cores
    )
    wrapper.plan(
        indptr,
        indices,
        last.cuda(),
        qo_heads,
        kv_heads,
        HEAD_DIM,
        page_size,
        pos_encoding_mode="NONE",
        q_data_type=torch.bfloat16,
        kv_data_type=torch.bfloat16,
    )

    def step() -> None:
        wrapper.run(q, (k_cache, v_cache), out=out)

    path = "tensor-core decode" if tensor_cores else "CUDA-core decode"
    group = qo_heads // kv_heads
    return {
        "fn": step,
        "work": batch,  # one token per request per decode step
        "label": f"{path}, group {group} ({qo_heads} qo / {kv_heads} kv heads)",
    }
