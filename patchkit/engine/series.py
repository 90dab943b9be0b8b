"""Running a series of patches in memory: both kinds behind one interface, each patch seeing the
files as the patches before it left them. Nothing here writes to disk; ``apply``, ``rebase``,
``show`` and ``export`` all stand on this."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from patchkit.errors import (
    ConfigError,
    PatchFailed,
    PatchkitError,
    SettingRefused,
    TreeError,
    UnsafePathError,
)
from patchkit.fileio import read_file
from patchkit.gitrepo import GitRepo, MergeResult, merge_file
from patchkit.model import PatchKind, PatchMeta
from patchkit.outcome import ConflictDetail, FileChange, Outcome, PatchResult, Step

if TYPE_CHECKING:  # the diff engine is imported when a diff runs
    from patchkit.engine.diff.parse import FilePatch
    from patchkit.engine.diff.result import Finder

Reader = Callable[[str], bytes | None]
Lister = Callable[[str], list[str]]  # directory ("" for the root) -> file paths under it
Fingerprinter = Callable[[str], tuple[int, ...] | None]  # see Tree.fingerprint


@dataclass
class Overlay:
    """Files as a series of patches leaves them, over a base reader."""

    base: Reader
    base_mode: Callable[[str], int | None] = lambda path: None
    files: dict[str, bytes | None] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    listing: Lister | None = None  # lists the base's files; None: a base that cannot list
    # a base file's fingerprint (see Tree.fingerprint); None: a base that has none
    base_fingerprint: Fingerprinter | None = None

    def list(self, directory: str) -> list[str]:
        """Files under ``directory`` as the series leaves them (the base must list)."""
        base = set(self.listing(directory)) if self.listing else set()
        inside = {p for p in self.files if not directory or p.startswith(directory + "/")}
        return sorted((base | inside) - {p for p in inside if self.files[p] is None})

    @property
    def lister(self) -> Lister | None:
        return self.list if self.listing is not None else None

    @property
    def fingerprinter(self) -> Fingerprinter | None:
        return self.fingerprint if self.base_fingerprint is not None else None

    def fingerprint(self, path: str) -> tuple[int, ...] | None:
        """The base file's fingerprint; None for a file the series changed (read it)."""
        if path in self.files or self.base_fingerprint is None:
            return None
        return self.base_fingerprint(path)

    def read(self, path: str) -> bytes | None:
        return self.files[path] if path in self.files else self.base(path)

    def mode(self, path: str) -> int | None:
        return self.modes[path] if path in self.modes else self.base_mode(path)

    def put(self, change: FileChange) -> None:
        mode = change.mode
        if change.old_path:
            if mode is None:  # a rename keeps the mode of the file it moves
                mode = self.mode(change.old_path)
            self.files[change.old_path] = None
        self.files[change.path] = change.content
        if mode is not None:
            self.modes[change.path] = mode


class Blobs:
    """Base blobs for three-way merges, looked up in several repositories."""

    def __init__(self, repos: Sequence[Path]) -> None:
        self._repos = [GitRepo(p) for p in repos]

    def read(self, sha: str) -> bytes | None:
        for repo in self._repos:
            content = repo.read_blob(sha)
            if content is not None:
                return content
        return None

    def merge(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> MergeResult:
        return merge_file(ours, base, theirs, labels)

    def close(self) -> None:
        for repo in self._repos:
            repo.close()


def file_patches(meta: PatchMeta) -> tuple[FilePatch, ...]:
    """A diff patch's file parts (the parser remembers a diff by its content: an apply asks
    three times, for the files it touches, the clean check and the run)."""
    from patchkit.engine.diff.parse import parse_diff  # a diff parser only for diffs

    return parse_diff(read_file(meta.file), meta.file)


def touched_paths(meta: PatchMeta) -> list[str]:
    """The repository paths a patch may change (read from the patch, nothing applied). A
    rewrite's are its declared ``files``; it is imported only when it declares none."""
    if meta.kind is PatchKind.DIFF:
        return [p for fp in file_patches(meta) for p in fp.paths]
    if meta.files:
        return list(meta.files)
    from patchkit.engine.rewrite.load import rewrite_paths

    # A rewrite that searches may change files beside its home: those it changes at the lock
    # are declared in its metadata (``files``).
    return list(dict.fromkeys([*rewrite_paths(meta.file), *meta.files]))


def patch_paths(meta: PatchMeta) -> list[str]:
    """:func:`touched_paths`, or none for a patch file the run reports as that patch's failure
    (a malformed diff, a rewrite that does not load); a path out of the tree stops the
    operation here as it does in the run (exit 5)."""
    try:
        return touched_paths(meta)
    except (ConfigError, PatchFailed):
        return []


def run_diff(
    meta: PatchMeta,
    read: Reader,
    blobs: Blobs,
    *,
    explain: bool = False,
    finder: Finder | None = None,
) -> PatchResult:
    from patchkit.engine.diff.apply import apply_file  # for diffs only
    from patchkit.engine.diff.links import apply_link
    from patchkit.engine.diff.result import FileResult, combine

    parsed = file_patches(meta)
    _refuse_files_under_files(meta, parsed, read)
    label = f"patch {meta.id}"
    results: list[FileResult] = [
        apply_link(fp, read)
        if fp.link
        else apply_file(fp, read, blobs.read, blobs.merge, label, explain=explain, finder=finder)
        for fp in parsed
    ]
    return combine(meta.id, results)


def _refuse_files_under_files(
    meta: PatchMeta, file_patches: Sequence[FilePatch], read: Reader
) -> None:
    """A file the diff creates whose directory is a file (in the tree, or one the same diff
    writes) could never be written: refuse the patch before anything is placed, naming the
    patch, both files and the way out. (A file that exists has a directory above it.)"""
    written = {fp.new_path for fp in file_patches if fp.new_path}
    created = [fp.new_path for fp in file_patches if fp.new_path and fp.new_path != fp.old_path]
    for path in created:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in written or _is_file(read, parent):
                raise PatchFailed(
                    f"patch {meta.id} ({meta.file}) writes {path}, but {parent} is a file"
                    f"{' the same patch writes' if parent in written else ''}: a file cannot "
                    "be under a file; fix the patch: give the new file a path no file holds"
                )


def _is_file(read: Reader, path: str) -> bool:
    try:
        return read(path) is not None
    except (TreeError, UnsafePathError):  # a directory, or a path the tree does not map
        return False


def run_patch(
    meta: PatchMeta,
    read: Reader,
    blobs: Blobs,
    listing: Lister | None = None,
    *,
    explain: bool = False,
    finder: Finder | None = None,
) -> PatchResult:
    """One patch against the files as ``read`` gives them; failures are values. A rewrite also
    looks for moved code in the files ``listing`` names; a diff follows moved code through
    ``finder``; ``explain`` names every hunk's scope path, parsing files placement itself did
    not need."""
    try:
        if meta.kind is PatchKind.DIFF:
            return run_diff(meta, read, blobs, explain=explain, finder=finder)
        warm = _cached_rewrite(meta, read, listing)
        if warm is not None:
            return warm
        from patchkit.engine.rewrite.run import run_rewrite_patch

        return run_rewrite_patch(meta.id, meta.file, read, listing, meta.files)
    except (UnsafePathError, SettingRefused):
        raise  # never a patch outcome: the whole operation stops (exit 5, 2)
    except (ConfigError, PatchFailed) as exc:
        detail = ConflictDetail(str(meta.file), "patch", exc.message)
        return PatchResult(
            meta.id, Outcome.FAILED, Step.NONE, message=exc.message, details=(detail,)
        )
    except PatchkitError as exc:
        return PatchResult(meta.id, Outcome.FAILED, Step.NONE, message=str(exc))


Given = Callable[[PatchMeta, Reader], PatchResult | None]  # a result known without running


def run_series(
    patches: Sequence[PatchMeta],
    overlay: Overlay,
    blobs: Blobs,
    *,
    stop_on_failure: bool = True,
    explain: bool = False,
) -> list[PatchResult]:
    """Run patches in order on ``overlay`` (updated in place with each patch's changes), for a
    series written as it stands (apply, record, export): only a patch that ended well leaves
    its files; a patch left out (``stop_on_failure=False``) leaves nothing."""
    results = []
    for result in series_steps(patches, overlay, blobs, explain=explain, whole=True):
        results.append(result)
        if stop_on_failure and not result.outcome.ok:
            break
    return results


def series_steps(
    patches: Sequence[PatchMeta],
    overlay: Overlay,
    blobs: Blobs,
    *,
    explain: bool = False,
    finder: Finder | None = None,
    given: Given | None = None,
    whole: bool = False,
) -> Iterator[PatchResult]:
    """Each patch's result in series order, yielded while ``overlay`` still holds the files as
    the earlier patches left them. Then a patch whose change is on the tree (``carried``:
    ended well, or upstream took part of it and the rest applied) leaves its files for the
    next; with ``whole``, only one that ended well. ``given`` answers for a patch whose result
    is known (a person's fix); ``finder`` follows code moved upstream."""
    warm = _prewarm(patches, overlay.read, overlay.lister, overlay.fingerprinter)
    changed: set[str] = set()  # paths the patches run so far changed
    for index, meta in enumerate(patches):
        ready = warm.get(index)
        result = given(meta, overlay.read) if given is not None else None
        if result is None and ready is not None and not any(ready[1](p) for p in changed):
            result = ready[0]  # read from the cache before the series ran, and still so
        if result is None:
            result = run_patch(
                meta, overlay.read, blobs, overlay.lister, explain=explain, finder=finder
            )
        yield result
        if result.outcome.ok or (result.outcome.carried and not whole):
            for change in result.changes:
                overlay.put(change)
                changed.update(p for p in (change.path, change.old_path) if p)


# a rewrite patch's result read from the cache, and whether a change to a path could change it
Warm = tuple[PatchResult, Callable[[str], bool]]


def _cached_rewrite(meta: PatchMeta, read: Reader, listing: Lister | None) -> PatchResult | None:
    """A rewrite patch's result from the cache alone (no libcst, no import of the rewrite)."""
    found = _warm_rewrite(meta, read, listing)
    return found[0] if found is not None else None


def _warm_rewrite(
    meta: PatchMeta, read: Reader, listing: Lister | None, fingerprint: Fingerprinter | None = None
) -> Warm | None:
    try:
        source = meta.file.read_bytes()
    except OSError:
        return None  # the rewrite run reports it
    from patchkit.engine.rewrite import outcome  # the warm path of rewrites: not for diffs

    found = outcome.warm_run(source, meta.files, read, listing, fingerprint)
    if found is None:
        return None
    return outcome.patch_result(meta.id, found[0]), found[1]


def _prewarm(
    patches: Sequence[PatchMeta],
    read: Reader,
    listing: Lister | None,
    fingerprint: Fingerprinter | None = None,
) -> dict[int, Warm]:
    """The rewrite patches whose results are in the cache (by their index in the series). When
    several miss it, rewrite their files at once, on every core (those no earlier patch
    changes); the series then reads their runs from the cache."""
    items: list[tuple[Path, tuple[str, ...]] | set[str]] = []
    warm: dict[int, Warm] = {}
    missing = 0
    for index, meta in enumerate(patches):
        if meta.kind is PatchKind.REWRITE:
            items.append((meta.file, meta.files))
            found = _warm_rewrite(meta, read, listing, fingerprint)
            if found is None:
                missing += 1
            else:
                warm[index] = found
            continue
        try:
            items.append(set(touched_paths(meta)))
        except PatchkitError:
            break  # a broken patch: the series run reports it; nothing after it is ready
    if missing > 1:
        from patchkit.engine.rewrite.run import prewarm

        prewarm(items, read, listing)
    return warm
