"""``patchkit record`` on the command line."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_tree, project_of
from patchkit.cli.render import console
from patchkit.errors import ConfigError
from patchkit.ops.record import record_target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_tree(parser)
    parser.add_argument("--patch", required=True, help="id of the new patch, or one to refresh")
    parser.add_argument("--title", default="")
    parser.add_argument("--why", default="", help="the bug, in a sentence or two")
    parser.add_argument("--author", default="")
    parser.add_argument("--into", metavar="SET", help="patch set to add a new patch to")
    parser.add_argument("paths", nargs="*", help="only these files (default: every edited file)")


def run(args: argparse.Namespace) -> int:
    if args.installed:
        raise ConfigError(
            "record works on a checkout, not on an installed package",
            hint="make the edit in a checkout (`patchkit fetch`), then record",
        )
    report = record_target(
        project=project_of(args),
        target=args.target,
        patch_id=args.patch,
        checkout=args.checkout,
        include=args.include,
        into=args.into,
        title=args.title,
        why=args.why,
        author=args.author,
        paths=args.paths,
    )
    verb = "wrote" if report.changed else "unchanged:"
    console.print(f"{verb} {report.patch_file} ({', '.join(report.files)})")
    return 0
