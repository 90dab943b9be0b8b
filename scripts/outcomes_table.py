"""Print, as Markdown, what every patch of a target becomes on every later upstream release.

For each release after the lock (or those given), the target's patches run in series order on
that release's blobs, exactly as ``patchkit rebase --onto`` evaluates them (the same engine, no
bisection, nothing written): ``applied`` when its files did not change since the lock,
``carried`` when they did and the patch still went in, or ``upstreamed`` / ``partly-upstreamed``
/ ``conflict`` / ``gone`` / ``ambiguous`` / ``failed``. ``--path PATCH`` adds, for a rewrite,
where each of its edit sites was found release by release (file: qualified name).

    python3 scripts/outcomes_table.py --target vllm --path mxfp4-triton-sm12x
    python3 scripts/outcomes_table.py --target flashinfer --series 0.7

Releases not yet in the cache are fetched from the package index (once, into the shared cache).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.probe import series_at
from patchkit.engine.rewrite.outcome import RewriteRun
from patchkit.engine.rewrite.run import run_rewrites
from patchkit.engine.series import Blobs, touched_paths
from patchkit.errors import PatchkitError
from patchkit.model import PatchKind, PatchMeta, UpstreamStatus
from patchkit.outcome import Outcome
from patchkit.project.load import load_project
from patchkit.upstream.history import History, Point, open_history


@dataclass(frozen=True)
class Cell:
    outcome: str
    sites: tuple[str, ...] = ()  # "path: qualname (present|changed)", rewrites only
    note: str = ""


def evaluate(
    history: History, point: Point, patches: Sequence[PatchMeta], blobs: Blobs
) -> dict[str, Cell]:
    """Every patch at ``point``, in series order, each on the files the earlier ones left (the
    series a rebase runs, :func:`patchkit.engine.probe.series_at`)."""
    repo = history.repo
    commit = history.commit(point)
    old = history.commit(history.start())
    overlay, steps = series_at(history, history.start(), point, patches, blobs)
    cells = {}
    for meta, result in zip(patches, steps, strict=True):
        outcome = result.outcome.value
        paths = sorted({c.path for c in result.changes} | set(_touched(meta)))
        if result.outcome is Outcome.APPLIED and repo.ls_tree(old, paths) != repo.ls_tree(
            commit, paths
        ):
            outcome = Outcome.CARRIED.value
        sites: tuple[str, ...] = ()
        if meta.kind is PatchKind.REWRITE:
            sites = _sites(run_rewrites(meta.file, overlay.read, overlay.lister))
        ok = result.outcome.carried
        note = "" if ok else result.message.splitlines()[0] if result.message else ""
        cells[meta.id] = Cell(outcome, sites, note)
    return cells


def _touched(meta: PatchMeta) -> list[str]:
    try:
        return touched_paths(meta)
    except PatchkitError:
        return []  # a broken patch: run_patch reports it as failed


def _sites(run: RewriteRun) -> tuple[str, ...]:
    found = [
        f"{s.path}: {s.qualname} ({'present' if s.present else 'changed'})"
        for a in run.anchors
        for s in a.sites
    ]
    return tuple(found)


def table(
    versions: Sequence[str], patches: Sequence[PatchMeta], cells: dict[str, dict[str, Cell]]
) -> str:
    ids = [p.id for p in patches]
    lines = ["| release | " + " | ".join(ids) + " |", "|---|" + "---|" * len(ids)]
    for version in versions:
        row = [cells[version][i].outcome for i in ids]
        lines.append(f"| {version} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def path_table(versions: Sequence[str], patch_id: str, cells: dict[str, dict[str, Cell]]) -> str:
    lines = [f"| release | {patch_id} | where its edit sites were found |", "|---|---|---|"]
    for version in versions:
        cell = cells[version][patch_id]
        where = "<br>".join(cell.sites) or (cell.note or "(no site)")
        lines.append(f"| {version} | {cell.outcome} | {where} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--project", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--series", help="only releases whose version starts with this (0.7)")
    parser.add_argument("--releases", nargs="*", help="only these releases")
    parser.add_argument("--path", action="append", default=[], help="a patch to trace site by site")
    args = parser.parse_args(argv)

    project = load_project(args.project)
    entry = project.entry(args.target)
    patches = [p for p in project.listed(args.target) if p.status is not UpstreamStatus.MERGED]
    history = open_history(entry)
    blobs = Blobs([history.repo.path])
    try:
        history.commit(history.start())  # the pinned base: three-way merges read its blobs
        points = history.between(history.start(), history.resolve("latest"))
        if args.series:
            points = [
                p for p in points if (p.label + ".").startswith(args.series.rstrip(".") + ".")
            ]
        if args.releases:
            points = [p for p in points if p.label in args.releases]
        cells: dict[str, dict[str, Cell]] = {}
        started = time.perf_counter()
        for point in points:
            began = time.perf_counter()
            cells[point.label] = evaluate(history, point, patches, blobs)
            print(f"{point.label}: {time.perf_counter() - began:.1f}s", file=sys.stderr)
        versions = [p.label for p in points]
        print(f"{args.target} patches from {entry.version} onto each later release "
              f"({len(versions)} releases, {time.perf_counter() - started:.0f}s):\n")  # fmt: skip
        print(table(versions, patches, cells))
        for patch_id in args.path:
            print()
            print(path_table(versions, patch_id, cells))
    finally:
        blobs.close()
        history.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
