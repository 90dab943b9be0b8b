"""What a patch does to each file, as before/after pairs (``FileDelta``): what ``show``, export
and rebase turn into diffs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from patchkit.engine.diff.make import FileDelta
from patchkit.engine.series import Blobs, Overlay, run_patch, run_series
from patchkit.errors import PatchFailed
from patchkit.model import PatchMeta
from patchkit.outcome import FileChange, PatchResult


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
    result = run_patch(meta, overlay.read, blobs, overlay.lister)
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
