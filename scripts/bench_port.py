"""Benchmark `patchkit port` against `git apply`, `git apply -3` and `patch --fuzz=2` on real
backports mined from a project's history, side by side in one run.

    python scripts/bench_port.py --repo /work/.mirror/redis+redis/repo \\
        --repo /work/.mirror/numpy+numpy/repo --max-cases 40

A case is a commit C on a release branch whose message says ``(cherry picked from commit X)``:
the diff X^..X (made on main) is ported onto C^ (the release branch just before the backport);
the truth is C's content of every path the diff touches. Cases are kept when C and X touch the
same paths (a backport that dropped or added files is an edited backport, not a port) and the
touched files differ between X^ and C^ (else every tool is trivially right); binary diffs are
skipped. The repositories are read, never written: each tool runs in a fresh directory whose
git directory borrows the repository's objects (alternates) and holds only the touched files.

Score per case and tool: exact (the touched files equal the truth), wrong (the tool reported
success but a file differs) or failed (refused, rejected or conflicted). Time is
``time.perf_counter`` around each tool's run alone; the baselines are processes, patchkit is its
Python API in this process (``--patchkit cli`` runs its command line instead).

Cases where patchkit is wrong or fails while a baseline is exact are written to ``--misses``
(JSON); ``--cases FILE`` re-runs exactly the cases of such a file. The run ends with every
project side by side (exact/wrong/failed per tool) and issue 27's acceptance line: exact % of
all cases, wrong where a baseline is exact, successes with a conflicted or unplaced hunk, and
the placement median/p90 in-process (``--without PROJECT``: the same line without it).

Issue 27's run (12 projects, docs/bench.md has the figures): mine each mirror by the one rule
(every local branch, newest first, 40 per project), then run all cases at once::

    python scripts/bench_port.py --repo /work/.mirror/NVIDIA+cccl/repo --max-cases 40 \\
        --write-cases /tmp/bench27/NVIDIA+cccl.json     # likewise each project (docs/bench.md)
    python scripts/bench_port.py --cases /tmp/bench27/all_cases.json -v \\
        --json /tmp/bench27/all_run.json --without NVIDIA+cccl --without open-mpi+ompi
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_port_cases import (
    BASELINES,
    PATCHKIT_ROOT,
    ROOT,
    TOOLS,
    UNPLACED,
    Case,
    Result,
    Run,
    blob_id,
    git,
    mine,
    run_case,
    run_git_apply,
    score,
    tools,
    why,
)

__all__ = ["Case", "Run", "blob_id", "mine", "run_git_apply", "score", "why"]


# -- the report --------------------------------------------------------------------------------
def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))] if ordered else 0.0


def tally(results: list[Result], tool: str) -> dict[str, float]:
    runs = [r.runs[tool] for r in results if tool in r.runs]
    counts = {s: sum(run.score == s for run in runs) for s in ("exact", "wrong", "failed")}
    secs = [run.seconds for run in runs]
    median = statistics.median(secs) if secs else 0.0
    return counts | {"median": median, "p90": p90(secs)}


def misses(results: list[Result]) -> list[dict]:
    """Cases where patchkit is wrong or failed while a baseline is exact."""
    out = []
    for r in results:
        pk = r.runs.get("patchkit")
        exact = [t for t in BASELINES if t in r.runs and r.runs[t].score == "exact"]
        if pk is not None and pk.score != "exact" and exact:
            out.append(asdict(r.case) | {"name": r.case.name, "patchkit": pk.score,
                                         "patchkit_note": pk.note, "baselines_exact": exact})  # fmt: skip
    return out


def table(results: list[Result], title: str) -> Iterator[str]:
    yield f"{title}: {len(results)} cases"
    yield f"  {'tool':<16}{'exact':>7}{'wrong':>7}{'failed':>8}{'median s':>11}{'p90 s':>9}"
    for tool in TOOLS:
        t = tally(results, tool)
        yield (f"  {tool:<16}{t['exact']:>7}{t['wrong']:>7}{t['failed']:>8}"
               f"{t['median']:>11.3f}{t['p90']:>9.3f}")  # fmt: skip


def placement(results: list[Result]) -> str:
    """patchkit's time in the engine alone (run_patch, in-process), beside the whole port."""
    secs = [r.runs["patchkit"].placement for r in results if "patchkit" in r.runs]
    if not secs or not any(secs):
        return "patchkit placement in-process: not measured (--patchkit cli)"
    median = statistics.median(secs)
    return (f"patchkit placement in-process (run_patch): median {median:.3f} s, p90 "
            f"{p90(secs):.3f} s; <= 0.1 s: {'yes' if median <= 0.1 else 'NO'}")  # fmt: skip


def share(results: list[Result]) -> str:
    """Issue 27's bar: patchkit exact on 90 % of all cases (and of the cases some tool gets)."""
    pk = tally(results, "patchkit")
    reachable = [r for r in results if any(x.score == "exact" for x in r.runs.values())]
    got = sum(r.runs["patchkit"].score == "exact" for r in reachable if "patchkit" in r.runs)
    whole = pk["exact"] / len(results) if results else 0.0
    of_reachable = got / len(reachable) if reachable else 0.0
    return (f"patchkit exact {pk['exact']:.0f}/{len(results)} = {whole:.0%} of all cases "
            f"(>= 90 %: {'yes' if whole >= 0.9 else 'NO'}); {got}/{len(reachable)} = "
            f"{of_reachable:.0%} of the cases some tool gets exact")  # fmt: skip


def ratios(results: list[Result]) -> str:
    pk = tally(results, "patchkit")
    best = max(BASELINES, key=lambda t: (tally(results, t)["exact"], -tally(results, t)["median"]))
    b = tally(results, best)
    exact = f"{pk['exact'] / b['exact']:.2f}x" if b["exact"] else "n/a"
    speed = f"{pk['median'] / b['median']:.1f}x" if b["median"] else "n/a"
    return (f"patchkit vs the best baseline ({best}): exact {pk['exact']}/{b['exact']:.0f} "
            f"= {exact}; median time {speed}")  # fmt: skip


def goals(results: list[Result]) -> str:
    """Issue 11's bar: exact on as many cases as the best baseline, wrong on none where a
    baseline is exact, median time per case at most 0.1 s."""
    pk = tally(results, "patchkit")
    best = max(tally(results, t)["exact"] for t in BASELINES)
    wrong = sum(m["patchkit"] == "wrong" for m in misses(results))
    marks = [f"exact {pk['exact']:.0f} >= {best:.0f}: {'yes' if pk['exact'] >= best else 'NO'}",
             f"wrong where a baseline is exact: {wrong}",
             f"median {pk['median']:.3f} s <= 0.1 s: {'yes' if pk['median'] <= 0.1 else 'NO'}"]  # fmt: skip
    return "goals: " + "; ".join(marks)


def acceptance(results: list[Result], title: str = "all projects") -> str:
    """Issue 27's three bars and the placement time, side by side from one run: exact on >= 90 %
    of all cases, wrong on none where a baseline is exact, no success with a conflicted or
    unplaced hunk; placement median <= 0.1 s in-process."""
    exact = tally(results, "patchkit")["exact"]
    whole = exact / len(results) if results else 0.0
    wrong = sum(m["patchkit"] == "wrong" for m in misses(results))
    flawed = sum(UNPLACED in r.runs["patchkit"].note for r in results if "patchkit" in r.runs)
    secs = [r.runs["patchkit"].placement for r in results if "patchkit" in r.runs]
    median = statistics.median(secs) if secs else 0.0
    marks = [f"exact {exact:.0f}/{len(results)} = {whole:.1%} (>= 90 %: {_yes(whole >= 0.9)})",
             f"wrong where a baseline is exact: {wrong} (0: {_yes(wrong == 0)})",
             f"successes with a conflicted or unplaced hunk: {flawed} (0: {_yes(flawed == 0)})",
             f"placement median {median:.3f} s, p90 {p90(secs):.3f} s "
             f"(<= 0.1 s: {_yes(median <= 0.1)})"]  # fmt: skip
    return f"acceptance, {title}: " + " | ".join(marks)


def _yes(held: bool) -> str:
    return "yes" if held else "NO"


def project_of(result: Result) -> str:
    return Path(result.case.repo).parent.name


def side_by_side(results: list[Result]) -> Iterator[str]:
    """One markdown row per project (and the total): exact/wrong/failed of every tool."""
    yield "| project (cases) | " + " | ".join(TOOLS) + " |"
    yield "|---" * (len(TOOLS) + 1) + "|"
    groups = [("all", results)] + [
        (name, [r for r in results if project_of(r) == name])
        for name in sorted({project_of(r) for r in results})
    ]
    for name, group in groups:
        cells = [_cell(tally(group, tool)) for tool in TOOLS]
        yield f"| {name} ({len(group)}) | " + " | ".join(cells) + " |"


def _cell(t: dict[str, float]) -> str:
    return f"{t['exact']:.0f}/{t['wrong']:.0f}/{t['failed']:.0f}"


def report(results: list[Result]) -> Iterator[str]:
    yield from table(results, "all projects")
    for project in sorted({Path(r.case.repo).parent.name for r in results}):
        mine_ = [r for r in results if Path(r.case.repo).parent.name == project]
        yield from table(mine_, project)
    yield ratios(results)
    yield placement(results)
    yield share(results)
    yield goals(results)
    flawed = [r for r in results if "patchkit" in r.runs and UNPLACED in r.runs["patchkit"].note]
    yield f"patchkit successes with a conflicted or unplaced hunk: {len(flawed)}"
    for r in flawed:
        yield f"  {r.case.name}: {r.runs['patchkit'].note[:120]}"
    edited = [r for r in results if all(x.score != "exact" for x in r.runs.values())]
    yield (f"{len(edited)} cases where no tool is exact (most: a backport edited by hand, "
           "so the truth is not the diff's change)")  # fmt: skip
    for r in results:
        pk = r.runs.get("patchkit")
        if pk is not None and pk.score == "wrong":
            others = ", ".join(f"{t}={x.score}" for t, x in r.runs.items() if t != "patchkit")
            yield f"  patchkit wrong: {r.case.name} [{pk.note}] | {others} | {r.case.subject[:50]}"


def describe(root: Path) -> str:
    commit = git(root, "log", "-1", "--format=%h %s", check=False).strip()
    dirty = (
        " (with uncommitted changes)"
        if git(root, "status", "--porcelain", "--untracked-files=no", check=False).strip()
        else ""
    )
    return f"patchkit from {root} at {commit[:70] or 'an unknown commit'}{dirty}"


# -- the command line --------------------------------------------------------------------------
def load_cases(path: Path) -> list[Case]:
    return [
        Case(c["repo"], c["backport"], c["original"], tuple(c["paths"]), c.get("subject", ""))
        for c in json.loads(path.read_text())
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, action="append", default=[], help="a git directory")
    p.add_argument("--branch", action="append", default=[], help="release branches to mine")
    p.add_argument("--max-cases", type=int, default=40, help="per repository")
    p.add_argument("--cases", type=Path, action="append", default=[],
                   help="run the cases of a --write-cases, --misses or --json file (repeatable)")  # fmt: skip
    p.add_argument("--write-cases", type=Path, help="write the mined cases here and stop")
    p.add_argument("--without", action="append", default=[], metavar="PROJECT",
                   help="also give the acceptance figures without this project (owner+name)")  # fmt: skip
    p.add_argument("--patchkit", choices=("api", "cli"), default="api")
    p.add_argument("--patchkit-root", type=Path, default=ROOT, help="measure this tree's patchkit")
    p.add_argument(
        "--misses", type=Path, default=Path(tempfile.gettempdir(), "bench_port_misses.json")
    )
    p.add_argument("--json", type=Path, help="write every case's runs here")
    p.add_argument("--compare", type=Path, help="a --json file of an earlier run: list changes")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    PATCHKIT_ROOT[0] = args.patchkit_root.resolve()
    cases = gather(args)
    if not cases:
        print("no cases: pass --repo GIT_DIR (a repository with cherry-picked backports)")
        return 2
    if args.write_cases:
        args.write_cases.write_text(json.dumps([asdict(c) for c in cases], indent=1))
        print(f"{len(cases)} cases written to {args.write_cases}")
        return 0
    measured = describe(
        PATCHKIT_ROOT[0]
    )  # before the run: a commit landing during it is not what ran
    results = run_all(cases, args.patchkit, verbose=args.verbose)
    print(measured)
    print("\n".join(report(results)))
    print("\n".join(write_misses(results, args.misses)))
    if args.json:
        rows = [
            asdict(r.case) | {"runs": {t: asdict(x) for t, x in r.runs.items()}} for r in results
        ]
        args.json.write_text(json.dumps(rows, indent=1))
    if args.compare:
        print(f"\npatchkit's score changed since {args.compare}:")
        print("\n".join(changes(json.loads(args.compare.read_text()), results)) or "  none")
    print("\n".join(summary(results, args.without)))
    return 0


def gather(args: argparse.Namespace) -> list[Case]:
    if args.cases:
        return [case for path in args.cases for case in load_cases(path)]
    return [c for repo in args.repo
            for c in mine(repo, branches=args.branch, limit=args.max_cases)]  # fmt: skip


def run_all(cases: list[Case], mode: str, *, verbose: bool) -> list[Result]:
    runners = tools(mode)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_port-") as scratch:
        for case in cases:
            results.append(run_case(case, Path(scratch), runners))
            if verbose:
                line = " ".join(f"{t}={r.score}" for t, r in results[-1].runs.items())
                print(f"{case.name} {line} [{results[-1].runs['patchkit'].note}]", flush=True)
    return results


def write_misses(results: list[Result], path: Path) -> Iterator[str]:
    missed = misses(results)
    path.write_text(json.dumps(missed, indent=1))
    yield (f"\n{len(missed)} cases where patchkit is wrong or failed and a baseline is exact"
           f" (written to {path}):")  # fmt: skip
    for m in missed:
        yield (f"  {m['name']} {m['patchkit']}: {m['patchkit_note']} | exact: "
               f"{', '.join(m['baselines_exact'])} | {m['subject'][:60]}")  # fmt: skip


def summary(results: list[Result], without: list[str]) -> Iterator[str]:
    """The closing lines: every project side by side (exact/wrong/failed per tool), then the
    acceptance figures over all cases and, per --without, over the cases of the other projects."""
    yield "\nexact/wrong/failed per project, side by side:"
    yield from side_by_side(results)
    yield acceptance(results)
    if without:
        rest = [r for r in results if project_of(r) not in without]
        yield acceptance(rest, f"without {', '.join(without)}")


def changes(earlier: list[dict], results: list[Result]) -> list[str]:
    """Cases whose patchkit score differs from an earlier run's (--json rows)."""
    before = {(row["repo"], row["backport"]): row["runs"]["patchkit"]["score"] for row in earlier}
    out = []
    for r in results:
        old, new = before.get((r.case.repo, r.case.backport)), r.runs["patchkit"]
        if old is not None and old != new.score:
            out.append(f"  {r.case.name}: {old} -> {new.score} [{new.note}]")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
