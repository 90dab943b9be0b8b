"""``patchkit matrix`` on the command line: parse, build the matrix, write it as HTML, Markdown
or JSON (to ``--out`` or standard output), and say how long it took on stderr."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from patchkit.cli.options import add_project, add_sets, add_target, project_of
from patchkit.cli.render import err_console, write_out
from patchkit.cluster import address_from
from patchkit.matrix.execute import choose
from patchkit.matrix.markdown import render_markdown
from patchkit.matrix.page import render_html
from patchkit.matrix.store import CellStore, MemoryStore
from patchkit.matrix.table import Matrix
from patchkit.ops.matrix import matrix

FORMATS = ("html", "md", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add_target(parser)
    add_sets(parser, help="patch set (repeatable)")
    add_project(parser, help="holds upstream.lock (default: .)")
    add(
        "--releases",
        default="",
        metavar="FROM..TO|all",
        help="releases (commits for git sources) to probe; default: the lock's to the newest",
    )
    add("--format", choices=FORMATS, help="default: from --out's suffix, else md")
    add("--out", type=Path, metavar="PATH", help="write here instead of standard output")
    add("--workers", type=int, metavar="N", help="local processes (default: one per CPU)")
    add("--ray", metavar="ADDRESS", help="run cells as Ray tasks there (default: $RAY_ADDRESS)")
    add("--no-reuse", action="store_true", help="compute every cell again (store nothing)")


def run(args: argparse.Namespace) -> int:
    project = project_of(args)
    address = address_from(args.ray)
    store = MemoryStore() if args.no_reuse else CellStore()
    try:
        result = matrix(
            project=project,
            target=args.target,
            releases=args.releases,
            executor=choose(ray_address=address, workers=args.workers),
            store=store,
            prefetch=address is None,
        )
    finally:
        store.close()
    text = render(result, _format(args))
    if args.out:
        args.out.write_text(text)
    else:
        write_out(text)
    run = result.run
    err_console.print(
        f"{result.target}: {len(result.rows)} patches x {len(result.releases)} releases; "
        f"{run.computed} cells computed, {run.reused} reused ({run.executor}); "
        f"fetch {run.fetch_s:.1f} s, cells {run.cells_s:.1f} s"
        + (f"; written to {args.out}" if args.out else "")
    )
    return 0


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    suffix = args.out.suffix.lstrip(".") if args.out else ""
    return (
        {"htm": "html", "markdown": "md"}.get(suffix, suffix)
        if suffix
        in (
            *FORMATS,
            "htm",
            "markdown",
        )
        else "md"
    )


def render(result: Matrix, fmt: str) -> str:
    if fmt == "html":
        return render_html(result)
    if fmt == "json":
        return json.dumps(result.to_json(), indent=2) + "\n"
    return render_markdown(result)
