"""``patchkit reset`` on the command line."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_tree, project_of, where_of
from patchkit.cli.render import console, print_json, recovered_json, say_recovered
from patchkit.ops.reset import reset_target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_tree(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="reset files edited after apply too, saving the edits aside first",
    )


def run(args: argparse.Namespace) -> int:
    tree, report = reset_target(
        project=project_of(args), target=args.target, where=where_of(args), force=args.force
    )
    say_recovered(report.recovered, as_json=args.json)
    if args.json:
        print_json(
            {
                "target": args.target,
                "restored": list(report.restored),
                "saved_aside": str(report.saved_aside) if report.saved_aside else None,
                "modes_kept": list(report.modes_kept),
                "recovered": recovered_json(report.recovered),
            }
        )
        return 0
    console.print(f"restored {len(report.restored)} file(s) in {tree.root}")
    if report.modes_kept:
        console.print(f"kept the mode you gave: {', '.join(report.modes_kept)}")
    if report.saved_aside:
        console.print(f"your edits were saved in {report.saved_aside}")
    return 0
