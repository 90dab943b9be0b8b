"""Reproducer for vLLM #39809 bugs 1 and 2 (patch ``mamba-prefix-spec-buffers``).

Builds the mamba metadata builder with prefix caching in "all" mode, one speculative token
and FULL CUDA graphs from a ``SimpleNamespace`` config (as vLLM's own
``tests/v1/attention/test_mamba_update_block_table.py`` does), then drives
``_update_metadata_for_cudagraph_capture`` with a decode batch shaped like the real one: the
mamba block table has ``cdiv(max_model_len, block_size) + num_speculative_blocks`` columns
(``GPUModelRunner.may_reinitialize_input_batch`` sizes it so), and each decode request has
``1 + num_spec_tokens`` tokens. Unpatched, the first copy fails with
``The size of tensor a (16) must match the size of tensor b (17)``; with that fixed alone, the
block-index buffers come back with ``num_decode_tokens`` rows instead of ``padded_bs``.

Runs on CPU; needs torch and vLLM's import-time dependencies (run with ``--noconftest``).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("vllm.v1.attention.backends.mamba_attn")

from vllm.config.compilation import CUDAGraphMode  # noqa: E402
from vllm.v1.attention.backends.mamba_attn import (  # noqa: E402
    BaseMambaAttentionMetadata,
    BaseMambaAttentionMetadataBuilder,
)
from vllm.v1.kv_cache_interface import MambaSpec  # noqa: E402

BLOCK_SIZE = 16
MAX_MODEL_LEN = 256  # 16 blocks
NUM_SPEC_TOKENS = 1
MAX_NUM_SEQS = 8
NUM_DECODES = 2  # real requests in the batch
PADDED_BS = 4  # the CUDA graph batch size they are padded to


class _Builder(BaseMambaAttentionMetadataBuilder[BaseMambaAttentionMetadata]):
    metadata_cls = BaseMambaAttentionMetadata


def _config() -> SimpleNamespace:
    return SimpleNamespace(
        cache_config=SimpleNamespace(mamba_cache_mode="all"),
        compilation_config=SimpleNamespace(
            cudagraph_mode=CUDAGraphMode.FULL, max_cudagraph_capture_size=None
        ),
        speculative_config=SimpleNamespace(
            num_speculative_tokens=NUM_SPEC_TOKENS, parallel_drafting=False
        ),
        num_speculative_tokens=NUM_SPEC_TOKENS,
        parallel_config=SimpleNamespace(decode_context_parallel_size=1),
        scheduler_config=SimpleNamespace(max_num_seqs=MAX_NUM_SEQS),
        model_config=SimpleNamespace(max_model_len=MAX_MODEL_LEN),
    )


def _builder() -> _Builder:
    spec = MambaSpec(
        block_size=BLOCK_SIZE,
        shapes=((1,), (1,)),
        dtypes=(torch.float32,),
        mamba_cache_mode="all",
        num_speculative_blocks=NUM_SPEC_TOKENS,
    )
    return _Builder(spec, ["layer0"], _config(), torch.device("cpu"))


def _decode_metadata() -> BaseMambaAttentionMetadata:
    table_cols = MAX_MODEL_LEN // BLOCK_SIZE + NUM_SPEC_TOKENS
    tokens_per_req = 1 + NUM_SPEC_TOKENS
    num_tokens = NUM_DECODES * tokens_per_req
    block_idx = torch.tensor([3, 5], dtype=torch.int32)
    return BaseMambaAttentionMetadata(
        num_prefills=0,
        num_prefill_tokens=0,
        num_decodes=NUM_DECODES,
        num_decode_tokens=num_tokens,
        num_reqs=PADDED_BS,
        has_initial_states_p=None,
        query_start_loc_p=None,
        num_computed_tokens_p=None,
        state_indices_tensor_p=None,
        query_start_loc_d=torch.arange(0, PADDED_BS * tokens_per_req + 1, tokens_per_req),
        num_accepted_tokens=torch.ones(NUM_DECODES, dtype=torch.int32),
        state_indices_tensor_d=torch.arange(NUM_DECODES * table_cols, dtype=torch.int32).view(
            NUM_DECODES, table_cols
        ),
        block_idx_last_scheduled_token=block_idx.clone(),
        block_idx_first_scheduled_token_p=None,
        block_idx_last_computed_token=block_idx.clone() - 1,
        seq_lens=torch.full((NUM_DECODES,), 64, dtype=torch.int32),
    )


def test_decode_state_buffer_has_room_for_speculative_blocks() -> None:
    builder = _builder()
    expected = MAX_MODEL_LEN // BLOCK_SIZE + NUM_SPEC_TOKENS
    assert builder.state_indices_tensor_d.shape == (MAX_NUM_SEQS, expected)


def test_cudagraph_capture_pads_block_indices_per_request() -> None:
    builder = _builder()
    metadata = builder._update_metadata_for_cudagraph_capture(_decode_metadata())

    assert metadata.state_indices_tensor_d.shape[0] == PADDED_BS
    for name in ("block_idx_last_scheduled_token", "block_idx_last_computed_token"):
        indices = getattr(metadata, name)
        assert indices.shape == (PADDED_BS,), name
        assert indices.data_ptr() == getattr(builder, name).data_ptr(), name
        assert indices[NUM_DECODES:].tolist() == [0] * (PADDED_BS - NUM_DECODES), name
    assert metadata.block_idx_last_scheduled_token[:NUM_DECODES].tolist() == [3, 5]
    assert metadata.block_idx_last_computed_token[:NUM_DECODES].tolist() == [2, 4]
