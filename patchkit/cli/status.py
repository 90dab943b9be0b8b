"""``patchkit status`` on the command line. A run goes through ``cli/warm.py`` (the recorded run
replayed when nothing changed), whose full path calls ``show_status`` here."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_tree
from patchkit.cli.render import console, print_json, status_table
from patchkit.ops.status import StatusReport


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_tree(parser)


def show_status(args: argparse.Namespace, report: StatusReport) -> int:
    if args.json:
        print_json(report.to_json())
    else:
        console.print(status_table(report))
        if report.pending:
            console.print(f"[yellow]pending:[/] {report.pending}", soft_wrap=True)
        for p in report.patches:
            if "proves nothing" in p.verified:  # verification.proof: passes without it too
                console.print(
                    f"[yellow]warning:[/] {p.id}: its tests pass without it too: they prove "
                    "nothing; add a test that fails without the patch",
                    soft_wrap=True,
                )
    return 0
