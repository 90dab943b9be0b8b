"""Time `patchkit apply` of the shipped patch sets on the real upstream trees, cold and warm,
against plain `git apply` of the same diffs, in one run; print the figures and the ratios.

    python scripts/bench_apply.py [--repeat 5]

- git apply: `git apply` of the diffs the series makes (`patchkit show` of each patch), one
  process, as a run.sh would do it.
- cold: a new process, an empty rewrite cache: every rewritten file is parsed by libcst.
- warm: a new process after `reset`, the rewrite cache filled by an earlier apply (the first
  rewrite in a process pays for importing libcst, about 0.4 s).
- warm, same process: reset and apply once more in that process: the cache lookups alone.
- no-op: apply on a tree that already has the series (the state says so; nothing is parsed).

Each figure is the median of --repeat runs, in milliseconds, measured around the call alone
(process start and imports excluded for patchkit; included for git apply, which is a process).
Downloads are not timed: the releases are fetched (or found in the cache) first.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, time
from pathlib import Path
from patchkit.ops.apply import apply
from patchkit.ops.context import blobs_for, load_project
from patchkit.workspace.tree import checkout_tree
project = load_project(Path(sys.argv[1]))
entry = project.entry(sys.argv[2])
patches = project.patches(sys.argv[2])
tree = checkout_tree(Path(sys.argv[3]), entry.name)
blobs = blobs_for(entry, tree)
started = time.perf_counter()
report = apply(tree=tree, entry=entry, patches=patches, blobs=blobs)
elapsed = time.perf_counter() - started
again = None
if sys.argv[4:] == ["again"]:  # reset, then apply once more in this process
    from patchkit.ops.reset import reset
    reset(tree=tree)
    started = time.perf_counter()
    apply(tree=tree, entry=entry, patches=patches, blobs=blobs)
    again = (time.perf_counter() - started) * 1000
print(json.dumps({"ms": elapsed * 1000, "again_ms": again, "noop": report.noop}))
"""


def child_apply(target: str, tree: Path, *extra: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), target, str(tree), *extra],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def reset(target: str, tree: Path) -> None:
    from patchkit.ops.reset import reset as do_reset
    from patchkit.workspace.tree import checkout_tree

    do_reset(tree=checkout_tree(tree, target))


def series_diff(target: str, tree: Path) -> bytes:
    from patchkit.ops.apply import upstream_view
    from patchkit.ops.context import blobs_for, load_project
    from patchkit.ops.show import show
    from patchkit.workspace.tree import checkout_tree

    project = load_project(ROOT)
    entry = project.entry(target)
    patches = project.patches(target)
    checkout = checkout_tree(tree, target)
    blobs = blobs_for(entry, checkout)
    diffs = [show(p, patches[:i], upstream_view(checkout), blobs) for i, p in enumerate(patches)]
    return b"".join(diffs)


def time_git_apply(tree: Path, diff_file: Path, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(["git", "apply", str(diff_file)], cwd=tree, check=True)
        times.append((time.perf_counter() - started) * 1000)
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=tree, check=True)
    return times


def bench_target(target: str, repeat: int, work: Path, cache: Path) -> dict[str, float]:
    from patchkit.ops.context import load_project
    from patchkit.upstream.sources import UpstreamRepo, fetch

    tree = fetch(load_project(ROOT).entry(target), into=work / target).path
    diff_file = work / f"{target}.diff"
    diff_file.write_bytes(series_diff(target, tree))
    git_ms = time_git_apply(tree, diff_file, repeat)
    cold, warm, warm_in, noop = [], [], [], []
    for _ in range(repeat):
        shutil.rmtree(cache / "rewrites", ignore_errors=True)
        cold.append(child_apply(target, tree)["ms"])
        noop.append(child_apply(target, tree)["ms"])
        reset(target, tree)
        run = child_apply(target, tree, "again")
        warm.append(run["ms"])
        warm_in.append(run["again_ms"])
        reset(target, tree)
    with UpstreamRepo(target) as repo:
        repo.remove_tree(tree)
    return {
        "git apply": statistics.median(git_ms),
        "cold": statistics.median(cold),
        "warm": statistics.median(warm),
        "warm, same process": statistics.median(warm_in),
        "no-op": statistics.median(noop),
        "files": diff_file.read_bytes().count(b"\ndiff --git ") + 1,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", action="append", help="default: flashinfer and vllm")
    args = parser.parse_args()
    from patchkit.cache import cache_root

    cache = cache_root()
    rows = {}
    with tempfile.TemporaryDirectory(prefix="patchkit-bench-") as tmp:
        for target in args.target or ["flashinfer", "vllm"]:
            rows[target] = bench_target(target, args.repeat, Path(tmp), cache)
    print(f"apply of the shipped series, median of {args.repeat} runs (ms)")
    columns = ("git apply", "cold", "warm", "warm, same process", "no-op")
    print(f"{'target':<12}{'files':>6}" + "".join(f"{c:>20}" for c in columns))
    for target, r in rows.items():
        git = r["git apply"]
        cells = [f"{r[c]:.1f} ({r[c] / git:.1f}x)" for c in columns]
        print(f"{target:<12}{r['files']:>6.0f}" + "".join(f"{c:>20}" for c in cells))
    print("(x: ratio to git apply of the same diffs, measured in this run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
