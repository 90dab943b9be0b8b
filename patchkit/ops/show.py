"""``patchkit show``: the unified diff a patch makes on the locked tree. A diff patch is shown as
it would be applied there; a rewrite is run and its result shown as a diff, so people (and PR
exports) always read a diff."""

from __future__ import annotations

from collections.abc import Sequence

from patchkit.engine.deltas import patch_deltas
from patchkit.engine.difftext import unified_diff
from patchkit.engine.series import Blobs, Overlay
from patchkit.errors import PatchFailed
from patchkit.model import PatchMeta


def show(meta: PatchMeta, earlier: Sequence[PatchMeta], overlay: Overlay, blobs: Blobs) -> bytes:
    result, deltas = patch_deltas(meta, earlier, overlay, blobs)
    if not result.outcome.ok:
        reasons = "; ".join(f"{d.path} {d.hunk}: {d.reason}" for d in result.details)
        raise PatchFailed(
            f"{meta.id} does not apply to this tree ({result.outcome.value}): "
            f"{reasons or result.message}"
        )
    return unified_diff(deltas)
