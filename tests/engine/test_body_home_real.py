"""A hunk whose definition's body upstream keeps under another name, on the real FlashInfer
source releases: FlashInfer 0.7.0 runs ``SinglePrefillWithKVCacheDispatched`` as a wrapper
that dispatches to ``SinglePrefillWithKVCacheDispatchedImpl``; 0.7.1 folds the body back into
``SinglePrefillWithKVCacheDispatched``. A patch made on 0.7.1 that changes a line of that body,
right beside a line 0.7.0 writes otherwise, goes into 0.7.0's ``...Impl``, not the wrapper."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.engine.diff.make import FileDelta, unified_diff
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from patchkit.upstream.sources import ReleaseStore

pytestmark = pytest.mark.upstream

PREFILL = "include/flashinfer/attention/prefill.cuh"
KV_SHARED = (
    b"    constexpr bool kKVShared = !is_fp4_type_v<DTypeKV> && (HEAD_DIM_VO / 16 > 16) &&\n"
)
CHANGED = KV_SHARED.replace(b"16 > 16)", b"16 >= 16)")


def test_a_hunk_of_flashinfer_071_goes_into_the_impl_070_keeps_the_body_in(
    real_cache: Path, tmp_path: Path
) -> None:
    store = ReleaseStore("flashinfer", "flashinfer-python")
    base = store.ensure_release("0.7.1")
    tree = store.fresh_worktree("0.7.0", tmp_path / "flashinfer")
    made_on = store.repo.read_file(base, PREFILL)
    before = (tree / PREFILL).read_bytes()
    assert made_on is not None and made_on.count(KV_SHARED) == 1 and before.count(KV_SHARED) == 1
    patch = tmp_path / "kv-shared.patch"
    patch.write_bytes(
        unified_diff([FileDelta(PREFILL, made_on, made_on.replace(KV_SHARED, CHANGED))])
    )

    report = port(patch_file=patch, base_commit=base, checkout=tree, explain=True)

    assert report.outcome is Outcome.CARRIED, report.result.details
    (placed,) = report.result.placements
    assert placed.scope == ("SinglePrefillWithKVCacheDispatchedImpl",)
    assert "SinglePrefillWithKVCacheDispatchedImpl" in placed.note
    assert (tree / PREFILL).read_bytes() == before.replace(KV_SHARED, CHANGED)
