"""The command line of ``patchkit verify``: its arguments and its rendering."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from patchkit.cli.options import (
    add_include,
    add_json,
    add_project,
    add_python,
    add_sets,
    add_target,
    add_where,
    project_of,
    where_of,
)
from patchkit.cluster import address_from
from patchkit.ops.verify import raise_for, verify_target
from patchkit.verification.bench_text import value_text
from patchkit.verification.env import (
    DEFAULT_TIMEOUT_S,
)
from patchkit.verification.proof import Proof
from patchkit.verification.records import BenchRecord, same_code
from patchkit.verification.run import Result, VerifyReport

if TYPE_CHECKING:
    from rich.table import Table

    from patchkit.project.load import Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add_target(parser)
    add_sets(parser, help="patch set (repeatable)")
    add_project(parser, help="holds upstream.lock (default: .)")
    add_where(parser, installed_help="the installed distribution")
    add_include(parser, help="add an opt-in patch")
    add("--only", action="append", default=[], metavar="PATCH", help="verify only this patch")
    add_python(parser, help="interpreter for the tests")
    add("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S", help="per patch run")
    add("--strict", action="store_true", help="a patch whose tests could not run fails too")
    record = parser.add_mutually_exclusive_group()
    record.add_argument(
        "--record",
        action="store_true",
        help="add the runs to patchsets/<set>/verification.json (tracked) to commit them; "
        "by default they are kept in patchkit's cache, where status reads them",
    )
    record.add_argument("--no-record", action="store_true", help="keep no record of the runs")
    add_json(parser)
    _add_bench_and_ray_args(parser)


def _add_bench_and_ray_args(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--bench",
        action="store_true",
        help="also time each patch's [[bench]]: unpatched vs patched",
    )
    add(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="the unpatched tree for --bench (default: a "
        "temporary git worktree of the checkout at its commit)",
    )
    add("--ray", metavar="ADDRESS", help="run each patch's tests as Ray tasks on that cluster")
    add(
        "--gpu-kinds",
        type=lambda text: [k.strip() for k in text.split(",") if k.strip()],
        default=[],
        metavar="H100,H200",
        help="with --ray: prove GPU tests on each of these accelerator types "
        "(default: the tests' gpu_kinds)",
    )


def run(args: argparse.Namespace) -> int:
    project = project_of(args)
    address = address_from(args.ray)
    if address:
        return _verify_on_ray(args, project, address)
    report = verify_target(
        project=project,
        target=args.target,
        where=where_of(args),
        include=args.include,
        only=args.only,
        python=args.python,
        record=not args.no_record,
        tracked=args.record,
        timeout_s=args.timeout,
        bench=args.bench,
        baseline=args.baseline,
    )
    render(report, as_json=args.json, python=args.python)
    raise_for(report, strict=args.strict)
    return 0


_STYLE = {Result.PASSED: "green", Result.FAILED: "red", Result.NOT_RUN: "yellow"}


_PROOF_STYLE = {
    Proof.PROVEN: "green",
    Proof.PROVES_NOTHING: "red",
    Proof.FAILED: "red",
    Proof.NOT_RUN: "yellow",
}


def proof_cell(proof: str, reason: str) -> str:
    """A record's proof, coloured, with what failed without the patch (or why not proven)."""
    from rich.markup import escape

    if not proof:
        return "-"
    style = _PROOF_STYLE[Proof(proof)]
    return f"[{style}]{proof}[/]" + (f"\n{escape(reason)}" if reason else "")


def missing_hint(report: VerifyReport, python: str) -> str | None:
    """How to get the modules the tests could not import: into the interpreter that runs the
    tests (``--python``), never into patchkit's own environment."""
    missing = sorted(
        {
            reason.split("dependency missing: ", 1)[1].split()[0].rstrip(";,)")
            for v in report.verdicts
            for o in v.tests
            for reason in [o.reason]
            if "dependency missing: " in reason
        }
    )
    if not missing:
        return None
    names = " ".join(missing)
    return (
        f"not installed for the interpreter that runs the tests ({python}): {names}; "
        f"`{python} -m pip install {names}` there (or pass --python with one that has them), "
        "then verify again"
    )


def render(report: VerifyReport, *, as_json: bool = False, python: str | None = None) -> None:
    from rich.table import Table

    from patchkit.cli.render import console, print_json

    if as_json:
        print_json(report.to_json())
        return
    table = Table(title=f"verify on {report.environment.describe()}", title_justify="left")
    for column in ("patch", "result", "proof", "tests", "why"):
        table.add_column(column, overflow="fold")  # test ids whole, never cut with an ellipsis
    proofs = {r.patch: r for r in report.records}
    for v in report.verdicts:
        tests = "\n".join(f"{o.node} ({o.where})" for o in v.tests) or "-"
        found = proofs.get(v.patch_id)
        proof = proof_cell(found.proof, found.proof_reason) if found else "-"
        result = f"[{_STYLE[v.result]}]{v.result.value}[/]"
        table.add_row(v.patch_id, result, proof, tests, v.reason)
    console.print(table)
    benches = [(r.patch, b) for r in report.records for b in r.bench]
    if benches:
        console.print(bench_table(benches))
    hint = missing_hint(report, python or sys.executable)
    if hint:
        console.print(f"[yellow]to run the tests not run:[/] {hint}", soft_wrap=True)
    for path in report.written:
        console.print(f"recorded in {path}")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _cold(b: BenchRecord) -> str:
    parts = [f"{s:.1f} s" if s is not None else "-" for s in (b.before_cold_s, b.after_cold_s)]
    return " / ".join(parts)


def bench_table(rows: list[tuple[str, BenchRecord]]) -> Table:
    """Before and after per case: ratio is after's speed over before's (above 1: faster)."""
    from rich.table import Table

    table = Table(title="speed: unpatched (before) vs patched (after)", title_justify="left")
    for column in (
        "patch",
        "case",
        "compared with",
        "before",
        "after",
        "ratio",
        "spread",
        "cold b/a",
        "timing",
        "why",
    ):
        table.add_column(column)
    for patch, b in rows:
        ratio = "-" if b.ratio is None else f"x{b.ratio:.3f}"
        ratio = "same code" if same_code(b) else ratio
        if b.slower:
            ratio = f"[red]{ratio} slower[/]"
        spread = f"{_pct(b.ratio_spread)} ({_pct(b.before_spread)}/{_pct(b.after_spread)})"
        table.add_row(
            patch,
            f"{b.bench}: {b.case}",
            b.compared_with if b.status == "compared" else b.status,
            value_text(b.before, b.metric),
            value_text(b.after, b.metric),
            ratio,
            spread if b.status == "compared" else "-",
            _cold(b),
            b.timing or "-",
            b.reason,
        )
    return table


def _verify_on_ray(args: argparse.Namespace, project: Project, address: str) -> int:
    from rich.table import Table

    from patchkit.cli.render import console, print_json
    from patchkit.ops.verify_ray import raise_for_ray, verify_on_ray

    report = verify_on_ray(
        project=project,
        target=args.target,
        address=address,
        include=tuple(args.include),
        only=tuple(args.only),
        gpu_kinds=args.gpu_kinds,
        timeout_s=args.timeout,
        record=not args.no_record,
        tracked=args.record,
        python=args.python if args.python != sys.executable else None,
        bench=args.bench,
    )
    if args.json:
        print_json({"patches": [r.to_json() for r in report.records], "tasks": report.tasks()})
    else:
        table = Table(title=f"verify on Ray at {address}", title_justify="left")
        for column in ("patch", "where", "result", "proof", "why"):
            table.add_column(column)
        for rec, task in zip(report.records, report.tasks(), strict=True):
            style = _STYLE[Result(rec.result)]
            where = f"{rec.environment.describe()}\n{task['placed']}"
            proof = proof_cell(rec.proof, rec.proof_reason)
            table.add_row(rec.patch, where, f"[{style}]{rec.result}[/]", proof, rec.reason)
        console.print(table)
        benches = [(r.patch, b) for r in report.records for b in r.bench]
        if benches:
            console.print(bench_table(benches))
        for path in report.written:
            console.print(f"recorded in {path}")
    raise_for_ray(report, strict=args.strict)
    return 0
