"""``patchkit show``: the unified diff a patch makes on the locked tree. A diff patch is shown as
it would be applied there; a rewrite is run and its result shown as a diff, so people (and PR
exports) always read a diff."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from patchkit.difftext import FileDelta, unified_diff
from patchkit.errors import PatchFailed
from patchkit.model import FileChange, PatchMeta, PatchResult
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
    return result, change_deltas(result.changes, overlay)


def change_deltas(changes: Iterable[FileChange], overlay: Overlay) -> list[FileDelta]:
    """Before/after of each file a patch's ``changes`` touch, read from ``overlay`` as it was
    before them. A rename is its old path deleted and its new path created, so the diff made
    from the deltas moves the file again when applied. A file keeps its mode unless the change
    sets one."""
    deltas = []
    for c in changes:
        source = c.old_path or c.path
        mode = overlay.mode(source)
        after_mode = c.mode or mode
        if source != c.path:
            deltas.append(FileDelta(source, overlay.read(source), None, mode, None))
            deltas.append(FileDelta(c.path, None, c.content, None, after_mode))
        else:
            deltas.append(FileDelta(c.path, overlay.read(c.path), c.content, mode, after_mode))
    return deltas


def show(meta: PatchMeta, earlier: Sequence[PatchMeta], overlay: Overlay, blobs: Blobs) -> bytes:
    result, deltas = patch_deltas(meta, earlier, overlay, blobs)
    if not result.outcome.ok:
        reasons = "; ".join(f"{d.path} {d.hunk}: {d.reason}" for d in result.details)
        raise PatchFailed(
            f"{meta.id} does not apply to this tree ({result.outcome.value}): "
            f"{reasons or result.message}"
        )
    return unified_diff(deltas)
