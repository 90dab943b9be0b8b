"""``patchkit watch`` on the command line: for a scheduled job in the patch repository.

Exit codes: 0 up to date, or the branch holds the newest version with every patch absorbed or
carried (or a branch a person edited was left alone, said on stderr); 8 a patch broke there (it
is kept pending on the branch, the report and the issue say where); 2, 3 as everywhere."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from patchkit.cli.options import add_json, add_project, add_python, add_target, project_of
from patchkit.cli.render import console, err_console, print_json
from patchkit.ops.watch import Options, WatchResult, watch
from patchkit.upstream.github import Gh
from patchkit.watch.newer import LATEST
from patchkit.watch.report import Fate

BROKE_EXIT = 8  # the rebase exit code: a patch needs a person


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add_target(parser)
    add_project(parser, help="the patch repository (default: .)")
    add("--once", action="store_true", help="one run, then exit (for a scheduled CI job)")
    add("--interval", type=float, default=3600.0, metavar="S",
        help="without --once: seconds between runs (default 3600)")  # fmt: skip
    add("--onto", default=LATEST, metavar="latest|REF",
        help="the newest release (default), a tag, or a git source's branch (its head)")  # fmt: skip
    add("--report", type=Path, metavar="DIR", help="write report.md/.html/.json and matrix.html")
    add("--branch", metavar="NAME", help="the branch (default: watch/<target>-<version>)")
    add("--push", metavar="REMOTE", help="push the branch to this remote of the patch repository")
    add("--open-pr", action="store_true",
        help="open or update a pull request per upstream version, and an issue when a patch "
        "broke (GitHub CLI)")  # fmt: skip
    add("--no-verify", action="store_true", help="do not run the carried patches' tests")
    add("--ray", metavar="ADDRESS", help="run those tests as Ray tasks there (default: locally)")
    add_python(parser, help="interpreter for those tests")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    options = Options(
        onto=args.onto, branch=args.branch, report_dir=args.report, remote=args.push,
        open_pr=args.open_pr, verify=not args.no_verify, python=args.python, ray=args.ray,
    )  # fmt: skip
    gh = Gh.find("watch --open-pr") if args.open_pr else None
    while True:
        result = watch(project=project_of(args), target=args.target,
                       options=options, gh=gh)  # fmt: skip
        code = _show(args, result)
        if args.once:
            return code
        time.sleep(args.interval)


def _show(args: argparse.Namespace, result: WatchResult) -> int:
    summary = result.summary
    if args.json:
        print_json(_json(result))
    elif summary is None:
        console.print(f"{result.target}: up to date ({result.lock_version} is the newest)")
    else:
        console.print(summary.title, markup=False, highlight=False)
        for p in summary.patches:
            where = f" ({p.release})" if p.release else ""
            tests = f" — tests: {p.verification}" if p.verification else ""
            console.print(f"  {p.id}: {p.fate.value}{where}{tests}", markup=False, highlight=False)
        console.print(f"branch {summary.branch}: {summary.branch_state}", markup=False)
        for line in _where(result):
            console.print(line, markup=False, highlight=False)
    if summary is not None and summary.branch_state.startswith("left alone"):
        err_console.print(f"[yellow]warning:[/] branch {summary.branch} was {summary.branch_state}")
    return BROKE_EXIT if summary is not None and summary.having(Fate.BROKE) else 0


def _where(result: WatchResult) -> list[str]:
    lines = [f"report: {result.report}"] if result.report else []
    if result.pushed:
        lines.append("pushed")
    return lines + [f"{p.kind} {p.action.value}: {p.url}" for p in result.published]


def _json(result: WatchResult) -> dict[str, object]:
    from patchkit.watch.report import to_json

    return {
        "target": result.target,
        "lock_version": result.lock_version,
        "up_to_date": result.up_to_date,
        "summary": to_json(result.summary) if result.summary else None,
        "commit": result.commit,
        "report": str(result.report) if result.report else None,
        "pushed": result.pushed,
        "published": [
            {"kind": p.kind, "action": p.action.value, "url": p.url} for p in result.published
        ],
    }
