"""``patchkit show``: the unified diff a patch makes on the locked tree. A diff patch is shown as
it would be applied there; a rewrite is run and its result shown as a diff, so people (and PR
exports) always read a diff."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from patchkit.engine.deltas import patch_deltas
from patchkit.engine.diff.make import unified_diff
from patchkit.engine.series import Blobs, Overlay
from patchkit.errors import ConfigError, PatchFailed
from patchkit.model import PatchMeta
from patchkit.ops.apply import upstream_view
from patchkit.ops.context import Project, blobs_for, open_checkout


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
