"""``patchkit fetch`` on the command line."""

from __future__ import annotations

import argparse

from patchkit.cli.options import add_project, add_sets, add_target, project_of
from patchkit.cli.render import console
from patchkit.ops.fetch import fetch_target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target(parser)
    add_sets(parser)
    add_project(parser)


def run(args: argparse.Namespace) -> int:
    fetched = fetch_target(project=project_of(args), target=args.target)
    console.print(
        f"{args.target} {fetched.version} (upstream {fetched.upstream_commit}) at {fetched.path}"
    )
    return 0
