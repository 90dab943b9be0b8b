#!/usr/bin/env bash
# Verify and benchmark the shipped patch sets on a GPU machine with no network, in one call; the
# records land in patchsets/*/verification.json (and in $OUT). Carried beside the repository:
#   .whl/    wheels the GPU image lacks (vLLM's import-time deps, apache-tvm-ffi for FlashInfer's
#            JIT, patchkit's own deps)
#   .carry/  git bundles of the locked releases, made from patchkit's cache:
#              git -C ~/.cache/patchkit/repos/vllm.git bundle create .carry/vllm-0.19.0.bundle v0.19.0
#            and triton_kernels.tgz: vllm/third_party/triton_kernels from vLLM 0.19.0's wheel
#            (its source build fetches it from Triton's repository), for the MXFP4 MoE benchmark
# Prints the unpatched FlashInfer failure first, then applies, verifies and benchmarks both
# targets with patchkit itself (`verify --bench --record`: unpatched worktree vs patched tree,
# alternating; the records are the repository's, so tracked).
set -uo pipefail
repo=$(pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/tk && tar xzf .carry/triton_kernels.tgz -C /tmp/tk
export PYTHONPATH=/tmp/site:/tmp/tk:$repo PYTHONUNBUFFERED=1 PATCHKIT_CACHE=/tmp/patchkit-cache
export COLUMNS=200
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
git clone -q -c advice.detachedHead=false -b v0.6.6 .carry/flashinfer-0.6.6.bundle /tmp/fi
git clone -q -c advice.detachedHead=false -b v0.19.0 .carry/vllm-0.19.0.bundle /tmp/vllm

echo "== FlashInfer 0.6.6 unpatched: the GQA-16 test must fail =="
(cd /tmp/fi && PYTHONPATH=/tmp/fi:$PYTHONPATH timeout 300 python3 -m pytest -q -p no:cacheprovider \
  "$repo/patchsets/flashinfer-spark/tests/test_decode_gqa16.py" 2>&1 | grep -E "Unsupported|passed|failed" | sort | uniq -c | tail -5)

echo "== vLLM 0.19.0 unpatched: the #39809 reproducer must fail =="
(cd /tmp/vllm && PYTHONPATH=/tmp/vllm:$PYTHONPATH timeout 300 python3 -m pytest -q -p no:cacheprovider \
  "$repo/patchsets/vllm-spark/tests/test_mamba_prefix_spec_buffers.py" 2>&1 | tail -3)

echo "== patchkit apply, then verify --bench =="
python3 -m patchkit apply --target flashinfer --checkout /tmp/fi
python3 -m patchkit apply --target vllm --checkout /tmp/vllm --include mxfp4-triton-sm12x
python3 -m patchkit verify --target flashinfer --checkout /tmp/fi --bench --record
python3 -m patchkit verify --target vllm --checkout /tmp/vllm --include mxfp4-triton-sm12x --bench --record
python3 -m patchkit status --target flashinfer --checkout /tmp/fi
python3 -m patchkit status --target vllm --checkout /tmp/vllm
for set in flashinfer-spark vllm-spark; do
  cp "patchsets/$set/verification.json" "${OUT:-/tmp}/$set.json" 2>/dev/null
done
