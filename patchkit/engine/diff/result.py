"""What applying one file's part of a diff needs (:class:`Job`) and gives (:class:`FileResult`),
the results every step of :mod:`patchkit.engine.diff.apply` builds, and a patch's result from
its files' (:func:`combine`, by the one rule of :meth:`patchkit.outcome.Outcome.worst`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from patchkit.engine.diff.parse import FilePatch, Hunk
from patchkit.gitrepo import MergeResult
from patchkit.outcome import ConflictDetail, FileChange, Outcome, PatchResult, Placement, Step

Reader = Callable[[str], bytes | None]
BlobReader = Callable[[str], bytes | None]
Merger = Callable[[bytes, bytes, bytes, tuple[str, str, str]], MergeResult]


class Finder(Protocol):
    """Where moved code went in the target tree (:mod:`patchkit.engine.diff.relocate` asks)."""

    def renamed(self, path: str) -> str | None:
        """Where the file at ``path`` in the base commit is in the target (None: not renamed)."""
        ...

    def files_with(self, text: str, patterns: Sequence[str]) -> list[str]:
        """Files of the target tree holding ``text``, among those ``patterns`` match."""
        ...


@dataclass(frozen=True)
class FileResult:
    outcome: Outcome
    step: Step
    change: FileChange | None = None  # None: nothing to write
    details: tuple[ConflictDetail, ...] = ()
    conflicted: FileChange | None = None
    placements: tuple[Placement, ...] = ()


@dataclass(frozen=True)
class Job:
    """One file's part of a diff, and what it needs from outside."""

    fp: FilePatch
    blob: BlobReader
    merge: Merger
    label: str
    explain: bool = False  # name every hunk's scope path, parsing files placement did not need
    finder: Finder | None = None  # where moved code went (renamed files, moved scopes)
    read: Reader | None = None  # the tree, for files the code moved to


def stopped(outcome: Outcome, path: str, where: str, why: str, ours: bytes = b"") -> FileResult:
    """A file the patch cannot change, with the one reason why."""
    detail = ConflictDetail(path, where, why, ours.decode(errors="replace"))
    return FileResult(outcome, Step.NONE, details=(detail,))


def detail(path: str, hunk: Hunk, reason: str, ours: bytes = b"") -> ConflictDetail:
    """Where a hunk stopped and why, with the tree's text there and what the hunk wanted."""
    theirs = b"".join(hunk.new).decode(errors="replace")
    return ConflictDetail(path, hunk.header, reason, ours.decode(errors="replace"), theirs)


def no_base(fp: FilePatch, missing: Sequence[Hunk]) -> FileResult:
    """Hunks whose context is gone, where no base blob is there to merge them from."""
    why = (
        "context not found, and the base blob "
        f"{fp.old_blob or '(none in the diff)'} is not available for a three-way merge"
    )
    details = tuple(detail(fp.path, hunk, why) for hunk in missing)
    return FileResult(Outcome.CONFLICT, Step.NONE, details=details)


def corrupt(fp: FilePatch, why: str) -> FileResult:
    return stopped(Outcome.FAILED, fp.path, "diff", f"the diff is corrupt: {why}")


def file_result(
    fp: FilePatch,
    outcome: Outcome,
    step: Step,
    lines: list[bytes],
    placements: tuple[Placement, ...] = (),
    content: bytes | None = None,  # the lines joined, when the caller has them
) -> FileResult:
    if content is None:
        content = b"".join(lines)
    mode = fp.new_mode if fp.new_mode != fp.old_mode else None
    rename = fp.old_path if fp.old_path != fp.new_path else None
    if outcome is Outcome.UPSTREAMED and not rename and not mode:
        return FileResult(outcome, step, placements=placements)
    change = FileChange(fp.path, content, mode=mode, old_path=rename)
    return FileResult(outcome, step, change, placements=placements)


def combine(patch_id: str, results: Sequence[FileResult], message: str = "") -> PatchResult:
    """One patch's result from its files' results: a file that did not land is the verdict
    (the worst first), whatever the others did (:meth:`~patchkit.outcome.Outcome.worst`)."""
    outcome = Outcome.worst(r.outcome for r in results)
    steps = [r.step for r in results if r.outcome == outcome] or [Step.NONE]
    step = Step.THREE_WAY if Step.THREE_WAY in steps else steps[0]
    return PatchResult(
        patch_id=patch_id,
        outcome=outcome,
        step=step,
        changes=tuple(r.change for r in results if r.change is not None),
        message=message,
        details=tuple(d for r in results for d in r.details),
        conflicted=tuple(r.conflicted for r in results if r.conflicted is not None),
        placements=tuple(p for r in results for p in r.placements),
    )
