"""``patchkit export-series --target T --format quilt|mbox DIR``: the patch sets written as a
plain series at the locked commit, for tools that do not know patchkit: quilt (``series`` and
patches with DEP-3 headers, which ``quilt push -a`` applies) or numbered ``git format-patch``
messages (full index lines, which ``git am`` applies in order). Each patch is the diff it makes
on the lock after the ones before it (a rewrite is run and written as its diff); a patch whose
change is already upstream is left out and said so."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.deltas import change_deltas
from patchkit.engine.diff.make import unified_diff
from patchkit.engine.series import Blobs, Overlay, run_patch
from patchkit.errors import PatchFailed, TreeError, shown
from patchkit.importers.formats import MARKER, is_export_dir, mail, mail_name, quilt_patch
from patchkit.model import PatchMeta
from patchkit.ops.apply_tree import upstream_view
from patchkit.ops.context import CACHED, Where, blobs_for, open_tree
from patchkit.project.load import Project

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
    outputs = _outputs(kept, fmt)
    earlier = _written_before(directory)
    _refuse_clashes(directory, [name for name, _ in outputs], earlier)
    directory.mkdir(parents=True, exist_ok=True)
    for name in earlier:  # only what the earlier export wrote; a person's own files stay
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()
    listed = "".join(f"{name}\n" for name, _ in outputs)
    (directory / MARKER).write_text(_MANIFEST_HEAD + listed)
    files = []
    for name, data in outputs:
        (directory / name).write_bytes(data)
        files.append(directory / name)
    return SeriesExport(directory, fmt, tuple(files), tuple(left_out))


_MANIFEST_HEAD = (
    "# written by `patchkit export-series`: the files below are replaced (and only they are\n"
    "# removed) on the next export into this directory\n"
)


def _outputs(kept: list[tuple[PatchMeta, bytes]], fmt: str) -> list[tuple[str, bytes]]:
    """(file name, content) of every file the export writes, in apply order."""
    outputs = []
    for number, (meta, diff) in enumerate(kept, 1):
        if fmt == "quilt":
            outputs.append((f"{meta.id}.patch", quilt_patch(meta, diff)))
        else:
            outputs.append((mail_name(number, meta), mail(meta, diff, number, len(kept))))
    if fmt == "quilt":
        outputs.append(("series", "".join(f"{n}\n" for n, _ in outputs).encode()))
    return outputs


_OLD_MAIL = re.compile(r"\d{4}-[A-Za-z0-9._-]+\.patch")  # format-patch names exports wrote


def _old_export(directory: Path) -> list[str]:
    """What an export made before manifests wrote: ``series`` and the patches it lists
    (quilt), or numbered mails."""
    try:
        series = (directory / "series").read_text(errors="replace").split()
    except OSError:
        series = []
    mails = [p.name for p in directory.iterdir() if _OLD_MAIL.fullmatch(p.name)]
    return ["series", *series, *mails] if series else mails


def _written_before(directory: Path) -> list[str]:
    """The files an earlier export listed in its manifest that are still its plain files:
    names in the directory itself (no ``/``, no ``..``, no dot files), never links."""
    try:
        text = (directory / MARKER).read_text(errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return []
    listed = text.splitlines()
    if text.startswith("written by `patchkit export-series`;"):  # before there was a manifest
        listed = _old_export(directory)
    names = []
    for name in listed:
        if not name or name.startswith(("#", ".")) or "/" in name or "\0" in name:
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(directory / name).st_mode):
                names.append(name)
    return names


def _refuse_clashes(directory: Path, names: list[str], earlier: list[str]) -> None:
    """Nothing is written over a file the earlier export did not write (a person's own)."""
    ours = set(earlier)
    clashes = [n for n in names if n not in ours and os.path.lexists(directory / n)]
    if clashes:
        raise TreeError(
            f"{directory}: {', '.join(clashes)} would be written over, and the earlier export "
            "did not write them; nothing was written",
            hint="move those files away, or export into another directory",
        )


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
