"""The options verbs share, each declared here once (``--target``, ``--set``, ``--project``, the
tree: ``--checkout`` / ``--installed``, ``--python``, ``--include``; ``--json``, ``--explain``),
and what they mean to the API: the project and the tree they name."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchkit.ops.context import Where
    from patchkit.project.load import Project

TARGET_HELP = "vllm, flashinfer, ..."
SETS_HELP = "patch set to use (repeatable; default: all under patchsets/)"
PROJECT_HELP = "the patch repository (holds upstream.lock); default: current dir"


def add_target(
    parser: argparse.ArgumentParser, *, required: bool = True, help: str = TARGET_HELP
) -> None:
    parser.add_argument("--target", "-t", required=required, help=help)


def add_sets(parser: argparse.ArgumentParser, *, help: str | None = SETS_HELP) -> None:
    parser.add_argument("--set", dest="sets", action="append", metavar="NAME", help=help)


def add_project(parser: argparse.ArgumentParser, *, help: str = PROJECT_HELP) -> None:
    """``--project``: where the patch repository is (its ``upstream.lock`` is looked for from
    there upwards); the current directory by default, for every verb."""
    parser.add_argument("--project", type=Path, default=Path.cwd(), help=help)


def add_where(
    parser: argparse.ArgumentParser,
    *,
    installed_help: str = "the installed distribution of the target (in site-packages) instead",
) -> None:
    """``--checkout DIR`` or ``--installed``: the tree to work on (neither: the cache's)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--checkout", type=Path, help="a target checkout (default: the cache's)")
    where.add_argument("--installed", action="store_true", help=installed_help)


def add_python(parser: argparse.ArgumentParser, *, help: str) -> None:
    parser.add_argument("--python", default=sys.executable, metavar="PATH", help=help)


def add_include(
    parser: argparse.ArgumentParser, *, help: str | None = "also use this opt-in patch (repeatable)"
) -> None:
    parser.add_argument("--include", action="append", default=[], metavar="PATCH", help=help)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def add_explain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--explain",
        action="store_true",
        help="per hunk of each diff: where it went (file:line, scope path) and by which rule",
    )


def add_tree(parser: argparse.ArgumentParser, *, tests: bool = False) -> None:
    """The options of a verb that works on one tree of a target (apply, status, reset, record)."""
    add_target(parser)
    add_sets(parser)
    add_project(parser)
    add_where(parser)
    add_python(
        parser,
        help="the interpreter whose installed package (--installed) "
        + ("or tests (--verify) to use" if tests else "to use"),
    )
    add_include(parser)
    add_json(parser)


def project_of(args: argparse.Namespace) -> Project:
    """The project ``--project`` names, with the sets ``--set`` chose (all when none)."""
    from patchkit.project.load import load_project  # the sets' reader: not for a lone `port`

    return load_project(args.project, getattr(args, "sets", None))


def where_of(args: argparse.Namespace) -> Where:
    """The tree the command line names: --installed (with --python), --checkout, or the cache."""
    from patchkit.ops.context import Where  # the sets' reader: not for a lone `port`

    return Where(
        checkout=getattr(args, "checkout", None),
        installed=getattr(args, "installed", False),
        python=getattr(args, "python", None),
    )
