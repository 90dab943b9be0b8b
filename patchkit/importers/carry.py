"""An imported patch made whole at its base, then carried to the locked commit by the engine.

At the base the patch becomes a full-index diff (the source's abbreviated or missing index
lines replaced by the base's blob ids; a script's edits made into a diff), so rebase and
export can always find its base blobs. That diff is then run on the lock through the same
engine ``apply`` and ``rebase`` use (:func:`patchkit.engine.series.run_patch`): exact, by unique
context, or three-way from the base blobs. Everything happens in memory, on blobs; nothing is
written to any tree.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchkit.engine.deltas import change_deltas
from patchkit.engine.diff.make import unified_diff
from patchkit.engine.diff.parse import parse_diff
from patchkit.engine.series import Blobs, Overlay, run_patch
from patchkit.importers.base import Reader, reader
from patchkit.importers.edits import redo
from patchkit.importers.model import Candidate, FileEdits
from patchkit.importers.releases import Release, Releases
from patchkit.importers.selfcheck import judge
from patchkit.model import PatchKind, PatchMeta
from patchkit.outcome import ConflictDetail, FileChange, Outcome, PatchResult, Step


@dataclass(frozen=True)
class Carried:
    outcome: Outcome  # at the lock
    step: Step
    at_base: bytes  # full-index diff at the base (b"" without one)
    at_lock: bytes  # full-index diff at the lock (b"" unless it applies there and changes)
    details: tuple[ConflictDetail, ...] = ()
    message: str = ""
    rewrite: str = ""  # the patch as a rewrite module instead (``--as-rewrite``), when offered
    files: tuple[tuple[str, dict[str, bytes | None]], ...] = ()  # (commit, files it leaves)


def _run_diff(diff: bytes, target: str, read: Reader, blobs: Blobs) -> PatchResult:
    with tempfile.TemporaryDirectory(prefix="patchkit-import-") as tmp:
        file = Path(tmp) / "imported.patch"
        file.write_bytes(diff)
        meta = PatchMeta("imported", "imported", "import", target, PatchKind.DIFF, file, file, "")
        return run_patch(meta, read, blobs)


def edit_files(edits: Sequence[FileEdits], read: Reader) -> tuple[list[FileChange], list[str]]:
    """A script's edits made on the files ``read`` gives; and each text it did not find."""
    changes, missing = [], []
    for fe in edits:
        after, lost = redo(fe, read(fe.path))
        missing += lost
        if after is not None:
            changes.append(FileChange(fe.path, after))
    return changes, missing


def _diff_of(changes: Sequence[FileChange], read: Reader) -> bytes:
    deltas = [d for d in change_deltas(changes, Overlay(read)) if d.before != d.after]
    return unified_diff(deltas)


def at_base(candidate: Candidate, target: str, read: Reader, blobs: Blobs) -> tuple[bytes, str]:
    """The candidate as a full-index diff at the base; "" or why it does not apply there."""
    if candidate.diff is None:
        changes, missing = edit_files(candidate.edits, read)
        return (b"", "; ".join(missing)) if missing else (_diff_of(changes, read), "")
    result = _run_diff(candidate.diff, target, read, blobs)
    if not result.outcome.ok:
        return b"", result.message or "; ".join(d.reason for d in result.details)
    return _diff_of(result.changes, read), ""


def carry(candidate: Candidate, base: Release | None, releases: Releases, target: str) -> Carried:
    blobs = Blobs([releases.repo.path])
    try:
        carried = _carry(candidate, base, releases, target, blobs)
        return replace(carried, files=_files_left(carried, base, releases, target, blobs))
    finally:
        blobs.close()


def _carry(
    candidate: Candidate, base: Release | None, releases: Releases, target: str, blobs: Blobs
) -> Carried:
    lock = releases.lock
    read_lock = reader(releases, lock.commit)
    if base is None:
        return _without_base(candidate, read_lock, target, blobs)
    read_base = reader(releases, base.commit)
    diff, why = at_base(candidate, target, read_base, blobs)
    if why or not diff:
        why = why or "it changes nothing there"
        return Carried(Outcome.FAILED, Step.NONE, b"", b"", message=f"at base {base.label}: {why}")
    if base.commit == lock.commit:
        return Carried(Outcome.APPLIED, Step.EXACT, diff, diff)
    result = _run_diff(diff, target, read_lock, blobs)
    return _judged(result, diff, read_base, read_lock)


def _judged(result: PatchResult, diff: bytes, read_base: Reader, read_lock: Reader) -> Carried:
    paths = [p for fp in parse_diff(diff, Path("imported.patch")) for p in fp.paths]
    outcome = result.outcome.since_base(lambda: all(read_base(p) == read_lock(p) for p in paths))
    at_lock = _diff_of(result.changes, read_lock) if outcome.ok else b""
    return Carried(outcome, result.step, diff, at_lock, result.details, result.message)


def _without_base(candidate: Candidate, read_lock: Reader, target: str, blobs: Blobs) -> Carried:
    """No release holds the base: the engine tries the lock by context alone (no three-way
    base); a script whose new text is all there already is upstream."""
    if candidate.diff is not None:
        result = _run_diff(candidate.diff, target, read_lock, blobs)
        at_lock = _diff_of(result.changes, read_lock) if result.outcome.ok else b""
        return Carried(result.outcome, result.step, b"", at_lock, result.details, result.message)
    edits = [r for fe in candidate.edits for r in fe.replaces if r.old != r.new]
    present = [r for r in edits if _present(candidate, r.new, read_lock)]
    _, missing = edit_files(candidate.edits, read_lock)
    if present and len(present) == len(edits):
        return Carried(Outcome.UPSTREAMED, Step.PROBE, b"", b"", message="every new text is there")
    # an edit neither there nor makeable (its text gone) is never part of a success
    lost = [r for r in edits if r not in present and not _present(candidate, r.old, read_lock)]
    outcome = Outcome.PARTLY_UPSTREAMED if present and not lost else Outcome.CONFLICT
    details = tuple(ConflictDetail(m.split(":")[0], "replace", m) for m in missing)
    return Carried(outcome, Step.NONE, b"", b"", details, "; ".join(missing))


def _present(candidate: Candidate, text: str, read: Reader) -> bool:
    for fe in candidate.edits:
        content = read(fe.path)
        if content is not None and text in content.decode("utf-8", "surrogateescape"):
            return True
    return False


def _files_left(
    carried: Carried, base: Release | None, releases: Releases, target: str, blobs: Blobs
) -> tuple[tuple[str, dict[str, bytes | None]], ...]:
    out = []
    if carried.at_base and base is not None:
        read = reader(releases, base.commit)
        out.append((base.commit, left_files(carried.at_base, target, read, blobs)))
    if carried.at_lock:
        read = reader(releases, releases.lock.commit)
        out.append((releases.lock.commit, left_files(carried.at_lock, target, read, blobs)))
    return tuple(out)


def remember(releases: Releases, carried: Carried) -> None:
    """Keep the files a patch that is kept leaves at its base and at the lock: the next
    imported patch is made and carried on top of them, as the set's series applies them."""
    for commit, files in carried.files:
        releases.earlier.setdefault(commit, {}).update(files)


def left_files(diff: bytes, target: str, read: Reader, blobs: Blobs) -> dict[str, bytes | None]:
    """The files ``diff`` leaves when applied on ``read``."""
    result = _run_diff(diff, target, read, blobs)
    return {c.path: c.content for c in result.changes} if result.outcome.ok else {}


def tested(
    candidate: Candidate, carried: Carried, releases: Releases, base: Release | None
) -> Candidate:
    """The candidate keeping the self-checks that tell the patch apart (they fail on the files
    without it, at the lock, or at its base when it does not apply there, and hold with it);
    each other check is said among the steps not translated, with why."""
    if not candidate.checks:
        return candidate
    at = releases.lock.commit if carried.at_lock else base.commit if base else ""
    left = dict(carried.files).get(at, {})
    before = reader(releases, at) if at else (lambda path: None)

    def after(path: str) -> bytes | None:
        return left[path] if path in left else before(path)

    kept, said = [], []
    for test in candidate.checks:
        why = judge(test, before, after) if at else "the patch applies nowhere it was tried"
        if why:
            said.append(f"line {test.line}: a self-check not made a test ({why}): {test.text}")
        else:
            kept.append(test)
    return replace(candidate, checks=tuple(kept), untranslated=(*candidate.untranslated, *said))
