"""``patchkit export-series --target T --format quilt|mbox DIR``: the patch sets written as a
plain series at the locked commit, for tools that do not know patchkit: quilt (``series`` and
patches with DEP-3 headers, which ``quilt push -a`` applies) or numbered ``git format-patch``
messages (full index lines, which ``git am`` applies in order). Each patch is the diff it makes
on the lock after the ones before it (a rewrite is run and written as its diff); a patch whose
change is already upstream is left out and said so."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.deltas import change_deltas
from patchkit.engine.difftext import unified_diff
from patchkit.engine.series import Blobs, Overlay, run_patch
from patchkit.errors import PatchFailed, TreeError, shown
from patchkit.importers.formats import MARKER, is_export_dir, mail, mail_name, quilt_patch
from patchkit.model import PatchMeta
from patchkit.ops.apply import upstream_view
from patchkit.ops.context import CACHED, Project, Where, blobs_for, open_tree

FORMATS = ("quilt", "mbox")


@dataclass(frozen=True)
class SeriesExport:
    directory: Path
    format: str
    files: tuple[Path, ...]  # in apply order (quilt: the series file last)
    left_out: tuple[tuple[str, str], ...]  # (patch id, why)


def _diffs(
    patches: Sequence[PatchMeta], lock: Overlay, blobs: Blobs
) -> tuple[list[tuple[PatchMeta, bytes]], list[tuple[str, str]]]:
    kept, left_out = [], []
    for meta in patches:
        result = run_patch(meta, lock.read, blobs)
        if not result.outcome.ok:
            raise PatchFailed(
                f"{meta.id} does not apply at the lock ({result.outcome.value}): "
                f"{result.reasons()}; no series written",
                hint="`patchkit apply` shows why; fix the patch, or leave it out with --set",
            )
        diff = unified_diff(change_deltas(result.changes, lock))
        for change in result.changes:
            lock.put(change)
        if diff:
            kept.append((meta, diff))
        else:
            left_out.append((meta.id, "already upstream at the lock"))
    return kept, left_out


def export_series(
    *, patches: Sequence[PatchMeta], lock: Overlay, blobs: Blobs, directory: Path, fmt: str
) -> SeriesExport:
    """Write the series of ``patches`` (in order, on the files ``lock`` reads) to
    ``directory`` (absent, empty, or an earlier export, which is replaced)."""
    if fmt not in FORMATS:
        raise PatchFailed(f"unknown series format {shown(fmt)} (quilt or mbox)")
    if not is_export_dir(directory):
        raise TreeError(
            f"{directory} is not empty and not an earlier export; refusing to replace it",
            hint="pick an empty or new directory",
        )
    kept, left_out = _diffs(patches, lock, blobs)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / MARKER).write_text("written by `patchkit export-series`; replaced on the next\n")
    files = []
    for number, (meta, diff) in enumerate(kept, 1):
        if fmt == "quilt":
            path, data = directory / f"{meta.id}.patch", quilt_patch(meta, diff)
        else:
            path, data = directory / mail_name(number, meta), mail(meta, diff, number, len(kept))
        path.write_bytes(data)
        files.append(path)
    if fmt == "quilt":
        series = directory / "series"
        series.write_text("".join(f"{p.name}\n" for p in files))
        files.append(series)
    return SeriesExport(directory, fmt, tuple(files), tuple(left_out))


def export_series_target(
    *,
    project: Project,
    target: str,
    directory: Path,
    fmt: str,
    where: Where = CACHED,
    include: Sequence[str] = (),
) -> SeriesExport:
    """The series of ``target``'s sets (plus the opt-ins in ``include``) written to
    ``directory``, made on the committed files of the tree ``where`` names (the lock's)."""
    entry = project.entry(target)
    tree = open_tree(entry, where)
    blobs = blobs_for(entry, tree)
    try:
        return export_series(
            patches=project.patches(target, include=tuple(include)),
            lock=upstream_view(tree, committed=True),
            blobs=blobs,
            directory=directory,
            fmt=fmt,
        )
    finally:
        blobs.close()
