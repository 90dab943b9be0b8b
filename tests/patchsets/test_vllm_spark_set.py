"""The vllm-spark patch set: its layout, each rewrite on inline excerpts, and the real 0.19.0 tree."""

from __future__ import annotations

import difflib
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import platformdirs
import pytest
import tomllib

from patchkit.engine.rewrite import Rewrite
from patchkit.engine.rewrite.load import load_rewrites
from patchkit.engine.rewrite.run import run_rewrite_patch, run_rewrites
from patchkit.model import LockEntry, SourceKind, SourceSpec
from patchkit.outcome import Outcome
from testing.rewrites import assert_rewrite

SET = Path(__file__).resolve().parents[2] / "patchsets" / "vllm-spark"
PATCHES = SET / "patches"
REAL_CACHE = os.environ.get("PATCHKIT_CACHE") or platformdirs.user_cache_dir("patchkit")
META_KEYS = {"id", "title", "target", "why", "author", "issues", "prs", "status", "merged_in",
             "requires", "files", "optional", "notes", "pr", "tests", "history"}  # fmt: skip


def rewrites(patch_id: str) -> list[type[Rewrite]]:
    return load_rewrites(PATCHES / f"{patch_id}.py")


def series() -> list[str]:
    with (SET / "patchset.toml").open("rb") as f:
        return list(tomllib.load(f)["patchset"]["series"])


# -- layout -----------------------------------------------------------------------------------


def test_patchset_manifest() -> None:
    with (SET / "patchset.toml").open("rb") as f:
        manifest = tomllib.load(f)["patchset"]
    assert (manifest["name"], manifest["version"], manifest["targets"]) == (
        "vllm-spark",
        "1.0.0",
        ["vllm"],
    )
    assert sorted(series()) == sorted(p.stem for p in PATCHES.glob("*.toml"))


@pytest.mark.parametrize("patch_id", series())
def test_patch_metadata_and_files(patch_id: str) -> None:
    with (PATCHES / f"{patch_id}.toml").open("rb") as f:
        meta = tomllib.load(f)
    # [[bench]] only where a benchmark is declared, [upstream] only where a PR is known,
    # [export] (identity, date, the upstream test) where it is exported
    assert set(meta) - {"bench", "upstream", "export"} == META_KEYS
    if "test" in meta.get("export", {}):
        assert (SET / meta["export"]["test"]["file"]).is_file()
    assert (meta["id"], meta["target"]) == (patch_id, "vllm")
    assert meta["status"] in ("local", "forwarded", "merged")
    assert meta["optional"] is (patch_id == "mxfp4-triton-sm12x")
    assert set(meta["requires"]) <= set(series())
    for test in meta["tests"]:
        if test["where"] == "set":
            assert (SET / test["node"].split("::")[0]).is_file(), test["node"]
    assert rewrites(patch_id)
    # files: what the rewrites change at the lock; each rewrite's home among them
    assert {cls.path for cls in rewrites(patch_id)} <= set(meta["files"])


# -- mamba-prefix-spec-buffers ----------------------------------------------------------------

MAMBA_BEFORE = """\
class BaseMambaAttentionMetadataBuilder(AttentionMetadataBuilder[M], abc.ABC):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):
        if self.vllm_config.cache_config.mamba_cache_mode == "all":
            max_num_blocks = cdiv(
                self.vllm_config.model_config.max_model_len,
                self.kv_cache_spec.block_size,
            )

    def _update_metadata_for_cudagraph_capture(self, metadata):
        if ok:
            padded_bs = metadata.num_reqs
            if self.vllm_config.cache_config.mamba_cache_mode == "all":
                block_idx_last_scheduled_token = self.block_idx_last_scheduled_token[
                    : metadata.num_decode_tokens
                ]

                block_idx_last_computed_token = self.block_idx_last_computed_token[
                    : metadata.num_decode_tokens
                ]
"""
MAMBA_AFTER = """\
class BaseMambaAttentionMetadataBuilder(AttentionMetadataBuilder[M], abc.ABC):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):
        if self.vllm_config.cache_config.mamba_cache_mode == "all":
            max_num_blocks = (
                cdiv(
                    self.vllm_config.model_config.max_model_len,
                    self.kv_cache_spec.block_size,
                )
                + self.kv_cache_spec.num_speculative_blocks
            )

    def _update_metadata_for_cudagraph_capture(self, metadata):
        if ok:
            padded_bs = metadata.num_reqs
            if self.vllm_config.cache_config.mamba_cache_mode == "all":
                block_idx_last_scheduled_token = self.block_idx_last_scheduled_token[
                    :padded_bs
                ]
                block_idx_last_scheduled_token[metadata.num_decodes :] = 0

                block_idx_last_computed_token = self.block_idx_last_computed_token[
                    :padded_bs
                ]
                block_idx_last_computed_token[metadata.num_decodes :] = 0
"""
# The same fix as upstream might land it: other layout, other spelling, same meaning.
MAMBA_REFORMATTED = """\
class BaseMambaAttentionMetadataBuilder(AttentionMetadataBuilder[M], abc.ABC):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):
        num_spec_blocks = self.kv_cache_spec.num_speculative_blocks
        max_num_blocks = cdiv(max_model_len, block_size) + num_speculative_blocks

    def _update_metadata_for_cudagraph_capture(self, metadata):
        padded_bs = metadata.num_reqs
        block_idx_last_scheduled_token = self.block_idx_last_scheduled_token[:padded_bs]
        block_idx_last_scheduled_token[metadata.num_decodes :].fill_(0)
        block_idx_last_computed_token = self.block_idx_last_computed_token[
            : padded_bs
        ]
"""


def test_mamba_prefix_spec_buffers() -> None:
    assert_rewrite(rewrites("mamba-prefix-spec-buffers"), MAMBA_BEFORE, MAMBA_AFTER)


def test_mamba_prefix_spec_buffers_recognises_an_upstream_reformatted_fix() -> None:
    code = MAMBA_REFORMATTED
    assert_rewrite(rewrites("mamba-prefix-spec-buffers"), code, code, outcome=Outcome.UPSTREAMED)


def test_mamba_prefix_spec_buffers_partly_upstreamed() -> None:
    scheduled_fixed = MAMBA_BEFORE.replace(
        "scheduled_token[\n                    : metadata.num_decode_tokens",
        "scheduled_token[\n                    :padded_bs",
    )
    after = MAMBA_AFTER.replace(
        "                block_idx_last_scheduled_token[metadata.num_decodes :] = 0\n", ""
    )
    assert_rewrite(
        rewrites("mamba-prefix-spec-buffers"),
        scheduled_fixed,
        after,
        outcome=Outcome.PARTLY_UPSTREAMED,
    )


# -- warmup-graph-capturing -------------------------------------------------------------------

WARMUP = """\
class GPUModelRunner:
    def _warmup_and_capture(self, desc, cudagraph_runtime_mode, num_warmups=None):
        force_attention = cudagraph_runtime_mode == CUDAGraphMode.FULL
        for _ in range(num_warmups):
            self._dummy_run(
                desc.num_tokens,
                cudagraph_runtime_mode=CUDAGraphMode.NONE,
                force_attention=force_attention,
                uniform_decode=desc.uniform,
            )
        self._dummy_run(
            desc.num_tokens,
            cudagraph_runtime_mode=cudagraph_runtime_mode,
            is_graph_capturing=True,
        )
"""
WARMUP_AFTER = WARMUP.replace(
    "force_attention=force_attention,\n",
    "force_attention=force_attention,\n                is_graph_capturing=force_attention,\n",
)
DECOY = """\
class DraftRunner:
    def _warmup_and_capture(self, desc, mode):
        for _ in range(3):
            self._dummy_run(desc.num_tokens, force_attention=True)


"""


def test_warmup_graph_capturing() -> None:
    assert_rewrite(rewrites("warmup-graph-capturing"), WARMUP, WARMUP_AFTER)
    patch = rewrites("warmup-graph-capturing")
    assert_rewrite(patch, WARMUP_AFTER, WARMUP_AFTER, outcome=Outcome.UPSTREAMED)


def test_warmup_graph_capturing_ignores_a_look_alike_above() -> None:
    assert_rewrite(rewrites("warmup-graph-capturing"), DECOY + WARMUP, DECOY + WARMUP_AFTER)


def test_warmup_graph_capturing_without_the_loop_is_a_conflict() -> None:
    code = WARMUP.replace("for _ in range(num_warmups):", "if num_warmups:")
    assert_rewrite(rewrites("warmup-graph-capturing"), code, code, outcome=Outcome.CONFLICT)


# -- mxfp4-triton-sm12x -----------------------------------------------------------------------

EXPERTS = """\
class BaseOAITritonExperts(mk.FusedMoEExpertsModular):
    @staticmethod
    def _supports_current_device() -> bool:
        cap = p.get_device_capability()
        # (9,0) <= cap < (11,0) covers CUDA SM90 (Hopper), SM100+ (Blackwell)
        return (9, 0) <= (cap.major, cap.minor) < (11, 0)


class SomebodyElsesExperts(mk.FusedMoEExpertsModular):
    @staticmethod
    def _supports_current_device() -> bool:
        cap = p.get_device_capability()
        # (9,0) <= cap < (11,0) covers CUDA SM90 (Hopper), SM100+ (Blackwell)
        return (9, 0) <= (cap.major, cap.minor) < (11, 0)


class OAITritonMxfp4ExpertsMonolithic(mk.FusedMoEExpertsMonolithic):
    @staticmethod
    def _supports_current_device() -> bool:
        cap = p.get_device_capability()
        # (9,0) <= cap < (11,0) covers CUDA SM90 (Hopper), SM100+ (Blackwell)
        return (9, 0) <= (cap.major, cap.minor) < (11, 0)
"""


def _fix_block(code: str, cls: str) -> str:
    start = code.index(f"class {cls}")
    end = code.find("\n\n\nclass ", start)
    end = len(code) if end < 0 else end
    block = code[start:end].replace("(11, 0)", "(13, 0)").replace("(11,0)", "(13,0)")
    block = block.replace("SM100+ (Blackwell)", "SM10x/SM12x (Blackwell)")
    return code[:start] + block + code[end:]


def test_mxfp4_changes_exactly_the_two_anchored_checks() -> None:
    after = _fix_block(_fix_block(EXPERTS, "BaseOAITritonExperts"), "OAITritonMxfp4Experts")
    report = assert_rewrite(rewrites("mxfp4-triton-sm12x"), EXPERTS, after)
    assert "class SomebodyElsesExperts" in after and after.count("(11, 0)") == 1
    assert [s.qualname for a in report.anchors for s in a.sites] == [
        "BaseOAITritonExperts._supports_current_device",
        "OAITritonMxfp4ExpertsMonolithic._supports_current_device",
    ]


ORACLE = """\
def select_mxfp4_moe_backend(config):
    triton_kernels_supported = has_triton_kernels() and (
        9,
        0,
    ) <= current_platform.get_device_capability() < (11, 0)
"""


def test_mxfp4_oracle() -> None:
    patch = rewrites("mxfp4-triton-sm12x")
    assert_rewrite(patch, ORACLE, ORACLE.replace("(11, 0)", "(13, 0)"))
    merged = ORACLE.replace("(11, 0)", "(12, 2)")  # some other bound: not ours to judge
    assert_rewrite(patch, merged, merged, outcome=Outcome.CONFLICT)


# As vLLM 0.22.0 has it: the class checks folded into one module-level helper.
FOLDED = """\
def _triton_kernel_moe_supports_current_device() -> bool:
    p = current_platform
    if p.is_cuda():
        cap = p.get_device_capability()
        # Keep the original `(9, 0) <= cap < (11, 0)` window on
        # CUDA (covers Hopper SM90 and Blackwell SM100, excludes
        # SM120) — this PR is ROCm-scoped and the broader CUDA
        # range was not validated.
        return cap is not None and (9, 0) <= (cap.major, cap.minor) < (11, 0)
    return False


class BaseOAITritonExperts(mk.FusedMoEExpertsModular):
    @staticmethod
    def _supports_current_device() -> bool:
        return _triton_kernel_moe_supports_current_device() and has_triton_kernels()
"""
MOVED = "vllm/model_executor/layers/fused_moe/experts/gpt_oss_triton_kernels_moe.py"


def _tree(
    files: dict[str, str],
) -> tuple[Callable[[str], bytes | None], Callable[[str], list[str]]]:
    def read(path: str) -> bytes | None:
        return files[path].encode() if path in files else None

    def listing(directory: str) -> list[str]:
        return sorted(p for p in files if p.startswith(directory + "/"))

    return read, listing


def test_mxfp4_follows_the_moved_file_into_the_folded_helper() -> None:
    read, listing = _tree({MOVED: FOLDED})
    run = run_rewrites(PATCHES / "mxfp4-triton-sm12x.py", read, listing)
    assert run.outcome is Outcome.APPLIED
    (site,) = [s for a in run.anchors for s in a.sites]
    assert (site.path, site.qualname) == (MOVED, "_triton_kernel_moe_supports_current_device")
    (output,) = [f.output for f in run.files if f.output]
    assert b"(9, 0) <= (cap.major, cap.minor) < (13, 0)" in output


def test_mxfp4_is_upstreamed_where_upstream_relaxed_the_helper() -> None:
    read, listing = _tree({MOVED: FOLDED.replace("< (11, 0)\n", "< (13, 0)\n")})
    run = run_rewrites(PATCHES / "mxfp4-triton-sm12x.py", read, listing)
    assert run.outcome is Outcome.UPSTREAMED


def test_mxfp4_without_its_search_loses_the_moved_code() -> None:
    read, _ = _tree({MOVED: FOLDED})  # a reader that cannot list: only the home file is seen
    assert run_rewrites(PATCHES / "mxfp4-triton-sm12x.py", read).outcome is Outcome.GONE


# -- mamba-ssu-blackwell-sm12x ----------------------------------------------------------------

MIXER = """\
class MambaMixer2(MambaBase, PluggableLayer):
    def __init__(self):
        # Check if running on Blackwell (SM100+) for kernel tuning
        self.is_blackwell = current_platform.is_device_capability_family(100)
"""
MIXER_AFTER = """\
class MambaMixer2(MambaBase, PluggableLayer):
    def __init__(self):
        # Check if running on Blackwell (SM100+, SM12x) for kernel tuning
        self.is_blackwell = current_platform.is_device_capability_family(
            100
        ) or current_platform.is_device_capability_family(120)
"""


def test_mamba_ssu_blackwell_sm12x() -> None:
    patch = rewrites("mamba-ssu-blackwell-sm12x")
    assert_rewrite(patch, MIXER, MIXER_AFTER)
    other_spelling = MIXER.replace(
        "current_platform.is_device_capability_family(100)",
        "any(current_platform.is_device_capability_family(f) for f in (100, 120))",
    )
    assert_rewrite(patch, other_spelling, other_spelling, outcome=Outcome.CONFLICT)
    also_120 = MIXER.replace("(100)", "(100) or p.is_device_capability_family(120)")
    assert_rewrite(patch, also_120, also_120, outcome=Outcome.UPSTREAMED)


# -- the real vLLM 0.19.0 tree ----------------------------------------------------------------

EXPECTED_LINES = {
    "mamba-prefix-spec-buffers": {
        "vllm/v1/attention/backends/mamba_attn.py": [
            "+                + self.kv_cache_spec.num_speculative_blocks",
            "+                    :padded_bs",
            "+                block_idx_last_scheduled_token[metadata.num_decodes :] = 0",
            "+                block_idx_last_computed_token[metadata.num_decodes :] = 0",
        ]
    },
    "warmup-graph-capturing": {
        "vllm/v1/worker/gpu_model_runner.py": [
            "+                is_graph_capturing=force_attention,"
        ]
    },
    "mamba-ssu-blackwell-sm12x": {
        "vllm/model_executor/layers/mamba/mamba_mixer2.py": [
            "+        ) or current_platform.is_device_capability_family(120)"
        ]
    },
    "mxfp4-triton-sm12x": {
        "vllm/model_executor/layers/fused_moe/oracle/mxfp4.py": [
            "+    ) <= current_platform.get_device_capability() < (13, 0)"
        ],
        "vllm/model_executor/layers/fused_moe/gpt_oss_triton_kernels_moe.py": [
            "+        return (9, 0) <= (cap.major, cap.minor) < (13, 0)"
        ],
    },
}


@pytest.fixture(scope="module")
def vllm_0_19_0() -> Iterator[Callable[[str], bytes | None]]:
    """Files of vLLM 0.19.0 as released: read from the release commit, not a shared worktree."""
    from patchkit.upstream.sources import UpstreamRepo, fetch

    entry = LockEntry(
        "vllm",
        "https://github.com/vllm-project/vllm",
        "0.19.0",
        "2a69949bd",
        SourceSpec(SourceKind.INDEX, package="vllm"),
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PATCHKIT_CACHE", REAL_CACHE)
        commit = fetch(entry).local_commit
        with UpstreamRepo("vllm") as upstream:
            git_dir = upstream.path
    assert commit is not None

    def read(path: str) -> bytes | None:
        shown = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True
        )
        return shown.stdout if shown.returncode == 0 else None

    yield read


@pytest.fixture(scope="module")
def vllm_0_19_0_listing(vllm_0_19_0: Callable[[str], bytes | None]) -> Callable[[str], list[str]]:
    """Files of vLLM 0.19.0 under a directory, so rewrites can search it."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PATCHKIT_CACHE", REAL_CACHE)
        from patchkit.upstream.sources import UpstreamRepo

        with UpstreamRepo("vllm") as upstream:
            git_dir = upstream.path
    commit = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", "v0.19.0^{commit}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip

    def listing(directory: str) -> list[str]:
        out = subprocess.run(
            ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit, "--", directory],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return out.splitlines()

    return listing


@pytest.mark.upstream
def test_the_whole_set_on_vllm_0_19_0(
    vllm_0_19_0: Callable[[str], bytes | None], vllm_0_19_0_listing: Callable[[str], list[str]]
) -> None:
    files: dict[str, bytes] = {}

    def read(path: str) -> bytes | None:
        return files[path] if path in files else vllm_0_19_0(path)

    for patch_id in series():
        started = time.perf_counter()
        declared = _files_declared(patch_id)
        result = run_rewrite_patch(
            patch_id, PATCHES / f"{patch_id}.py", read, vllm_0_19_0_listing, declared
        )
        print(f"{patch_id}: {result.outcome.value} in {time.perf_counter() - started:.2f}s")
        assert result.outcome is Outcome.APPLIED, result.message
        assert {c.path for c in result.changes} == set(EXPECTED_LINES[patch_id])
        assert set(declared) == {c.path for c in result.changes}
        for change in result.changes:
            assert change.content is not None
            diff = _diff(read(change.path) or b"", change.content)
            added = [line for line in diff if line.startswith("+") and not line.startswith("++")]
            assert set(EXPECTED_LINES[patch_id][change.path]) <= set(added), diff
            files[change.path] = change.content
    for patch_id in series():  # the patched tree: every patch is found already there
        declared = _files_declared(patch_id)
        result = run_rewrite_patch(
            patch_id, PATCHES / f"{patch_id}.py", read, vllm_0_19_0_listing, declared
        )
        assert result.outcome is Outcome.UPSTREAMED, result.message


def _files_declared(patch_id: str) -> list[str]:
    with (PATCHES / f"{patch_id}.toml").open("rb") as f:
        return list(tomllib.load(f)["files"])


def _diff(old: bytes, new: bytes) -> list[str]:
    lines = difflib.unified_diff(old.decode().splitlines(), new.decode().splitlines(), lineterm="")
    return list(lines)
