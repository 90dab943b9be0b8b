"""``patchkit show`` on the command line: a patch's diff, or with ``--releases`` its matrix row."""

from __future__ import annotations

import argparse
from pathlib import Path

from patchkit.cli.options import add_project, add_sets, add_target, project_of
from patchkit.cli.render import console, write_out
from patchkit.ops.show import patch_releases, show_patch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("patch", help="patch id")
    add_target(parser, required=False)
    add_sets(parser)
    add_project(parser)
    parser.add_argument("--checkout", type=Path, help="show against this checkout instead")
    parser.add_argument(
        "--releases",
        nargs="?",
        const="",
        metavar="FROM..TO|all",
        help="instead of the diff: the releases the patch works with (its matrix row; cells "
        "already computed are reused); default range: the lock's release to the newest",
    )


def run(args: argparse.Namespace) -> int:
    if args.releases is not None:
        return _show_releases(args)
    diff = show_patch(
        project=project_of(args), patch_id=args.patch, target=args.target, checkout=args.checkout
    )
    write_out(diff)
    return 0


def _show_releases(args: argparse.Namespace) -> int:
    """``show PATCH --releases``: the patch's matrix row, one release a line."""
    found = patch_releases(project=project_of(args), patch_id=args.patch, releases=args.releases)
    for cell in found.cells:
        console.print(f"{cell.release:>14}  {cell.shown}", markup=False, highlight=False)
    said = [f"works with: {', '.join(found.works) or 'none of these'}"]
    said += [f"absorbed by {found.row.absorbed_by}"] if found.row.absorbed_by else []
    said += [f"broke in {found.row.broken_by}"] if found.row.broken_by else []
    console.print(f"{found.patch_id} (locked at {found.locked}): " + "; ".join(said), markup=False)
    return 0
