"""Apply a series to an opened tree: all or nothing, idempotent, recorded (the tree's state and
journal); what ``apply_target`` and the verbs that apply on a tree they opened (rebase, verify,
export) share.

Apply always computes from the upstream originals (saved when first patched), so applying an
edited series replaces the old one exactly, and applying the same series twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.engine.series import (
    Blobs,
    Overlay,
    Reader,
    patch_paths,
    run_series,
)
from patchkit.errors import PatchFailed, TreeError
from patchkit.model import LockEntry, PatchMeta
from patchkit.outcome import PatchResult
from patchkit.project.sets import patch_digest
from patchkit.targets import commits_match
from patchkit.workspace.installed import InstalledTree
from patchkit.workspace.journal import Write
from patchkit.workspace.locks import writing
from patchkit.workspace.state import AppliedPatch, FileRecord, State, StateStore
from patchkit.workspace.tree import Tree, sha256
from patchkit.workspace.treecheck import changed_files, committed_reader, tree_commit
from patchkit.workspace.txn import Recovery, commit, recover


@dataclass(frozen=True)
class ApplyReport:
    target: str
    commit: str | None
    results: tuple[PatchResult, ...]
    written: tuple[str, ...]
    noop: bool = False
    skipped: tuple[PatchResult, ...] = ()  # failed, left out: on_failure skip, --keep-going
    recovered: Recovery | None = None  # an interrupted write this run rolled back first
    trace: ApplyTrace | None = None  # what the run read and wrote (a warm run replays it)


@dataclass(frozen=True)
class ApplyTrace:
    """What one apply that wrote a tree depended on and produced: the tree's files as it read
    them (bytes and modes), the files it only fingerprinted, the directories it listed, the
    writes and the new state. ``ops/warm_record.py`` keeps it for a warm run to replay."""

    read: dict[str, bytes | None]
    modes: dict[str, int | None]
    fingerprinted: frozenset[str]
    listed: dict[str, tuple[str, ...]]
    writes: tuple[Write, ...]
    state: State | None
    state_before: State | None


class ApplyFailed(PatchFailed):
    def __init__(self, message: str, results: Sequence[PatchResult]) -> None:
        super().__init__(message, hint="nothing was written; see the report above")
        self.results = tuple(results)


def _check_commit(tree: Tree, entry: LockEntry, allow_other_commit: bool) -> str | None:
    found = tree_commit(tree)
    if found and commits_match(found, entry.commit):
        return found
    if allow_other_commit:
        return found
    raise TreeError(
        f"{tree.root} is at upstream commit {found or 'unknown'}, but {entry.name} is locked at "
        f"{entry.commit} ({entry.version})",
        hint="check out the locked commit (`patchkit fetch`), or pass --allow-other-commit "
        "to apply with three-way merges",
    )


def _user_edits(tree: Tree, state: State | None) -> list[str]:
    """Files patchkit wrote whose content changed since."""
    if state is None:
        return []
    return sorted(path for path, rec in state.files.items() if rec.edited(tree.read(path)))


def upstream_view(tree: Tree, *, committed: bool = False) -> Overlay:
    """The tree as upstream had it: saved originals for the files patchkit changed; the other
    files as they are, or (``committed``) as the checkout's HEAD has them."""
    store = StateStore(tree.state_dir)
    return _originals(tree, store, store.load(), committed_reader(tree) if committed else None)


def _originals(
    tree: Tree, store: StateStore, state: State | None, base: Reader | None = None
) -> Overlay:
    overlay = Overlay(
        base or tree.read,
        tree.mode,
        listing=tree.files_under,
        base_fingerprint=None if base else tree.fingerprint,
    )
    for path, rec in (state.files if state else {}).items():
        overlay.files[path] = store.get(rec.original) if rec.original else None
        if rec.original_mode is not None:
            overlay.modes[path] = rec.original_mode
    return overlay


def series_applied(state: State | None, patches: Sequence[PatchMeta]) -> bool:
    """The state records exactly these patches, as their files are now, applied in order."""
    if state is None:
        return not patches
    applied = [(p.id, p.digest) for p in state.patches]
    return applied == [(p.id, patch_digest(p)) for p in patches]


def apply(
    *,
    tree: Tree,
    entry: LockEntry,
    patches: Sequence[PatchMeta],
    blobs: Blobs,
    allow_dirty: bool = False,
    allow_other_commit: bool = False,
    explain: bool = False,
    keep_going: bool = False,
) -> ApplyReport:
    """Apply ``patches`` to ``tree``, all or nothing; a patch that may fail (``on_failure =
    "skip"``, or every patch with ``keep_going``) is left out when it fails and the rest apply:
    the report names it in ``skipped``."""
    with writing(tree, "apply"):
        return _apply(
            tree, entry, patches, blobs, allow_dirty, allow_other_commit, explain, keep_going
        )


def _apply(
    tree: Tree,
    entry: LockEntry,
    patches: Sequence[PatchMeta],
    blobs: Blobs,
    allow_dirty: bool,
    allow_other_commit: bool,
    explain: bool,
    keep_going: bool = False,
) -> ApplyReport:
    store = StateStore(tree.state_dir)
    recovered = recover(tree, store)
    commit_id = _check_commit(tree, entry, allow_other_commit)
    state = store.load()
    _refuse_edited(tree, state)
    if series_applied(state, patches):
        return ApplyReport(entry.name, commit_id, (), (), noop=True, recovered=recovered)
    if not allow_dirty:
        _check_clean(tree, state, patches)
    seen = _Seen(tree)
    overlay = _seen_originals(seen, store, state)
    results, failed = _run(tree, patches, overlay, blobs, explain=explain, keep_going=keep_going)
    skipped = {r.patch_id for r in failed}  # each one may fail: the rest apply without it
    patches = [p for p in patches if p.id not in skipped]
    new_state = _new_state(seen, store, entry, commit_id, patches, results, overlay, state)
    writes = _writes(seen, overlay, state)
    commit(tree, store, writes, new_state, command="apply", expected=seen.contents)
    return ApplyReport(
        entry.name,
        commit_id,
        tuple(results),
        tuple(w.path for w in writes),
        skipped=tuple(failed),
        recovered=recovered,
        trace=seen.trace(writes, new_state, state),
    )


def _refuse_edited(tree: Tree, state: State | None) -> None:
    edited = _user_edits(tree, state)
    if edited:
        raise TreeError(
            f"files patched earlier were edited since: {', '.join(edited)} in {tree.root}",
            hint="turn the edits into a patch with `patchkit record`, or `patchkit reset --force` "
            "(which saves them aside) before applying again",
        )


def _seen_originals(seen: _Seen, store: StateStore, state: State | None) -> Overlay:
    """The upstream originals over the tree as ``seen`` reads it (each file read once)."""
    overlay = _originals(seen.tree, store, state)
    overlay.base = seen.read
    overlay.base_fingerprint = seen.fingerprint
    overlay.listing = seen.listing
    overlay.base_mode = seen.mode
    return overlay


def _run(
    tree: Tree,
    patches: Sequence[PatchMeta],
    overlay: Overlay,
    blobs: Blobs,
    *,
    explain: bool,
    keep_going: bool,
) -> tuple[list[PatchResult], list[PatchResult]]:
    """The series on ``overlay``: the results of the patches kept, and those that failed and
    may (``on_failure = "skip"``, ``keep_going``); ``ApplyFailed`` when one may not."""
    may_fail = {p.id for p in patches if keep_going or p.on_failure == "skip"}
    results = run_series(patches, overlay, blobs, explain=explain, stop_on_failure=not may_fail)
    failed = [r for r in results if not r.outcome.ok]
    if any(r.patch_id not in may_fail for r in failed):
        names = ", ".join(f"{r.patch_id} ({r.outcome.value})" for r in failed)
        raise ApplyFailed(f"could not apply {names} to {tree.root}", results)
    return [r for r in results if r.outcome.ok], failed


def _check_clean(tree: Tree, state: State | None, patches: Sequence[PatchMeta]) -> None:
    """Refuse before any work if someone else changed a file the patches may touch."""
    ours = set(state.files) if state else set()
    touched = {path for meta in patches for path in patch_paths(meta)}
    dirty = changed_files(tree, sorted(p for p in touched if p not in ours and tree.holds(p)))
    if not dirty:
        return
    if isinstance(tree, InstalledTree):
        raise TreeError(
            f"files modified since install (their sha256 differs from RECORD): "
            f"{', '.join(dirty)} ({tree.root})",
            hint="reinstall the package, or pass --allow-dirty to patch on top of the "
            "modified files (reset then restores them as they are now)",
        )
    raise TreeError(
        f"uncommitted changes in files the patches touch: {', '.join(dirty)} ({tree.root})",
        hint="commit or stash them first, or pass --allow-dirty to patch on top of them "
        "(reset then restores your version)",
    )


class _Seen:
    """The tree's files as this apply first read them: the series runs on them, the state
    records them as the originals and the writes are what differs from them (one read of each
    file, not three; the commit reads each again for its journal, just before writing)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self._files: dict[str, bytes | None] = {}
        self.modes: dict[str, int | None] = {}  # each file's mode as first asked
        self.fingerprinted: set[str] = set()  # files judged by their fingerprint alone
        self.listed: dict[str, tuple[str, ...]] = {}  # directories listed, and what they held

    @property
    def contents(self) -> dict[str, bytes | None]:
        """Every file read so far, as it was read."""
        return self._files

    def read(self, path: str) -> bytes | None:
        if path not in self._files:
            self._files[path] = self.tree.read(path)
        return self._files[path]

    def fingerprint(self, path: str) -> tuple[int, ...] | None:
        """The file's fingerprint, taken before its content is read; None once it was read
        (the bytes kept may be older than the file now: no verdict may pair them)."""
        if path in self._files:
            return None
        self.fingerprinted.add(path)
        return self.tree.fingerprint(path)

    def mode(self, path: str) -> int | None:
        if path not in self.modes:
            self.modes[path] = self.tree.mode(path)
        return self.modes[path]

    def listing(self, directory: str) -> list[str]:
        found = self.tree.files_under(directory)
        self.listed.setdefault(directory, tuple(found))
        return found

    def trace(
        self, writes: Sequence[Write], state: State | None, before: State | None
    ) -> ApplyTrace:
        fingerprinted = frozenset(self.fingerprinted)
        return ApplyTrace(
            self._files, self.modes, fingerprinted, self.listed, tuple(writes), state, before
        )


def _writes(tree: _Seen, overlay: Overlay, state: State | None) -> list[Write]:
    writes = []
    paths = set(overlay.files) | set(state.files if state else {})
    for path in sorted(paths):
        desired = overlay.read(path)
        mode = overlay.modes.get(path)
        if desired != tree.read(path) or (mode is not None and mode != tree.mode(path)):
            writes.append(Write(path, desired, mode))
    return writes


def _new_state(
    tree: _Seen,
    store: StateStore,
    entry: LockEntry,
    commit_id: str | None,
    patches: Sequence[PatchMeta],
    results: Sequence[PatchResult],
    overlay: Overlay,
    state: State | None,
) -> State | None:
    if not patches:
        return None
    old = state.files if state else {}
    records = {}
    for path, content in overlay.files.items():
        if path in old:
            original, original_mode = old[path].original, old[path].original_mode
        else:
            current = tree.read(path)
            original = store.put(current) if current is not None else None
            original_mode = tree.mode(path)
        result = sha256(content) if content is not None else None
        mode = overlay.modes.get(path)
        if result == original and mode in (None, original_mode) and path not in old:
            continue
        records[path] = FileRecord(path, original, original_mode, result, mode)
    applied = tuple(
        AppliedPatch(
            id=meta.id,
            set_name=meta.set_name,
            kind=meta.kind,
            digest=patch_digest(meta),
            outcome=res.outcome,
            step=res.step,
            files=tuple(sorted({c.path for c in res.changes})),
        )
        for meta, res in zip(patches, results, strict=True)
    )
    return State(entry.name, commit_id, entry.version, applied, records)
