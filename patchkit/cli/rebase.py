"""``patchkit rebase`` on the command line: parse, rebase (or continue, abort), render, and
verify the patches the rebase changed on a fresh tree of the new upstream."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from rich.table import Table

from patchkit.cli.explain import placement_json, placement_line
from patchkit.cli.options import (
    add_explain,
    add_json,
    add_project,
    add_python,
    add_sets,
    add_target,
    project_of,
)
from patchkit.cli.render import console, err_console, print_json
from patchkit.errors import ConfigError
from patchkit.ops.rebase import (
    abort_rebase,
    continue_rebase,
    pinned_stop,
    rebase,
    rebase_stop,
    rebase_warning,
    rebase_with_pins,
    said_pin_drift,
)
from patchkit.project.load import Project
from patchkit.rebasing.report import RebaseReport

_Done = TypeVar("_Done")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target(parser)
    add_sets(parser, help="rebase only this patch set's patches (repeatable; default: every set)")
    add_project(parser, help="default: current dir")
    parser.add_argument("--onto", help="release version (or `latest`), tag or commit")
    parser.add_argument(
        "--allow-pending",
        action="store_true",
        help="move the lock even if patches stop or their tests fail on the new release; "
        "record the stopped ones as pending in their metadata (with --continue too)",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="record the fixes made in the worktree of a stopped rebase, then finish",
    )
    what.add_argument("--abort", action="store_true", help="drop a stopped rebase")
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="move the lock without running the tests of the patches the rebase changed "
        "(by default they must pass on the new release first)",
    )
    add_python(parser, help="interpreter for those tests")
    add_json(parser)
    parser.add_argument(
        "--with-pins",
        action="store_true",
        help="also rebase the targets the new release pins (vLLM's FlashInfer) onto the pinned "
        "versions, all or nothing",
    )
    add_explain(parser)


def run(args: argparse.Namespace) -> int:
    project = project_of(args)
    root = project.root
    if args.abort:
        where = abort_rebase(project_root=root, target=args.target)
        console.print(f"dropped the rebase of {args.target} ({where}); the project is unchanged")
        return 0
    if args.resume:
        pending = True if args.allow_pending else None
        report = continue_rebase(project_root=root, target=args.target, allow_pending=pending)
    elif not args.onto:
        raise ConfigError(
            f"say where to rebase {args.target}: --onto is missing",
            hint=f"`patchkit rebase --target {args.target} --onto VERSION|TAG|COMMIT` (or "
            "`latest`); `--continue` or `--abort` for a stopped rebase",
        )
    elif args.with_pins:
        return _with_pins(args, project)
    else:
        report = _start(rebase, args, project)
    return _finish(args, report)


def _start(how: Callable[..., _Done], args: argparse.Namespace, project: Project) -> _Done:
    """A new rebase (``ops.rebase.rebase``, or ``rebase_with_pins``) as the arguments ask."""
    return how(
        project=project,
        target=args.target,
        onto=args.onto,
        sets=args.sets,
        allow_pending=args.allow_pending,
        explain=args.explain,
        verify=not args.no_verify,
        python=args.python,
    )


def _with_pins(args: argparse.Namespace, project: Project) -> int:
    """Rebase the target and the targets it pins as one transaction."""
    done = _start(rebase_with_pins, args, project)
    stop = pinned_stop(done, target=args.target, onto=args.onto)
    if stop is not None:
        for report in done.reports:
            _show(args, report)
        raise stop
    for report in done.reports:
        _finish(args, report)
    return 0


def _finish(args: argparse.Namespace, report: RebaseReport) -> int:
    _show(args, report)
    _show_proof(args, report)
    warning = rebase_warning(report)
    if warning:
        err_console.print(
            f"[yellow]warning:[/] {warning}", soft_wrap=True, markup=True, highlight=False
        )
    if report.lock_moved:
        said_pin_drift(args.project.resolve())
    stop = rebase_stop(report)
    if stop is not None:
        raise stop
    return 0


def _show_proof(args: argparse.Namespace, report: RebaseReport) -> None:
    proof = report.proof
    if proof is None:
        return
    if proof.report is not None and not args.json:
        from patchkit.cli.verify import render

        render(proof.report)
    if proof.unverified:
        err_console.print(
            f"[yellow]warning:[/] the carried patches ({', '.join(proof.changed)}) were NOT "
            "verified: " + proof.unverified,
            soft_wrap=True,
        )


def _show(args: argparse.Namespace, report: RebaseReport) -> None:
    if args.json:
        data = report.to_json()
        if args.explain:
            data["placements"] = {
                p.id: [placement_json(m) for m in p.placements] for p in report.patches
            }
        print_json(data)
    else:
        print_report(report)
        for p in report.patches if args.explain else ():
            for line in [f"{p.id}: {p.outcome.value}"] + [
                f"  {placement_line(m)}" for m in p.placements
            ]:
                console.print(line, markup=False, highlight=False)


def print_report(report: RebaseReport) -> None:
    """The outcome table for people."""
    title = f"rebase {report.target} {report.from_version} → {report.onto}"
    table = Table(title=title, title_justify="left")
    for column in ("patch", "outcome", "step", "absorbed by", "broken by", "probes", "file"):
        table.add_column(column)
    for p in report.patches:
        refreshed = "refreshed" if p.refreshed else ""
        row = (p.absorbed_by or "", p.broken_by or "", str(p.probes), refreshed)
        table.add_row(p.id, p.shown, p.step, *row)
    console.print(table)
    moved = f"lock moved to {report.onto} ({report.commit})" if report.lock_moved else "lock kept"
    console.print(f"{moved}; bisection ran the series at {report.points} point(s)")
    if report.report:
        console.print(f"conflict report: {report.report}")
