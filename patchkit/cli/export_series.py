"""``patchkit export-series`` on the command line: the sets as a quilt series or git
format-patch mail at the locked commit."""

from __future__ import annotations

import argparse
from pathlib import Path

from patchkit.cli.options import (
    add_include,
    add_project,
    add_sets,
    add_target,
    project_of,
    where_of,
)
from patchkit.cli.render import console
from patchkit.ops.export_series import FORMATS, export_series_target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=Path, metavar="DIR", help="where to write the series")
    add_target(parser)
    parser.add_argument("--format", choices=FORMATS, required=True, dest="fmt")
    add_sets(parser, help=None)
    add_include(parser, help=None)
    add_project(parser, help="the patch repository")
    parser.add_argument("--checkout", type=Path, help="a checkout at the lock (default: cache)")


def run(args: argparse.Namespace) -> int:
    done = export_series_target(
        project=project_of(args),
        target=args.target,
        directory=args.directory,
        fmt=args.fmt,
        where=where_of(args),
        include=args.include,
    )
    for path in done.files:
        console.print(str(path))
    for patch_id, why in done.left_out:
        console.print(f"left out {patch_id}: {why}")
    apply_with = "quilt push -a" if done.format == "quilt" else f"git am {done.directory}/*.patch"
    console.print(f"{len(done.files)} file(s) in {done.directory}; apply with `{apply_with}`")
    return 0
