"""``patchkit upstream-check`` on the command line: which patches to check, and the report.

Exit codes: 0 checked (whatever was found); 2 ``gh`` missing or not logged in, or a bad
argument; 3 a ``gh`` call failed (network, rate limit, unknown repository)."""

from __future__ import annotations

import argparse
from pathlib import Path

from patchkit.ops.upstream_check import UpstreamCheckReport


def add_upstream_check_args(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("patches", nargs="*", metavar="PATCH", help="patch ids (default: all of --target/--set)")
    add("--target", "-t", help="vllm, flashinfer, ... (default: every target)")
    add("--set", dest="sets", action="append", metavar="NAME", help="patch set (repeatable)")
    add("--project", type=Path, default=Path("."), help="holds upstream.lock (default: .)")
    add("--dry-run", action="store_true", help="report what was found; write no metadata")
    add("--json", action="store_true", help="machine-readable output")


def report_lines(report: UpstreamCheckReport) -> list[str]:
    lines = []
    for c in report.checks:
        after = f"{c.after.state.value}" + (f" {c.after.pr}" if c.after.pr else "")
        change = "written" if c.written else "unchanged"
        lines.append(f"{c.patch_id} ({c.repository}): {after} [{change}]")
        for f in c.found:
            lines.append(f"  #{f.number} {f.state.value}: {f.title} ({'; '.join(f.evidence)})")
    return lines


def upstream_check_cmd(args: argparse.Namespace) -> int:
    from patchkit.cli.render import console, print_json
    from patchkit.ops.context import load_project
    from patchkit.ops.upstream_check import upstream_check
    from patchkit.upstream.github import Gh

    project = load_project(args.project, args.sets)
    gh = Gh.find()
    report = upstream_check(
        project=project, gh=gh, target=args.target, patch_ids=args.patches,
        write=not args.dry_run,
    )  # fmt: skip
    if args.json:
        print_json(report.to_json())
        return 0
    for line in report_lines(report):
        console.print(line, soft_wrap=True, markup=False, highlight=False)
    return 0
