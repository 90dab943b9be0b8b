"""The unpatched tree ``verify`` proves against (each patch's tests must fail there), and
``patchkit verify --bench``: each patch's ``[[bench]]`` timed on the unpatched tree against the
patched one in the same GPU session (``verify.bench_run``).

The unpatched tree is ``--baseline DIR`` when given (an unpatched checkout or install of the same
release), or else a temporary git worktree of the checkout at its own commit: patchkit's edits are
uncommitted changes, so that worktree holds upstream's files. It is made once, when first needed
(``Unpatched``), and removed afterwards.
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
from patchkit.workspace.installed import InstalledTree
from patchkit.workspace.tree import Tree

Bench = Callable[[PatchMeta], tuple[BenchRecord, ...]]


@contextlib.contextmanager
def unpatched_tree(tree: Tree | None, baseline: Path | None) -> Iterator[Path]:
    """The tree ``tree`` was before patchkit applied anything: ``baseline``, or a worktree."""
    if baseline is not None:
        yield baseline.resolve()
        return
    if tree is None or isinstance(tree, InstalledTree) or not is_repo(tree.root):
        raise TreeError(
            f"no unpatched tree to compare {tree.root if tree else 'the tree'} with",
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


NO_BASELINE = "no unpatched tree to run them on (give --baseline DIR: an unpatched checkout)"


class Unpatched:
    """The unpatched tree for ``tree``: made on the first ``path()`` (a worktree, removed when
    ``stack`` closes), or ``given``; None with the reason in ``why`` where there is none."""

    def __init__(self, stack: contextlib.ExitStack, tree: Tree | None, given: Path | None) -> None:
        self._stack, self._tree, self._given = stack, tree, given
        self._path: Path | None = None
        self.why = ""

    def path(self) -> Path | None:
        if self._path is None and not self.why:
            if self._tree is None and self._given is None:
                self.why = NO_BASELINE
                return None
            try:
                self._path = self._stack.enter_context(unpatched_tree(self._tree, self._given))
            except TreeError:
                self.why = NO_BASELINE
        return self._path

    def required(self) -> Path:
        """The path, or the TreeError saying there is none (``--bench`` needs it)."""
        found = self.path()
        if found is None:
            raise TreeError(
                "no unpatched tree to compare with",
                hint="give --baseline DIR: an unpatched checkout (or install) of the same release",
            )
        return found


def bench_with(
    *, before: Path, after: Path, env: Environment, python: str, logs: Path | None = None
) -> Bench:
    """The ``bench`` argument of ``ops.verify.verify``: a patch's figures on these trees."""

    def run(meta: PatchMeta) -> tuple[BenchRecord, ...]:
        return bench_patch(
            meta, before_tree=before, after_tree=after, env=env, python=python, logs=logs
        )

    return run
