#!/usr/bin/env bash
# Export the shipped patches twice, in two different environments (HOME, git identity and
# config, time zone, locale, patchkit cache -- so the pinned formatters are installed afresh --,
# working directory and checkout paths), and compare the commit ids: they must be equal.
#
#   FI_CHECKOUT=<a clone of upstream FlashInfer holding 70b142b75b46> scripts/export_twice.sh
#
# vLLM is exported onto the pinned release as patchkit's cache holds it (VLLM_CHECKOUT, default
# ~/.cache/patchkit/repos/vllm.git). mamba-prefix-spec-buffers is merged upstream, so export-pr
# refuses it; it is exported here from a copy of the project whose [upstream] state says none,
# to show its commit id too; and upstream's newest releases already have the GQA-16 and MXFP4
# changes, so the check against them is off here (--check-against none). Prints one line per patch and exits 1 if any id differs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fi_src=${FI_CHECKOUT:?set FI_CHECKOUT to a clone of upstream FlashInfer}
vllm_src=${VLLM_CHECKOUT:-$HOME/.cache/patchkit/repos/vllm.git}
work=$(mktemp -d /tmp/patchkit-export-twice.XXXXXX)
mkdir -p "$work/proj" && cp -r "$repo/upstream.lock" "$repo/patchsets" "$work/proj/"
sed -i 's/^state = "merged"/state = "none"/' \
  "$work/proj/patchsets/vllm-spark/patches/mamba-prefix-spec-buffers.toml"
who="Ada Lovelace <ada@example.com>"  # the same person, exporting on two machines
vllm_ids="mamba-prefix-spec-buffers warmup-graph-capturing mamba-ssu-blackwell-sm12x mxfp4-triton-sm12x"

ids() {  # $1: label -> "<patch> <commit>" lines
  local dir=$work/$1
  git clone -q --no-checkout "$fi_src" "$dir/fi"
  git clone -q --no-checkout "$vllm_src" "$dir/vllm"
  cd "$dir"
  python3 -m patchkit export-pr decode-gqa-group-size-16 --project "$work/proj" \
    --checkout "$dir/fi" --onto pin --identity "$who" --no-test-run --check-against none --json > "$dir/fi.json"
  python3 -m patchkit export-pr $vllm_ids --project "$work/proj" --checkout "$dir/vllm" \
    --onto pin --identity "$who" --no-test-run --check-against none --json > "$dir/vllm.json"
  python3 -c 'import json, sys
for f in sys.argv[1:]:
    for e in json.load(open(f))["exports"]:
        print(e["patch_id"], e["commit"])' "$dir/fi.json" "$dir/vllm.json"
}

a=$(ids a)
home_b=$work/home-b && mkdir -p "$home_b"
printf '[user]\n\tname = Someone Else\n\temail = else@example.org\n[core]\n\tautocrlf = true\n' \
  > "$home_b/.gitconfig"
b=$(env -i PATH="$PATH" HOME="$home_b" TZ=Pacific/Chatham LANG=C.UTF-8 LC_ALL=C.UTF-8 \
  USER=someone PATCHKIT_CACHE="$work/cache-b" PYTHONPATH="$repo" \
  bash -c "$(declare -f ids); work=$work; fi_src=$fi_src; vllm_src=$vllm_src; vllm_ids='$vllm_ids'; ids b")
status=0
while read -r patch commit_a; do
  commit_b=$(awk -v p="$patch" '$1 == p {print $2}' <<<"$b")
  same=$([ "$commit_a" = "$commit_b" ] && echo equal || { status=1; echo DIFFERENT; })
  echo "$patch $commit_a $commit_b $same"
done <<<"$a"
exit $status
