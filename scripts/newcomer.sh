#!/usr/bin/env bash
# A newcomer's day, scripted: a fresh clone, an empty cache, the README's two commands,
# docs/api.md's example, then the lifecycle the README shows, read from the README and run
# literally (apply with an opt-in and --verify, status, rebase both targets, the retire the
# stopped rebase names, continue), and export. No file is edited by hand. Every exit code is checked
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

# docs/api.md's example, literally (its first python block), on the fresh clone: it applies,
# prints status, rebases vLLM onto 0.20.0 (where the opt-in mxfp4 patch's test fails: the lock
# stays, the report names the test) and drops that rebase. Run twice: the second apply is a
# no-op and must still say so.
mkdir -p "$work/api"  # not beside the clone (a directory named patchkit would shadow the package)
python3 - <<'PY' > "$work/api/example.py"
import re
text = open("docs/api.md").read()
print(re.search(r"```python\n(.*?)```", text, re.S).group(1))
PY
step 0 python3 "$work/api/example.py"
step 0 sh -c "python3 '$work/api/example.py' > '$work/api2.out'"
check "docs/api.md's apply loop says something on an applied tree" grep -q "already applied" "$work/api2.out"
check "docs/api.md's example left the project as it was" test -z "$(git status --porcelain)"

# The lifecycle, as the README shows it, literally. Tests that need a GPU or vLLM's runtime
# dependencies are "not run", never failed (exit 0); verification runs stay in the cache.
lifecycle=$(sed -n '/^## The lifecycle/,/^## /p' README.md | sed -n '/^```sh$/,/^```$/p' | grep '^patchkit ')
printf '\nthe README lifecycle:\n%s\n' "$lifecycle"
want_code() {  # the exit code the README's comment on that line promises
  case "$1" in *"# stops"*) echo 8 ;; *) echo 0 ;; esac
}
while IFS= read -r line; do
  cmd=${line%%#*}
  case "$cmd" in *--installed*) continue ;; esac  # needs vLLM installed: not on this machine
  case "$cmd" in *export-pr*) continue ;; esac     # at the end, on the pinned releases
  # shellcheck disable=SC2086
  step "$(want_code "$line")" $cmd
  case "$cmd" in *"rebase --target vllm --onto"*)
    check "the stopped rebase names the retire command the README runs next" \
      grep -rqs "patchkit retire mamba-prefix-spec-buffers --merged-in 0.22.0" "$PATCHKIT_CACHE/rebase" ;;
  esac
done <<< "$lifecycle"
step 0 patchkit status --target vllm          # the cache's tree follows the moved lock

# A rebase changes the lock and patch metadata, and nothing else (no verification.json).
moved=$(git status --porcelain | grep -vE '^ M (upstream\.lock|patchsets/[^/]+/patches/[^/]+\.(toml|patch|py))$')
if [ -n "$moved" ]; then printf 'rebase left files it should not have:\n%s\n' "$moved"; fi
check "rebases changed only the lock and patch metadata" test -z "$moved"
check "the vLLM lock moved to 0.33.0" sh -c "git diff upstream.lock | grep -q '^+.*0\.33\.0'"
check "the retired patch says merged in 0.22.0" sh -c \
  "grep -q '^merged_in = \"0.22.0\"' patchsets/vllm-spark/patches/mamba-prefix-spec-buffers.toml"
step 2 patchkit rebase --target vllm --abort  # nothing to abort: a usage error
git checkout -q -- upstream.lock patchsets  # a person drops the rebase (or commits it)

# one branch per patch on the pin; each PR text names its upstream test's runs without and with
# the change (patchsets/vllm-spark/upstream-tests/results.json), or says it has not run
step 0 patchkit export-pr --target vllm --onto pin --identity "New Comer <newcomer@example.com>"

left=$(git status --porcelain)
if [ -n "$left" ]; then printf '\nworking copy NOT clean:\n%s\n' "$left"; fi
check "working copy clean at the end (git status --porcelain is empty)" test -z "$left"

printf '\n== summary (%ss in all; uptime:%s)\n' "$SECONDS" "$(uptime | sed 's/.*load/ load/')"
printf '%s\n' "${summary[@]}"
printf '%s step(s) wrong\n' "$failures"
[ "$failures" = 0 ]
