#!/usr/bin/env bash
# Make what scripts/upstream_tests_gpu.sh TARGET needs on a GPU machine with no network, here
# (with network), in the repository's root: `.carry/upstream-tests/` (the upstream tree as a git
# bundle) and `.whl/` (scripts/upstream_tests_wheels.txt), both ignored by git; the run names
# them in `carry`. Prints their sizes: the device takes at most 64 MiB a call.
#   scripts/upstream_tests_carry.sh vllm                  # the cache's vLLM 0.19.0 (its tests/)
#   FI_CLONE=DIR scripts/upstream_tests_carry.sh flashinfer
#       DIR: a clone of upstream FlashInfer holding the pinned commit (a source release has no
#       tests/): its commit alone goes, as a shallow bundle, with cutlass' and spdlog's headers
#       from the cache's release (its submodules)
set -euo pipefail
target=${1:?usage: scripts/upstream_tests_carry.sh vllm|flashinfer}
root=$(git rev-parse --show-toplevel); cd "$root"
exclude=$(git rev-parse --git-path info/exclude); mkdir -p "$(dirname "$exclude")"
for p in /.whl/ /.whl2/ /.carry/; do grep -qxF "$p" "$exclude" 2>/dev/null || echo "$p" >> "$exclude"; done
cache=${PATCHKIT_CACHE:-$(python3 -c 'from patchkit.cache import Cache; print(Cache.current().root)')}
lock() { python3 -c "from patchkit.project.load import load_project; from pathlib import Path; e = load_project(Path('.')).entry('$target'); print(e.$1)"; }
version=$(lock version); commit=$(lock commit)
fetched() {  # the release in the cache's repository, else how to get it (nothing is moved here)
  git -C "$cache/repos/$target.git" rev-parse -q --verify "v$version^{commit}" >/dev/null ||
    { echo "no $target $version in $cache: run patchkit fetch --target $target first" >&2; exit 3; }
}
fetched
rm -rf .carry/upstream-tests .whl .whl2 && mkdir -p .carry/upstream-tests .whl
case "$target" in
  vllm)
    git -C "$cache/repos/vllm.git" bundle create "$root/.carry/upstream-tests/vllm.bundle" "v$version" ;;
  flashinfer)
    clone=${FI_CLONE:?set FI_CLONE to a clone of upstream FlashInfer}
    tmp=$(mktemp -d); git init -q "$tmp/fi"
    git -C "$tmp/fi" fetch -q --depth 1 "$(cd "$clone" && pwd)" "$(git -C "$clone" rev-parse "$commit^{commit}")"
    git -C "$tmp/fi" update-ref "refs/tags/v$version" FETCH_HEAD
    git -C "$tmp/fi" bundle create "$root/.carry/upstream-tests/flashinfer.bundle" "v$version"
    rm -rf "$tmp"
    git -C "$cache/repos/flashinfer.git" archive "v$version" 3rdparty/cutlass/include \
      3rdparty/cutlass/tools/util/include 3rdparty/spdlog/include | gzip -9 > .carry/upstream-tests/3rdparty.tgz ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
awk -v t="$target" '$1 == "all" || $1 == t { print $2 }' scripts/upstream_tests_wheels.txt |
  xargs python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_31_x86_64 --platform manylinux_2_34_x86_64 \
    --platform manylinux_2_35_x86_64 -d .whl
if [ "$(du -sm .whl | cut -f1)" -gt 40 ]; then  # two install calls, each under the device's limit
  mkdir -p .whl2 && ls -S .whl/*.whl | awk 'NR % 2 == 0' | xargs -I{} mv {} .whl2/
fi
du -sh .carry/upstream-tests .whl .whl2 2>/dev/null
echo "carry: scripts/upstream_tests_gpu.sh install with .whl (then with .whl2 if made), then TARGET with .carry"
