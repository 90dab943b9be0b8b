"""``patchkit show``: the unified diff a patch makes on the locked tree. A diff patch is shown as
it would be applied there; a rewrite is run and its result shown as a diff, so people (and PR
exports) always read a diff."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.deltas import patch_deltas
from patchkit.engine.diff.make import unified_diff
from patchkit.engine.series import Blobs, Overlay
from patchkit.errors import ConfigError, PatchFailed
from patchkit.matrix.table import Cell, Row
from patchkit.model import PatchMeta
from patchkit.ops.apply_tree import upstream_view
from patchkit.ops.context import blobs_for, open_checkout
from patchkit.ops.matrix import matrix
from patchkit.outcome import Outcome
from patchkit.project.load import Project


def show(meta: PatchMeta, earlier: Sequence[PatchMeta], overlay: Overlay, blobs: Blobs) -> bytes:
    result, deltas = patch_deltas(meta, earlier, overlay, blobs)
    if not result.outcome.ok:
        raise PatchFailed(
            f"{meta.id} does not apply to this tree ({result.outcome.value}): {result.reasons()}"
        )
    return unified_diff(deltas)


def show_patch(
    *, project: Project, patch_id: str, target: str | None = None, checkout: Path | None = None
) -> bytes:
    """The unified diff ``patch_id`` makes on the locked tree (or on ``checkout``), after the
    patches before it in its series."""
    meta = project.patch(patch_id)
    if target and target != meta.target:
        raise ConfigError(f"patch {meta.id} is for {meta.target}, not {target}")
    entry = project.entry(meta.target)
    series = project.patches(meta.target, include=(meta.id,))
    earlier = series[: series.index(meta)]
    tree = open_checkout(entry, checkout)
    blobs = blobs_for(entry, tree)
    try:
        return show(meta, earlier, upstream_view(tree), blobs)
    finally:
        blobs.close()


@dataclass(frozen=True)
class PatchReleases:
    """``show PATCH --releases``: the patch's matrix row, and the releases it works with."""

    patch_id: str
    locked: str  # the lock's release
    cells: tuple[Cell, ...]  # one per release, oldest first
    row: Row  # where upstream absorbed it, where it broke

    @property
    def works(self) -> tuple[str, ...]:
        """The releases where the patch applies, or is carried there."""
        return tuple(
            c.release for c in self.cells if c.outcome in (Outcome.APPLIED, Outcome.CARRIED)
        )


def patch_releases(*, project: Project, patch_id: str, releases: str = "") -> PatchReleases:
    """The matrix row of ``patch_id`` over ``releases`` (``FROM..TO``, ``all``; default: the
    lock's release to the newest); cells already computed are reused."""
    meta = project.patch(patch_id)
    found = matrix(project=project, target=meta.target, releases=releases, only=[meta.id])
    [row] = found.rows
    return PatchReleases(meta.id, found.locked, found.cells, row)
