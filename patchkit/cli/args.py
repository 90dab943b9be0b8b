"""What every command's arguments mean to the API: which tree they name."""

from __future__ import annotations

import argparse

from patchkit.ops.context import Where


def where_of(args: argparse.Namespace) -> Where:
    """The tree the command line names: --installed (with --python), --checkout, or the cache."""
    return Where(
        checkout=getattr(args, "checkout", None),
        installed=getattr(args, "installed", False),
        python=getattr(args, "python", None),
    )
