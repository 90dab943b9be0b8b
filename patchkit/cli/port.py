"""The command line of ``patchkit port``."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from patchkit.cli.explain import explain_json, explain_lines
from patchkit.cli.options import add_explain, add_json
from patchkit.cli.render import console, print_json, results_json, results_table
from patchkit.errors import PatchFailed
from patchkit.ops.port import port


# -- the command line -------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("patch_file", type=Path, help="a unified diff (or a rewrite .py)")
    parser.add_argument("--base", required=True, help="the commit the diff was made at")
    parser.add_argument(
        "--checkout", type=Path, default=Path.cwd(), help="the tree to patch (default: here)"
    )
    parser.add_argument("--allow-dirty", action="store_true", help="patch over uncommitted edits")
    add_json(parser)
    add_explain(parser)
    parser.add_argument(
        "--refreshed",
        type=Path,
        metavar="FILE",
        help="write the diff that is still needed on this tree (after a partial upstreaming)",
    )


def run(args: argparse.Namespace) -> int:
    report = port(
        patch_file=args.patch_file,
        base_commit=args.base,
        checkout=args.checkout,
        allow_dirty=args.allow_dirty,
        explain=args.explain,
    )
    result = replace(report.result, outcome=report.outcome)
    if args.refreshed is not None and report.refreshed is not None:
        args.refreshed.write_bytes(report.refreshed)
    if args.json:
        data = results_json("port", report.base, [result]) | {"written": list(report.written)}
        if args.explain:
            data["placements"] = explain_json([result])[result.patch_id]
        print_json(data)
    else:
        console.print(results_table(f"port {args.patch_file} onto {report.checkout}", [result]))
        for line in explain_lines([result]) if args.explain else []:
            console.print(line, markup=False)
    if not report.succeeded:
        raise PatchFailed(
            f"{args.patch_file} ended {report.outcome.value} on {report.checkout}; "
            "nothing was written",
            hint="see the details above; fix the tree by hand or refresh the diff",
        )
    return 0
