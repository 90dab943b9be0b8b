"""Time ``patchkit rebase`` of a patch set across upstream releases, downloads excluded.

Every release between the locked one and ``--onto`` is fetched into the real cache first (a
release already there is not fetched again); then each rebase runs on a throwaway copy of the
project (``upstream.lock`` and the set), so the real project never changes. A stopped rebase is
aborted after it is timed. Prints, per rebase: wall time, outcome per patch, and the apply
attempts bisection needed (and the points of history it ran the series at).

    python scripts/bench_rebase.py --target vllm --set vllm-spark            # locked → newest
    python scripts/bench_rebase.py --target vllm --set vllm-spark --each     # → every release
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from patchkit.ops.rebase import RebaseReport, abort_rebase, rebase
from patchkit.project.load import load_project
from patchkit.upstream.history import IndexHistory, open_history

ROOT = Path(__file__).resolve().parents[1]


def fetch_all(target: str, onto: str) -> list[str]:
    """Fetch every release after the locked one up to ``onto``; their versions, oldest first."""
    entry = load_project(ROOT).entry(target)
    history = open_history(entry)
    try:
        if not isinstance(history, IndexHistory):
            raise SystemExit(f"{target}: the bench needs an index source")
        points = history.between(history.start(), history.resolve(onto))
        for point in [history.start(), *points]:
            started = time.perf_counter()
            history.commit(point)
            print(f"fetched {target} {point.label} ({time.perf_counter() - started:.1f} s)")
        return [p.label for p in points]
    finally:
        history.close()


def copy_project(dest: Path, sets: Sequence[str]) -> Path:
    shutil.copy2(ROOT / "upstream.lock", dest / "upstream.lock")
    for name in sets:
        shutil.copytree(ROOT / "patchsets" / name, dest / "patchsets" / name)
    return dest


def timed_rebase(target: str, sets: list[str], onto: str) -> tuple[float, RebaseReport]:
    with tempfile.TemporaryDirectory(prefix="patchkit-bench-") as tmp:
        root = copy_project(Path(tmp), sets)
        started = time.perf_counter()
        report = rebase(project=load_project(root, sets), target=target, onto=onto, sets=sets)
        elapsed = time.perf_counter() - started
        if report.stopped:
            abort_rebase(project_root=root, target=target)
    return elapsed, report


def row(onto: str, elapsed: float, report: RebaseReport) -> str:
    outcomes = ", ".join(
        f"{p.id}={p.outcome.value}/{p.step}"
        + (f" absorbed_by={p.absorbed_by}" if p.absorbed_by else "")
        + (f" broken_by={p.broken_by}" if p.broken_by else "")
        for p in report.patches
    )
    return (
        f"{onto:>12}  {elapsed:7.2f} s  attempts={report.probes:<3} points={report.points:<3} "
        f"{outcomes}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="vllm")
    parser.add_argument("--set", dest="sets", action="append", default=None)
    parser.add_argument("--onto", default="latest")
    parser.add_argument("--each", action="store_true", help="rebase onto every release in turn")
    parser.add_argument("--repeat", type=int, default=1, help="runs per rebase (warm caches)")
    parser.add_argument(
        "--cold", action="store_true", help="ignore the rewrite engine's result cache"
    )
    args = parser.parse_args(argv)
    sets = args.sets or ["vllm-spark"]
    if args.cold:
        from patchkit.engine.rewrite import cache

        cache.load = lambda *a: None  # every file's run is computed again
    versions = fetch_all(args.target, args.onto)
    print(f"{len(versions)} release(s) after the lock: {', '.join(versions)}")
    matrix: dict[str, RebaseReport] = {}
    for onto in versions if args.each else versions[-1:]:
        for _ in range(args.repeat):
            elapsed, report = timed_rebase(args.target, sets, onto)
            matrix[onto] = report
            print(row(onto, elapsed, report), flush=True)
    print_matrix(matrix)
    return 0


def print_matrix(matrix: dict[str, RebaseReport]) -> None:
    """Patch by release: the outcome of a rebase from the lock onto each release."""
    if not matrix:
        return
    ids = [p.id for p in next(iter(matrix.values())).patches]
    print("\n| patch | " + " | ".join(matrix) + " |")
    print("|---|" + "---|" * len(matrix))
    for i, patch_id in enumerate(ids):
        cells = [r.patches[i].outcome.value for r in matrix.values()]
        print(f"| {patch_id} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
