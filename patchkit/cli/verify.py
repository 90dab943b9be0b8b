"""The command line of ``patchkit verify``: its arguments and its rendering."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchkit.ops.verify import raise_for, verify_target
from patchkit.verification.env import (
    DEFAULT_TIMEOUT_S,
)
from patchkit.verification.run import Result, VerifyReport


def add_verify_args(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--target", "-t", required=True, help="vllm, flashinfer, ...")
    add("--set", dest="sets", action="append", metavar="NAME", help="patch set (repeatable)")
    add("--project", type=Path, default=Path.cwd(), help="holds upstream.lock (default: .)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--checkout", type=Path, help="a target checkout (default: the cache's)")
    where.add_argument("--installed", action="store_true", help="the installed distribution")
    add("--include", action="append", default=[], metavar="PATCH", help="add an opt-in patch")
    add("--only", action="append", default=[], metavar="PATCH", help="verify only this patch")
    add("--python", default=sys.executable, metavar="PATH", help="interpreter for the tests")
    add("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S", help="per patch run")
    add("--strict", action="store_true", help="a patch whose tests could not run fails too")
    add("--no-record", action="store_true", help="do not add to patchsets/<set>/verification.json")
    add("--json", action="store_true", help="machine-readable output")


def verify_cmd(args: argparse.Namespace) -> int:
    from patchkit.cli.args import where_of
    from patchkit.ops.context import load_project

    report = verify_target(
        project=load_project(args.project, args.sets),
        target=args.target,
        where=where_of(args),
        include=args.include,
        only=args.only,
        python=args.python,
        record=not args.no_record,
        timeout_s=args.timeout,
    )
    render(report, as_json=args.json)
    raise_for(report, strict=args.strict)
    return 0


_STYLE = {Result.PASSED: "green", Result.FAILED: "red", Result.NOT_RUN: "yellow"}


def render(report: VerifyReport, *, as_json: bool = False) -> None:
    from rich.table import Table

    from patchkit.cli.render import console, print_json

    if as_json:
        print_json(report.to_json())
        return
    table = Table(title=f"verify on {report.environment.describe()}", title_justify="left")
    for column in ("patch", "result", "tests", "why"):
        table.add_column(column)
    for v in report.verdicts:
        tests = "\n".join(f"{o.node} ({o.where})" for o in v.tests) or "-"
        table.add_row(v.patch_id, f"[{_STYLE[v.result]}]{v.result.value}[/]", tests, v.reason)
    console.print(table)
    for path in report.written:
        console.print(f"recorded in {path}")
