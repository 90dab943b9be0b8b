#!/usr/bin/env bash
# Prove the shipped patch sets on GPUs and run `verify --ray` on a local Ray cluster there, on a
# machine with no network (the device tool's two-H100 kind). Carried beside the repository:
#   .whl/*.whl              wheels the GPU image lacks (patchkit's deps, FlashInfer's
#                           apache-tvm-ffi, vLLM's import-time deps), python 3.12 manylinux
#   .carry/ray-slim.tar.xz  Ray 2.60's wheel unpacked without Java, RLlib, Serve, Data, Train,
#                           Tune and the dashboard's web client (the wheel is over the 64 MiB
#                           the device takes): tar of site-packages
#   .carry/vllm-src.tar.xz  `git archive v0.19.0 vllm tests <root files>` of patchkit's cache
#   .carry/flashinfer-0.6.6.bundle  `git bundle create ... v0.6.6` of patchkit's cache
# The cache is rebuilt there from them (a release is found by its tag, so nothing is fetched).
# Phases (one call each fits the 10-minute limit):
#   local  apply, then `verify --record` on one GPU: each patch's tests on the patched and the
#          unpatched tree (the proof), records tracked in patchsets/*/verification.json
#   ray2   `verify --ray local --bench` on both targets, the cluster with both GPUs
#   ray1   the same with one GPU (CUDA_VISIBLE_DEVICES=0)
#   nogpu  no GPU visible (CUDA_VISIBLE_DEVICES=): verify --ray local on vllm against a local run
# Outputs in $OUT: <phase>.log, the records (<set>.json) and the Ray reports (ray-<target>.json).
set -uo pipefail
repo=$(pwd); out=${OUT:-/tmp/out}; mkdir -p "$out"
export PATCHKIT_CACHE=/tmp/patchkit-cache PYTHONPATH=/tmp/site:$repo PYTHONUNBUFFERED=1
export COLUMNS=220 MAX_JOBS=16 FLASHINFER_CUDA_ARCH_LIST=9.0a RAY_AUTH_MODE=disabled
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

setup() {
  [ -f /tmp/site/.done ] && return 0
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  tar xJf .carry/ray-slim.tar.xz -C /tmp/site || exit 1
  chmod +x /tmp/site/ray/core/src/ray/gcs/gcs_server /tmp/site/ray/core/src/ray/raylet/raylet
  mkdir -p "$PATCHKIT_CACHE/repos" /tmp/vsrc
  git clone -q --mirror .carry/flashinfer-0.6.6.bundle "$PATCHKIT_CACHE/repos/flashinfer.git"
  tar xJf .carry/vllm-src.tar.xz -C /tmp/vsrc
  local vgit="$PATCHKIT_CACHE/repos/vllm.git"
  git init -q --bare "$vgit"
  git --git-dir="$vgit" --work-tree=/tmp/vsrc add -A -f  # the release's vllm/_version.py too
  tree=$(git --git-dir="$vgit" write-tree)
  commit=$(git -c user.name=patchkit -c user.email=patchkit@localhost --git-dir="$vgit" \
    commit-tree "$tree" -m "vllm 0.19.0 (upstream commit 2a69949bd)" \
    -m "vllm/, tests/ and the root files of the source release, carried" \
    -m "Upstream-Commit: 2a69949bd")
  git --git-dir="$vgit" tag v0.19.0 "$commit"
  touch /tmp/site/.done
}

report() {  # the records of a verify --json output, one line a patch: device, result, proof
  python3 - "$1" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
data = json.loads(text[text.index("{"):])
tasks = {i: t for i, t in enumerate(data.get("tasks", []))}
for i, r in enumerate(data["patches"]):
    env = r["environment"]
    print(f"{r['patch']}: {r['result']} / {r.get('proof', '-')} on {env.get('gpu') or 'no GPU'}"
          f" | {tasks.get(i, {}).get('placed', 'local')} | {r.get('proof_reason', '')[:200]}")
EOF
}

phase_local() {
  python3 -m patchkit apply --target flashinfer
  python3 -m patchkit apply --target vllm --include mxfp4-triton-sm12x
  for t in flashinfer vllm; do
    inc=$([ $t = vllm ] && echo "--include mxfp4-triton-sm12x")
    start=$(date +%s)
    python3 -m patchkit verify --target $t $inc --record --json > "$out/local-$t.json"
    echo "== local verify $t (1 GPU): $(( $(date +%s) - start )) s"
    report "$out/local-$t.json"
  done
  python3 -m patchkit status --target flashinfer
  python3 -m patchkit status --target vllm
  cp patchsets/flashinfer-spark/verification.json "$out/flashinfer-spark.json"
  cp patchsets/vllm-spark/verification.json "$out/vllm-spark.json"
}

phase_ray() {  # $1: label; the GPUs are CUDA_VISIBLE_DEVICES's
  for t in flashinfer vllm; do
    inc=$([ $t = vllm ] && echo "--include mxfp4-triton-sm12x")
    start=$(date +%s)
    python3 -m patchkit verify --target $t $inc --ray local --bench --no-record --json \
      > "$out/ray-$1-$t.json"
    echo "== verify --ray local --bench $t ($1): exit $?, $(( $(date +%s) - start )) s"
    report "$out/ray-$1-$t.json" || tail -30 "$PATCHKIT_CACHE/crash.log"
  done
}

phase_nogpu() {  # no GPU visible: verify --ray local against a local verify, vllm
  python3 -m patchkit apply --target vllm --include mxfp4-triton-sm12x > /dev/null
  start=$(date +%s)
  python3 -m patchkit verify --target vllm --include mxfp4-triton-sm12x --ray local --no-record \
    --json > "$out/nogpu-ray-vllm.json"
  echo "== verify --ray local vllm, no GPU visible: exit $?, $(( $(date +%s) - start )) s"
  report "$out/nogpu-ray-vllm.json"
  start=$(date +%s)
  python3 -m patchkit verify --target vllm --include mxfp4-triton-sm12x --no-record --json \
    > "$out/nogpu-local-vllm.json"
  echo "== local verify vllm, no GPU visible: exit $?, $(( $(date +%s) - start )) s"
  report "$out/nogpu-local-vllm.json"
}

nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv,noheader
setup
for phase in "$@"; do
  case $phase in
    local) phase_local 2>&1 | tee "$out/local.log" ;;
    ray2) phase_ray 2gpu 2>&1 | tee "$out/ray2.log" ;;
    ray1) CUDA_VISIBLE_DEVICES=0 phase_ray 1gpu 2>&1 | tee "$out/ray1.log" ;;
    nogpu) CUDA_VISIBLE_DEVICES= phase_nogpu 2>&1 | tee "$out/nogpu.log" ;;
  esac
done
