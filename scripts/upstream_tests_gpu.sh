#!/usr/bin/env bash
# Run the upstream tests of the exported branches on a GPU machine with no network, in one call
# (scripts/upstream_tests.py run); results land in $OUT/upstream-*.json, merged here afterwards
# with `python scripts/upstream_tests.py merge FILE... --checkout REPO`. Carried:
#   .whl/                 wheels the GPU image lacks (as scripts/gpu_verify.sh)
#   .carry/upstream-tests-whl/  what vLLM's model-runner import chain needs beyond those
#                         (tests/v1/worker/test_gpu_model_runner.py): msgspec, pybase64,
#                         openai==1.109.1 (+ jiter, distro, sniffio), openai-harmony, diskcache,
#                         cachetools, blake3, llguidance, xgrammar, outlines_core,
#                         lm-format-enforcer, interegular (pip download --only-binary=:all:
#                         --python-version 3.12 --platform manylinux_2_28_x86_64 ...)
#   .carry/flashinfer-0.6.6.bundle, vllm-0.19.0.bundle, triton_kernels.tgz  (as gpu_verify.sh)
#   .carry/e2/fi-export.tar.gz   `git archive` of the exported FlashInfer commit (upstream's
#                                history: its submodules 3rdparty/{cutlass,spdlog} are taken
#                                from the 0.6.6 source release, which ships them)
#   .carry/e2/vllm-export.bundle the exported vLLM branches (patchkit/*), on v0.19.0
# Usage: scripts/upstream_tests_gpu.sh [vllm|flashinfer|all]  (two calls fit the 10-minute limit)
set -uo pipefail
what=${1:-all}
repo=$(pwd); out=${OUT:-/tmp/out}; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl $(ls .carry/upstream-tests-whl/*.whl 2>/dev/null) || exit 1
mkdir -p /tmp/tk && tar xzf .carry/triton_kernels.tgz -C /tmp/tk
export PYTHONPATH=/tmp/site:/tmp/tk PYTHONUNBUFFERED=1 MAX_JOBS=16 FLASHINFER_CUDA_ARCH_LIST=9.0a
export FLASHINFER_WORKSPACE_BASE=/tmp/fiws
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"

if [ "$what" != flashinfer ]; then
echo "== vLLM exported branches =="
git clone -q -c advice.detachedHead=false -b v0.19.0 .carry/vllm-0.19.0.bundle /tmp/vllm
git -C /tmp/vllm fetch -q "$repo/.carry/e2/vllm-export.bundle" 'refs/heads/*:refs/heads/*'
for id in mxfp4-triton-sm12x warmup-graph-capturing mamba-ssu-blackwell-sm12x mamba-prefix-spec-buffers; do
  commit=$(git -C /tmp/vllm rev-parse "patchkit/$id") || continue
  git -C /tmp/vllm worktree add -q --detach "/tmp/v-$id" "$commit"
  timeout 120 python3 scripts/upstream_tests.py run --patch "$id" --tree "/tmp/v-$id" \
    --commit "$commit" --out "$out/upstream-vllm.json" 2>&1 | tail -25
done
fi
[ "$what" = vllm ] && exit 0

echo "== FlashInfer exported commit =="
mkdir -p /tmp/fi && tar xzf .carry/e2/fi-export.tar.gz -C /tmp/fi
commit=$(gunzip -c .carry/e2/fi-export.tar.gz | git get-tar-commit-id)
git clone -q -c advice.detachedHead=false -b v0.6.6 .carry/flashinfer-0.6.6.bundle /tmp/fi-sdist
for sub in cutlass spdlog; do rm -rf "/tmp/fi/3rdparty/$sub"; cp -r "/tmp/fi-sdist/3rdparty/$sub" /tmp/fi/3rdparty/; done
mkdir -p /tmp/fi/flashinfer/data  # what an editable install makes (build_backend._create_data_dir)
for pair in 3rdparty/cutlass:cutlass 3rdparty/spdlog:spdlog csrc:csrc include:include; do
  ln -sfn "/tmp/fi/${pair%%:*}" "/tmp/fi/flashinfer/data/${pair##*:}"
done
timeout 500 python3 scripts/upstream_tests.py run --patch decode-gqa-group-size-16 --tree /tmp/fi \
  --commit "$commit" --out "$out/upstream-flashinfer.json" 2>&1 | tail -30
