#!/usr/bin/env bash
# Verify the shipped patch sets on a GPU machine with no network, as recorded in
# patchsets/*/verification.json. Carried beside the repository:
#   .whl/    wheels the GPU image lacks (vLLM's import-time deps, apache-tvm-ffi for FlashInfer's
#            JIT, patchkit's own deps)
#   .carry/  git bundles of the locked releases, made from patchkit's cache:
#            git -C ~/.cache/patchkit/repos/vllm.git bundle create .carry/vllm-0.19.0.bundle v0.19.0
# Prints the unpatched FlashInfer failure first, then applies and verifies both targets with
# patchkit itself; the new records land in patchsets/<set>/verification.json (and in $OUT).
set -uo pipefail
repo=$(pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$repo PYTHONUNBUFFERED=1 PATCHKIT_CACHE=/tmp/patchkit-cache
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
git clone -q -c advice.detachedHead=false -b v0.6.6 .carry/flashinfer-0.6.6.bundle /tmp/fi
git clone -q -c advice.detachedHead=false -b v0.19.0 .carry/vllm-0.19.0.bundle /tmp/vllm

echo "== FlashInfer 0.6.6 unpatched: the GQA-16 test must fail =="
(cd /tmp/fi && PYTHONPATH=/tmp/fi:$PYTHONPATH timeout 300 python3 -m pytest -q -p no:cacheprovider \
  "$repo/patchsets/flashinfer-spark/tests/test_decode_gqa16.py" 2>&1 | grep -E "Unsupported|passed|failed" | sort | uniq -c | tail -5)

echo "== vLLM 0.19.0 unpatched: the #39809 reproducer must fail =="
(cd /tmp/vllm && PYTHONPATH=/tmp/vllm:$PYTHONPATH timeout 300 python3 -m pytest -q -p no:cacheprovider \
  "$repo/patchsets/vllm-spark/tests/test_mamba_prefix_spec_buffers.py" 2>&1 | tail -3)

echo "== patchkit apply --verify =="
python3 -m patchkit apply --target flashinfer --checkout /tmp/fi --verify
python3 -m patchkit apply --target vllm --checkout /tmp/vllm --include mxfp4-triton-sm12x --verify
for set in flashinfer-spark vllm-spark; do
  cp "patchsets/$set/verification.json" "${OUT:-/tmp}/$set.json" 2>/dev/null
done
