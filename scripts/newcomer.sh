#!/usr/bin/env bash
# A newcomer's day, scripted: a fresh clone, an empty cache, the README's two commands, then the
# lifecycle the README shows (apply with an opt-in and --verify, status, rebase both targets to
# their newest release, abort, continue, export). Every exit code is checked against the one the
# README documents for that step, and the working copy must be clean at the end.
#
#   scripts/newcomer.sh [SOURCE]    SOURCE: a repository path or URL (default: this checkout)
#   NEWCOMER_SKIP_TESTS=1           skip the README's test command (the whole suite)
set -u
src=${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
work=$(mktemp -d -t patchkit-newcomer.XXXXXX)
export PATCHKIT_CACHE="$work/cache"
failures=0

documented() {  # the README's exit-code table
  case $1 in 0|2|3|4|5|6|7|8|130) return 0 ;; *) return 1 ;; esac
}

step() {  # step "allowed codes" command...: run, time, and check the exit code
  local allowed=$1; shift
  local start=$SECONDS
  printf '\n== %s\n' "$*"
  "$@"
  local rc=$?
  local verdict=ok
  if ! documented "$rc"; then verdict="UNDOCUMENTED exit code"; fi
  if [[ " $allowed " != *" $rc "* ]]; then verdict="unexpected (wanted $allowed)"; fi
  printf -- '-- exit %s in %ss: %s\n' "$rc" "$((SECONDS - start))" "$verdict"
  [ "$verdict" = ok ] || failures=$((failures + 1))
  LAST=$rc
}

git clone -q "$src" "$work/patchkit" && cd "$work/patchkit" || exit 3
python3 -m venv "$work/venv" && . "$work/venv/bin/activate" || exit 3
echo "fresh clone in $work/patchkit, cache $PATCHKIT_CACHE (empty), venv $work/venv"

# The README's first command: set up and run the main job on a real example.
step "0" sh -c "python3 -m pip install -q -e . && patchkit apply --target flashinfer && patchkit apply --target vllm"
# The README's second command: the tests.
if [ -z "${NEWCOMER_SKIP_TESTS:-}" ]; then
  step "0" sh -c "python3 -m pip install -q -e '.[dev]' && python3 -m pytest -q -x -p no:cacheprovider"
fi

# The lifecycle. Tests that need a GPU or vLLM's runtime dependencies are "not run", never failed.
step "0" patchkit apply --target vllm --include mxfp4-triton-sm12x --verify
step "0" patchkit status --target vllm
step "0" patchkit status --target flashinfer --json

step "0 8" patchkit rebase --target flashinfer --onto latest --no-verify
fi_rebase=$LAST
step "0 8" patchkit rebase --target vllm --onto latest --no-verify
vllm_rebase=$LAST

# A stopped rebase is aborted; with none in progress, abort and continue are usage errors (2).
if [ "$vllm_rebase" = 8 ]; then
  step "0" patchkit rebase --target vllm --abort
else
  step "2" patchkit rebase --target vllm --abort
fi
step "2" patchkit rebase --target vllm --continue
[ "$fi_rebase" = 8 ] && step "0" patchkit rebase --target flashinfer --abort
# The cache tree stays usable after a stopped and aborted rebase.
step "0" patchkit status --target vllm

# A rebase that moved a lock changes the lock and patch metadata, and nothing else.
moved=$(git status --porcelain | grep -vE '^ M (upstream\.lock|patchsets/[^/]+/patches/[^/]+\.(toml|patch|py))$')
if [ -n "$moved" ]; then
  printf 'rebase left files it should not have:\n%s\n' "$moved"; failures=$((failures + 1))
fi
git checkout -q -- upstream.lock patchsets  # back to the pinned release for export

step "0" patchkit export-pr --target vllm --identity "New Comer <newcomer@example.com>"

left=$(git status --porcelain)
if [ -n "$left" ]; then
  printf '\nworking copy NOT clean:\n%s\n' "$left"; failures=$((failures + 1))
else
  printf '\nworking copy clean (git status --porcelain is empty)\n'
fi
printf '%s step(s) wrong\n' "$failures"
[ "$failures" = 0 ]
