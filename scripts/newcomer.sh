#!/usr/bin/env bash
# A newcomer's day, scripted: a fresh clone, an empty cache, the README's two commands, then the
# lifecycle the README shows (apply with an opt-in and --verify, status, rebase both targets to
# their newest release, abort, continue after a person's fix, export). Every exit code is checked
# against the one the README documents for that step (its table is read from the README), and
# the working copy must be clean at the end. A summary of every step, with its time, ends it.
#
#   scripts/newcomer.sh [SOURCE]    SOURCE: a repository path or URL (default: this checkout)
#   NEWCOMER_SKIP_TESTS=1           skip the README's test command (the whole suite)
set -u
src=${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
work=$(mktemp -d -t patchkit-newcomer.XXXXXX)
export PATCHKIT_CACHE="$work/cache"
failures=0

documented() {  # the README's exit-code table, read from the clone's README
  [[ " $DOCUMENTED " == *" $1 "* ]]
}

summary=()
step() {  # step WANTED command...: run, time, and check the exit code is the documented one
  local wanted=$1; shift
  local start=$SECONDS
  printf '\n== %s\n' "$*"
  "$@"
  local rc=$?
  local verdict=ok
  if [ "$rc" = 70 ]; then verdict="a BUG in patchkit (exit 70)"
  elif ! documented "$rc"; then verdict="UNDOCUMENTED exit code"
  elif [ "$rc" != "$wanted" ]; then verdict="unexpected (the README says $wanted)"; fi
  printf -- '-- exit %s in %ss: %s\n' "$rc" "$((SECONDS - start))" "$verdict"
  summary+=("$(printf '%4ss  exit %-3s (want %-3s) %-4s %s' "$((SECONDS - start))" "$rc" "$wanted" \
    "$([ "$verdict" = ok ] && echo ok || echo FAIL)" "$*")")
  [ "$verdict" = ok ] || failures=$((failures + 1))
  LAST=$rc
}

check() {  # check WHAT CONDITION...: a check that is not an exit code
  local what=$1; shift
  if "$@"; then summary+=("            ok    $what"); else
    summary+=("            FAIL  $what"); failures=$((failures + 1)); fi
}

git clone -q "$src" "$work/patchkit" && cd "$work/patchkit" || exit 3
DOCUMENTED=$(python3 - <<'PY'
import re
line = next(l for l in open("README.md") if l.startswith("Exit codes"))
print(" ".join(re.findall(r"(?:: |; )(\d+) ", line)))
PY
)
echo "the README documents exit codes: $DOCUMENTED (70 is a bug in patchkit: never wanted)"
python3 -m venv "$work/venv" && . "$work/venv/bin/activate" || exit 3
echo "fresh clone in $work/patchkit, cache $PATCHKIT_CACHE (empty), venv $work/venv"

# The README's first command: set up and run the main job on a real example.
step 0 sh -c "python3 -m pip install -q -e . && patchkit apply --target flashinfer && patchkit apply --target vllm"
# The README's second command: the tests.
if [ -z "${NEWCOMER_SKIP_TESTS:-}" ]; then
  step 0 sh -c "scripts/ci_browser.sh && python3 -m pip install -q -e '.[dev]' && python3 -m pytest -q"
fi

# The lifecycle, as the README shows it. Tests that need a GPU or vLLM's runtime dependencies
# are "not run", never failed (exit 0); verification runs stay in the cache.
step 0 patchkit apply --target vllm --include mxfp4-triton-sm12x --verify
step 0 patchkit status --target vllm
step 0 sh -c "patchkit status --target flashinfer --json > '$work/status.json'"
check "status --json is pure JSON" python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$work/status.json"

# Both targets to their newest release. FlashInfer's only patch was upstreamed (0.7.1): the lock
# moves. vLLM's mamba-prefix-spec-buffers no longer recognises 0.33.0's code: the rebase stops.
step 0 patchkit rebase --target flashinfer --onto latest
step 8 patchkit rebase --target vllm --onto latest
step 0 patchkit status --target vllm          # a stopped rebase leaves the cache tree usable
step 0 patchkit rebase --target vllm --abort
step 2 patchkit rebase --target vllm --abort  # nothing to abort: a usage error
step 2 patchkit rebase --target vllm --continue
step 0 patchkit apply --target vllm           # and so does an aborted one

# Again, and this time a person fixes it. Continuing without a fix stops again.
step 8 sh -c "patchkit rebase --target vllm --onto latest --json > '$work/rebase.json'"
step 8 patchkit rebase --target vllm --continue
# The conflict report says: "upstream absorbed the change in <release>, then changed that code
# again ...: if the fix is still there, retire the patch (status = \"merged\")". 0.33.0 no longer
# has the per-request block-index buffers the patch sliced, so the person retires it, in its
# metadata, with the release the report names.
fixed=$(python3 - "$work/rebase.json" <<'PY'
import json, pathlib, re, sys
report = json.load(open(sys.argv[1]))
for p in report["patches"]:
    if p["outcome"] == "conflict" and p.get("absorbed_by"):
        [meta] = pathlib.Path("patchsets").glob(f"*/patches/{p['id']}.toml")
        text = re.sub(r'(?m)^status = ".*"$', 'status = "merged"', meta.read_text())
        text = re.sub(r'(?m)^merged_in = ".*"$', f'merged_in = "{p["absorbed_by"]}"', text)
        meta.write_text(text)
        print(meta)
PY
)
printf '\n== a person retires what upstream absorbed: %s\n' "${fixed:-nothing to fix}"
git --no-pager diff --stat
check "the report named a patch to retire" test -n "$fixed"
step 0 patchkit rebase --target vllm --continue   # verifies the carried patches on 0.33.0
step 0 patchkit status --target vllm

# A rebase changes the lock and patch metadata, and nothing else (no verification.json).
moved=$(git status --porcelain | grep -vE '^ M (upstream\.lock|patchsets/[^/]+/patches/[^/]+\.(toml|patch|py))$')
if [ -n "$moved" ]; then printf 'rebase left files it should not have:\n%s\n' "$moved"; fi
check "rebases changed only the lock and patch metadata" test -z "$moved"
check "the vLLM lock moved" sh -c "git diff upstream.lock | grep -q '^+.*0\.33\.0'"
git checkout -q -- upstream.lock patchsets  # back to the pinned releases for the export

step 0 patchkit export-pr --target vllm --identity "New Comer <newcomer@example.com>"

left=$(git status --porcelain)
if [ -n "$left" ]; then printf '\nworking copy NOT clean:\n%s\n' "$left"; fi
check "working copy clean at the end (git status --porcelain is empty)" test -z "$left"

printf '\n== summary (%ss in all; uptime:%s)\n' "$SECONDS" "$(uptime | sed 's/.*load/ load/')"
printf '%s\n' "${summary[@]}"
printf '%s step(s) wrong\n' "$failures"
[ "$failures" = 0 ]
