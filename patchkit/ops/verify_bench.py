"""``patchkit verify --bench``: besides the tests, each patch's ``[[bench]]`` timed on the
unpatched tree against the patched one in the same GPU session (``verify.bench_run``).

The unpatched tree is ``--baseline DIR`` when given (an unpatched checkout or install of the same
release), or else a temporary git worktree of the checkout at its own commit: patchkit's edits are
uncommitted changes, so that worktree holds upstream's files. It is removed afterwards.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from patchkit.errors import TreeError
from patchkit.gitrepo import is_repo, open_repo
from patchkit.model import PatchMeta
from patchkit.verification.bench_run import bench_patch
from patchkit.verification.environment import Environment
from patchkit.verification.records import BenchRecord
from patchkit.workspace.tree import Tree

Bench = Callable[[PatchMeta], tuple[BenchRecord, ...]]


@contextlib.contextmanager
def unpatched_tree(tree: Tree, baseline: Path | None) -> Iterator[Path]:
    """The tree ``tree`` was before patchkit applied anything: ``baseline``, or a worktree."""
    if baseline is not None:
        yield baseline.resolve()
        return
    if tree.kind != "checkout" or not is_repo(tree.root):
        raise TreeError(
            f"no unpatched tree to compare {tree.root} with",
            hint="give --baseline DIR: an unpatched checkout (or install) of the same release",
        )
    with (
        tempfile.TemporaryDirectory(prefix="patchkit-baseline-") as tmp,
        open_repo(tree.root) as repo,
    ):
        path = Path(tmp) / tree.root.name
        repo.add_worktree(path, "HEAD")
        try:
            yield path
        finally:
            repo.remove_worktree(path)


def bench_with(
    *, before: Path, after: Path, env: Environment, python: str, logs: Path | None = None
) -> Bench:
    """The ``bench`` argument of ``ops.verify.verify``: a patch's figures on these trees."""

    def run(meta: PatchMeta) -> tuple[BenchRecord, ...]:
        return bench_patch(
            meta, before_tree=before, after_tree=after, env=env, python=python, logs=logs
        )

    return run
