"""``patchkit retire PATCH --merged-in VERSION [--pr N]`` on the command line."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_json, add_project, project_of
from patchkit.cli.render import console, print_json
from patchkit.ops.retire import retire


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("patch", help="the id of the patch upstream merged")
    parser.add_argument(
        "--merged-in",
        required=True,
        metavar="VERSION",
        help="the upstream release (or commit) that has the change: the rebase report's "
        "`absorbed by`",
    )
    parser.add_argument(
        "--pr", metavar="N", help="the upstream pull request that merged it (number or URL)"
    )
    add_project(parser)
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    project = project_of(args)
    done = retire(project=project, patch_id=args.patch, merged_in=args.merged_in, pr=args.pr)
    if args.json:
        print_json(
            {
                "patch": done.patch_id,
                "metadata": str(done.meta_file),
                "merged_in": done.merged_in,
                "pr": done.pr,
                "written": done.changed,
            }
        )
        return 0
    what = f"merged in {done.merged_in}" + (f" ({done.pr})" if done.pr else "")
    if done.changed:
        console.print(f"retired {done.patch_id}: {what}; wrote {done.meta_file}", soft_wrap=True)
        console.print(
            "it is no longer applied nor carried; `git diff` shows the change to commit",
            soft_wrap=True,
        )
    else:
        console.print(f"{done.patch_id} was already retired ({what}); nothing written")
    return 0
