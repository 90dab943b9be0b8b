"""``patchkit upstream-check`` on the command line: which patches to check, and the report.

Exit codes: 0 checked (whatever was found); 2 ``gh`` missing or not logged in, or a bad
argument; 3 a ``gh`` call failed (network, rate limit, unknown repository)."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_json, add_project, add_sets, add_target, project_of
from patchkit.cli.render import console, print_json
from patchkit.ops.upstream_check import UpstreamCheckReport, upstream_check
from patchkit.upstream.github import Gh


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("patches", nargs="*", metavar="PATCH", help="patch ids (default: all of --target/--set)")
    add_target(parser, required=False, help="vllm, flashinfer, ... (default: every target)")
    add_sets(parser, help="patch set (repeatable)")
    add_project(parser, help="holds upstream.lock (default: .)")
    add("--dry-run", action="store_true", help="report what was found; write no metadata")
    add_json(parser)


def report_lines(report: UpstreamCheckReport) -> list[str]:
    lines = []
    for c in report.checks:
        after = f"{c.after.state.value}" + (f" {c.after.pr}" if c.after.pr else "")
        change = "written" if c.written else "unchanged"
        lines.append(f"{c.patch_id} ({c.repository}): {after} [{change}]")
        for f in c.found:
            lines.append(f"  #{f.number} {f.state.value}: {f.title} ({'; '.join(f.evidence)})")
    return lines


def run(args: argparse.Namespace) -> int:
    project = project_of(args)
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
