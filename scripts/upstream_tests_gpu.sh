#!/usr/bin/env bash
# Prove each shipped PR's upstream test on a GPU machine with no network: for every patch of
# TARGET with an [export.test], scripts/upstream_tests.py prove runs that test on the pinned
# upstream tree without the change and with it, and writes both results with the GPU, driver,
# CUDA, torch and triton versions to $OUT/upstream-TARGET.json (and a log beside it). Back here:
#   python3 scripts/upstream_tests.py merge <files_at>/upstream-TARGET.json   # then commit
# What it needs is made here first by scripts/upstream_tests_carry.sh TARGET: `.whl/` (wheels)
# and `.carry/upstream-tests/` (the upstream tree). When both are over the device's 64 MiB a
# call, split the run: `scripts/upstream_tests_gpu.sh install` carrying .whl (again carrying .whl2
# where the carry script made one), then (while the
# machine is warm) `scripts/upstream_tests_gpu.sh TARGET` carrying .carry.
#   scripts/upstream_tests_gpu.sh install|vllm|flashinfer [PATCH_ID...]   # ids: only those patches
set -uo pipefail
what=${1:?usage: scripts/upstream_tests_gpu.sh install|vllm|flashinfer [PATCH_ID...]}
shift; only=(); for id in "$@"; do only+=(--patch "$id"); done
repo=$(pwd); out=${OUT:-/tmp/out}; site=/tmp/upstream-tests-site; mkdir -p "$out"
for wheels in .whl .whl2 .whl3; do  # each call adds its wheels; a namespace package (opentelemetry)
  ls "$wheels"/*.whl >/dev/null 2>&1 || continue  # split over two calls is merged, never replaced
  rm -rf /tmp/upstream-tests-new
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/upstream-tests-new "$wheels"/*.whl || exit 1
  mkdir -p "$site" && cp -rn /tmp/upstream-tests-new/. "$site/"
done
[ "$what" = install ] && { echo "wheels installed in $site"; exit 0; }
[ -d "$site" ] || { echo "no wheels in $site: carry .whl (or run install first)" >&2; exit 2; }
export PYTHONPATH=$site:$repo PYTHONUNBUFFERED=1 PATCHKIT_CACHE=/tmp/upstream-tests-cache
export MAX_JOBS=16 FLASHINFER_CUDA_ARCH_LIST=9.0a FLASHINFER_WORKSPACE_BASE=/tmp/fiws
carried=$repo/.carry/upstream-tests
{
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
version=$(python3 -c "from patchkit.project.load import load_project; from pathlib import Path; print(load_project(Path('.')).entry('$what').version)")
tree=/tmp/upstream-$what; rm -rf "$tree"
case "$what" in
  vllm)  # the cache's release commit (its tests/ included), a stand-in naming upstream's commit
    git clone -q -c advice.detachedHead=false -b "v$version" "$carried/vllm.bundle" "$tree"
    # vLLM finds its platform from its package metadata, which a source tree lacks (no platform:
    # VllmConfig() fails); as CUDA it imports vllm._C, the native ops a source tree has not
    # built. So vLLM runs as its CPU build ("+cpu"), on the GPU; the record says so.
    rm -rf "$site"/vllm-*.dist-info; meta="$site/vllm-$version+cpu.dist-info"; mkdir -p "$meta"
    printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$version" > "$meta/METADATA"
    : > "$meta/RECORD"
    note="vLLM's CPU platform (a source tree: its native ops not built)"
    prepare="" ;;
  flashinfer)  # upstream's own commit, alone (a shallow history), and its submodules' headers
    git init -q "$tree"
    git bundle list-heads "$carried/flashinfer.bundle" | cut -d' ' -f1 > "$tree/.git/shallow"
    git -C "$tree" fetch -q "$carried/flashinfer.bundle" "refs/tags/v$version:refs/tags/v$version"
    git -C "$tree" checkout -q "v$version"
    mkdir -p /tmp/fi-3rdparty && tar xzf "$carried/3rdparty.tgz" -C /tmp/fi-3rdparty
    note=""  # what an editable install leaves in the tree (build_backend._create_data_dir):
    prepare='mkdir -p flashinfer/data && ln -sfn "$PWD/include" flashinfer/data/include && ln -sfn "$PWD/csrc" flashinfer/data/csrc && ln -sfn /tmp/fi-3rdparty/3rdparty/cutlass flashinfer/data/cutlass && ln -sfn /tmp/fi-3rdparty/3rdparty/spdlog flashinfer/data/spdlog' ;;
  *) echo "unknown target $what" >&2; exit 2 ;;
esac
timeout 560 python3 scripts/upstream_tests.py prove --target "$what" --checkout "$tree" \
  --prepare "$prepare" --where-note "$note" --out "$out/upstream-$what.json" ${only[@]+"${only[@]}"}
echo "exit $?"
} 2>&1 | tee "$out/upstream-$what.log"
