"""``patchkit import`` on the command line: arguments, the report (a table, or JSON), and the
exit code."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from patchkit.cli.options import add_json, add_project, add_target, project_of
from patchkit.cli.render import console, outcome_style, print_json, table
from patchkit.errors import ImportRefused, PatchFailed
from patchkit.ops.import_ import ImportedPatch, ImportReport, import_patches

if TYPE_CHECKING:
    from rich.table import Table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a mod directory (run.sh), replace script, diff, quilt directory, format-patch "
        "mbox or directory, or DIR@A..B (a commit range of a git checkout)",
    )
    add_target(parser)
    parser.add_argument("--into", required=True, metavar="SET", help="patch set (made if new)")
    parser.add_argument("--base", metavar="REF", help="the release or commit the patches are for")
    parser.add_argument(
        "--max-fetch",
        type=int,
        default=2,
        metavar="N",
        help="fetch at most N more releases to find a base (default 2)",
    )
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument(
        "--as-diff",
        action="store_true",
        help="write replace scripts as diffs (by default one whose every text sits once in one "
        "class or function becomes a rewrite anchored by it, which survives drift)",
    )
    shape.add_argument("--as-rewrite", action="store_true", help=argparse.SUPPRESS)  # the default
    parser.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    add_project(parser, help="the patch repository")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    report = import_patches(
        project=project_of(args),
        target=args.target,
        sources=args.sources,
        into=args.into,
        base=args.base,
        max_fetch=args.max_fetch,
        as_rewrite=not args.as_diff,
        dry_run=args.dry_run,
    )
    if args.json:
        print_json(_json(report))
    else:
        console.print(_table(report))
        for line in _details(report):
            console.print(line, markup=False, soft_wrap=True)
    return _exit(report)


def sources(report: ImportReport) -> list[dict[str, Any]]:
    """Each source given, with its patches' ids and the steps it made that are no patch."""
    found: dict[str, dict[str, Any]] = {}
    for p in report.patches:
        entry = found.setdefault(
            p.source, {"source": p.source, "patches": [], "not_translated": []}
        )
        if not p.refused:
            entry["patches"].append(p.name)
        for step in p.untranslated:
            if step not in entry["not_translated"]:
                entry["not_translated"].append(step)
    return list(found.values())


def _json(report: ImportReport) -> dict[str, Any]:
    return {
        "sources": sources(report),
        "target": report.target,
        "lock": report.lock,
        "set": report.set_name,
        "fetched": list(report.fetched),
        "patches": [
            {
                "id": p.name,
                "written": p.written,
                "source": p.source,
                "form": p.form,
                "kind": p.kind,
                "base": p.base,
                "base_how": p.base_how,
                "outcome": p.shown,
                "step": p.step.value,
                "files": list(p.files),
                "message": p.message,
                "untranslated": list(p.untranslated),
            }
            for p in report.patches
        ],
    }


def _table(report: ImportReport) -> Table | str:
    title = f"import into {report.set_name} ({report.set_root}) — {report.target} at {report.lock}"
    rows = [
        (
            p.name + ("" if p.written else " (not written)"),
            p.form,
            p.kind if p.written else "—",
            p.base or "—",
            f"[{outcome_style(p.shown)}]{p.shown}[/]",
            "\n".join(p.files),
        )
        for p in report.patches
    ]
    columns = ("patch", "form", "kind", "base", "outcome at the lock", "files")
    return table(title, columns, rows)


def _details(report: ImportReport) -> list[str]:
    """Per source, what it held: its patches (each with how its base was found) and, once, the
    steps not translated; one count line a source, so nothing it changes goes unsaid."""
    lines = []
    for source in sources(report):
        refused = len(source["not_translated"])
        lines.append(
            f"{source['source']}: {len(source['patches'])} patch(es), {refused} step(s) not "
            "translated"
        )
        for p in (p for p in report.patches if p.source == source["source"]):
            lines.append(f"  {p.name}" + (f": base {p.base_how}" if p.base_how else ""))
            if p.message:
                lines.append(f"    {p.message}")
        lines += [f"  not translated: {u}" for u in source["not_translated"]]
    if report.fetched:
        lines.append(f"fetched to find bases: {', '.join(report.fetched)}")
    return lines


def _exit(report: ImportReport) -> int:
    refused = [p for p in report.patches if p.refused]
    if refused:
        raise ImportRefused(
            f"{len(refused)} source(s) not imported: " + "; ".join(p.message for p in refused),
            hint="see the report above; the other sources were imported",
        )
    if not report.ok:
        raise PatchFailed(_stuck(report), hint=_stuck_hint(report))
    return 0


def _stuck(report: ImportReport) -> str:
    """Which patches do not apply at the lock, and which of them are kept (pending) or not:
    a patch with no base in any release and no place at the lock is not written at all."""
    stuck = [p for p in report.patches if not _at_lock(p)]
    kept = [f"{p.name} ({p.shown})" for p in stuck if p.written]
    lost = [f"{p.name} ({p.shown})" for p in stuck if not p.written]
    would = report.dry_run
    said = []
    if kept:
        said.append(f"{', '.join(kept)} {'would be' if would else 'are'} kept pending")
    if lost:
        verb = "would not be" if would else "are not"
        said.append(f"{', '.join(lost)} {verb} written (no release holds a base for them)")
    return "imported, but not applying at the lock: " + "; ".join(said)


def _stuck_hint(report: ImportReport) -> str:
    if any(not p.written for p in report.patches if not _at_lock(p)):
        return (
            "give the release the unwritten ones were made for (`--base REF`, or more "
            "`--max-fetch`); fix the pending ones at the lock, then `patchkit record --patch ID`"
        )
    return "fix them at the lock by hand, then `patchkit record --patch ID`"


def _at_lock(patch: ImportedPatch) -> bool:
    """An imported patch that applies at the lock."""
    return patch.outcome is not None and patch.outcome.ok
