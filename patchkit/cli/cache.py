"""``patchkit cache`` and ``patchkit cache prune`` on the command line."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_json
from patchkit.cli.render import console, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=("show", "prune"),
        default="show",
        help="show (default): sizes per kind; prune: remove what nothing refers to",
    )
    add_json(parser)


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def run(args: argparse.Namespace) -> int:
    from patchkit.ops.cache import cache_report, prune

    pruned = prune() if args.action == "prune" else None
    report = cache_report()
    if args.json:
        data = report.to_json()
        if pruned is not None:
            data["pruned"] = {"removed": list(pruned.removed), "freed_bytes": pruned.freed}
        print_json(data)
        return 0
    if pruned is not None:
        for what in pruned.removed:
            console.print(f"removed {what}", soft_wrap=True)
        console.print(f"freed {_human(pruned.freed)}")
    console.print(f"patchkit cache at {report.root}: {_human(report.total)}")
    for kind in report.kinds:
        console.print(f"  {kind.name:<12} {_human(kind.bytes):>10}  {kind.files} file(s)")
    return 0
