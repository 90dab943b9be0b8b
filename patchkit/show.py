"""``patchkit show``: the unified diff a patch makes on the locked tree. A diff patch is shown as
it would be applied there; a rewrite is run and its result shown as a diff, so people (and PR
exports) always read a diff."""

from __future__ import annotations

from collections.abc import Sequence

from patchkit.difftext import FileDelta, unified_diff
from patchkit.errors import PatchFailed
from patchkit.model import PatchMeta, PatchResult
from patchkit.series import Blobs, Overlay, run_patch, run_series


def patch_deltas(
    meta: PatchMeta, earlier: Sequence[PatchMeta], overlay: Overlay, blobs: Blobs
) -> tuple[PatchResult, list[FileDelta]]:
    """Run the patches before ``meta`` on ``overlay``, then ``meta``; its before/after files."""
    for result in run_series(earlier, overlay, blobs):
        if not result.outcome.ok:
            raise PatchFailed(
                f"cannot show {meta.id}: the earlier patch {result.patch_id} ended "
                f"{result.outcome.value}",
                hint="run `patchkit apply` to see why",
            )
    result = run_patch(meta, overlay.read, blobs)
    deltas = [
        FileDelta(
            c.path, overlay.read(c.old_path or c.path), c.content, overlay.modes.get(c.path), c.mode
        )
        for c in result.changes
    ]
    return result, deltas


def show(meta: PatchMeta, earlier: Sequence[PatchMeta], overlay: Overlay, blobs: Blobs) -> bytes:
    result, deltas = patch_deltas(meta, earlier, overlay, blobs)
    if not result.outcome.ok:
        reasons = "; ".join(f"{d.path} {d.hunk}: {d.reason}" for d in result.details)
        raise PatchFailed(
            f"{meta.id} does not apply to this tree ({result.outcome.value}): "
            f"{reasons or result.message}"
        )
    return unified_diff(deltas)
