"""The MXFP4 gate rewrite follows vLLM's own moves, on the real source releases: the experts file
moved (0.20.0), the oracle's check dropped (0.21.0), the class checks folded into a helper
(0.22.0), the helper relaxed upstream (0.32.0). Releases are fetched once into the real cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.engine.probe import list_at, read_at
from patchkit.engine.rewrite.run import run_rewrites
from patchkit.outcome import Outcome
from patchkit.upstream.sources import ReleaseStore

PATCH = Path(__file__).resolve().parents[2] / "patchsets/vllm-spark/patches/mxfp4-triton-sm12x.py"
MOE = "vllm/model_executor/layers/fused_moe/"
EXPERTS = MOE + "experts/gpt_oss_triton_kernels_moe.py"
HELPER = "_triton_kernel_moe_supports_current_device"
CLASSES = [
    "BaseOAITritonExperts._supports_current_device",
    "OAITritonMxfp4ExpertsMonolithic._supports_current_device",
]
PATH = [
    ("0.20.0", Outcome.APPLIED, [(EXPERTS, c) for c in CLASSES]
     + [(MOE + "oracle/mxfp4.py", "select_gpt_oss_mxfp4_moe_backend")]),
    ("0.21.0", Outcome.APPLIED, [(EXPERTS, c) for c in CLASSES]),
    ("0.22.0", Outcome.APPLIED, [(EXPERTS, HELPER)]),
    ("0.32.0", Outcome.UPSTREAMED, [(EXPERTS, HELPER)]),
]  # fmt: skip


@pytest.mark.upstream
@pytest.mark.parametrize(("version", "outcome", "sites"), PATH, ids=[p[0] for p in PATH])
def test_mxfp4_gate_follows_vllm(
    real_cache: Path, version: str, outcome: Outcome, sites: list[tuple[str, str]]
) -> None:
    with ReleaseStore("vllm", "vllm") as store:
        commit = store.ensure_release(version)
        run = run_rewrites(PATCH, read_at(store.repo, commit), list_at(store.repo, commit))
    assert run.outcome is outcome, [a.message for a in run.anchors]
    found = sorted((s.path, s.qualname) for a in run.anchors for s in a.sites)
    assert found == sorted(sites)
    assert all(s.present is (outcome is Outcome.UPSTREAMED) for a in run.anchors for s in a.sites)
