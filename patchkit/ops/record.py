"""``patchkit record``: turn edits made in a checkout into a diff patch with metadata, or refresh
an existing diff patch after a manual fix (as ``quilt refresh`` does). Output is stable: a patch
whose diff did not change is not rewritten."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchkit.engine.diff.make import FileDelta, unified_diff
from patchkit.engine.series import Blobs, Overlay, run_series, touched_paths
from patchkit.errors import ConfigError, PatchFailed, TreeError, shown
from patchkit.model import PatchKind, PatchMeta, PatchSet, UpstreamStatus
from patchkit.ops.apply_tree import series_applied, upstream_view
from patchkit.ops.context import blobs_for, open_checkout
from patchkit.outcome import Outcome, Step
from patchkit.project.edits import appended_series, new_toml
from patchkit.project.load import Project
from patchkit.project.sets import ID_PATTERN, KIND_BY_SUFFIX, MANIFEST
from patchkit.project.writer import project_lock, project_writes
from patchkit.workspace.links import LINK
from patchkit.workspace.locks import writing
from patchkit.workspace.state import AppliedPatch, FileRecord, State, StateStore
from patchkit.workspace.tree import Tree, sha256
from patchkit.workspace.treecheck import changed_files, committed_links


@dataclass(frozen=True)
class RecordReport:
    patch_id: str
    patch_file: Path
    files: tuple[str, ...]
    changed: bool  # False: the patch file already said exactly this


def _expected(tree: Tree, series: Sequence[PatchMeta], blobs: Blobs) -> Overlay:
    """The files as the committed tree plus the series would have them."""
    overlay = upstream_view(tree, committed=True)
    for result in run_series(series, overlay, blobs):
        if not result.outcome.ok:
            raise PatchFailed(
                f"{result.patch_id} no longer applies ({result.outcome.value})",
                hint="fix the tree by hand, then `patchkit record --patch ID`",
            )
    return overlay


def _edited(tree: Tree, state: State | None, paths: Sequence[str]) -> list[str]:
    """Files edited since the series was applied (all, or among ``paths``)."""
    ours = state.files if state else {}
    dirty = {p for p in changed_files(tree, list(paths) if paths else None) if p not in ours}
    mine = {p for p, rec in ours.items() if rec.edited(tree.read(p)) and (not paths or p in paths)}
    return sorted(dirty | mine)


def link_deltas(tree: Tree, expected: Overlay, paths: Sequence[str]) -> list[FileDelta]:
    """Each file's edit from ``expected`` to the tree; a symbolic link is written as one (mode
    120000) on each side it is one: as the series leaves it (or as committed), and now."""
    committed = committed_links(tree, [p for p in paths if p not in expected.modes])
    deltas = []
    for p in paths:
        before = LINK if expected.modes.get(p) == LINK or p in committed else None
        after = LINK if tree.mode(p) == LINK else None
        deltas.append(FileDelta(p, expected.read(p), tree.read(p), before, after))
    return deltas


def _sha(content: bytes | None) -> str | None:
    return sha256(content) if content is not None else None


def record(
    *,
    tree: Tree,
    patch_set: PatchSet,
    series: Sequence[PatchMeta],
    patch_id: str,
    blobs: Blobs,
    title: str = "",
    why: str = "",
    author: str = "",
    paths: Sequence[str] = (),
) -> RecordReport:
    """Record edits as patch ``patch_id``: new (appended to the set) or a refresh of it."""
    if not ID_PATTERN.match(patch_id):
        raise ConfigError(f"{shown(patch_id)} is not a valid patch id (lowercase, digits, . _ -)")
    existing = next((p for p in series if p.id == patch_id), None)
    if existing is not None:
        return _refresh(tree, series, existing, blobs, paths, _project_of(patch_set))
    patches_dir = patch_set.root / "patches"
    refuse_taken(patch_id, patch_set.patches, patches_dir)
    if not title or not why:
        raise ConfigError(f"a new patch {shown(patch_id)} needs --title and --why")
    store = StateStore(tree.state_dir)
    state = store.load()
    _require_applied(tree, state, series)
    deltas = _edits(tree, state, series, blobs, paths)
    diff = unified_diff(deltas)
    if not diff:
        raise TreeError(
            f"the edits in {tree.root} make no difference to the series; nothing written"
        )
    meta = {"id": patch_id, "title": title, "target": tree.target, "why": why, "author": author}
    patch_file = _write_new(
        patch_set,
        meta,
        diff,
        lambda: _note_applied(store, state, tree, patch_id, patch_set.name, diff, deltas),
    )
    return RecordReport(patch_id, patch_file, tuple(d.path for d in deltas), True)


def _write_new(
    patch_set: PatchSet, meta: dict[str, str], diff: bytes, note: Callable[[], None]
) -> Path:
    """The new patch's file, its metadata and the set's series appended to, written together
    with the checkout's state (``note``); all of them or none."""
    patches_dir, manifest = patch_set.root / "patches", patch_set.root / MANIFEST
    patch_file = patches_dir / f"{meta['id']}.patch"
    with project_writes(_project_of(patch_set), command="record") as writes:
        writes.put(patch_file, diff)
        writes.put(patches_dir / f"{meta['id']}.toml", new_toml({**meta, "status": "local"}))
        writes.put(manifest, appended_series(writes.read(manifest) or b"", [meta["id"]]))
        writes.then(note)
    return patch_file


def _project_of(patch_set: PatchSet) -> Path:
    """The project a set belongs to: sets live in ``<project>/patchsets/<name>``."""
    return patch_set.root.parent.parent


def _edits(
    tree: Tree,
    state: State | None,
    series: Sequence[PatchMeta],
    blobs: Blobs,
    paths: Sequence[str],
) -> list[FileDelta]:
    """Each edited file (among ``paths``, if given) from what the series makes of it to what
    the checkout holds now; none is a TreeError saying what to do."""
    expected = _expected(tree, series, blobs)
    edited = _edited(tree, state, paths)
    if not edited:
        raise TreeError(
            f"no edits to record in {tree.root}" + (f" among {', '.join(paths)}" if paths else ""),
            hint="edit the files in the checkout first (`patchkit status` shows what patchkit "
            "applied), or name the edited files as arguments",
        )
    return link_deltas(tree, expected, edited)


def refuse_taken(patch_id: str, patches: Sequence[PatchMeta], patches_dir: Path | None) -> None:
    """ConfigError when a new patch ``patch_id`` would overwrite a patch not in the series (an
    opt-in or retired one, or one of another set) or files already under ``patches_dir``."""
    taken = next((p for p in patches if p.id == patch_id), None)
    if taken is not None and taken.status is UpstreamStatus.MERGED:
        raise ConfigError(
            f"{patch_id} is already a patch ({taken.meta_file}), retired as merged upstream",
            hint="record the edits under another --patch id",
        )
    if taken is not None:
        raise ConfigError(
            f"{patch_id} is already a patch of set {taken.set_name} ({taken.meta_file}) that "
            "is not in the series used here",
            hint=f"pass `--include {patch_id}` to refresh it, or record under another --patch id",
        )
    names = [f"{patch_id}{suffix}" for suffix in (".toml", *KIND_BY_SUFFIX)]
    found = [patches_dir / n for n in names if (patches_dir / n).exists()] if patches_dir else []
    if found:
        raise ConfigError(
            f"{patch_id} would overwrite {', '.join(str(f) for f in found)}",
            hint="record under another --patch id, or move those files away first",
        )


def _require_applied(tree: Tree, state: State | None, series: Sequence[PatchMeta]) -> None:
    """A new patch is the difference from the applied series: the tree must have it applied."""
    if not series_applied(state, series):
        includes = "".join(f" --include {p.id}" for p in series if p.optional)
        raise TreeError(
            f"{tree.root} does not have the series of {tree.target} applied (as selected here), "
            "so a new patch would undo or repeat its changes; nothing written",
            hint=f"`patchkit apply --target {tree.target}{includes}` first (same --set), "
            "then make the edits and record them",
        )


def _refresh(
    tree: Tree,
    series: Sequence[PatchMeta],
    meta: PatchMeta,
    blobs: Blobs,
    paths: Sequence[str],
    project: Path,
) -> RecordReport:
    if meta.kind is not PatchKind.DIFF:
        raise ConfigError(
            f"{meta.id} is a rewrite ({meta.file}); edit the rewrite module instead of recording"
        )
    index = series.index(meta)
    files = sorted(set(touched_paths(meta)) | set(paths))
    later = [p.id for p in series[index + 1 :] if set(touched_paths(p)) & set(files)]
    if later:
        raise TreeError(
            f"cannot refresh {meta.id}: later patches {', '.join(later)} change the same files",
            hint="refresh the last patch of the series that touches them, or reset and re-apply",
        )
    before = _expected(tree, series[:index], blobs)
    diff = unified_diff(link_deltas(tree, before, files))
    if not diff:
        raise TreeError(f"refreshing {meta.id} would leave an empty patch; nothing written")
    changed = diff != meta.file.read_bytes()
    if changed:
        with project_writes(project, command="record") as writes:
            writes.put(meta.file, diff)
            writes.then(lambda: _update_state_digest(tree, meta, diff, files))
    return RecordReport(meta.id, meta.file, tuple(files), changed)


def _note_applied(
    store: StateStore,
    state: State | None,
    tree: Tree,
    patch_id: str,
    set_name: str,
    diff: bytes,
    deltas: Sequence[FileDelta],
) -> None:
    """The tree now has the new patch applied: say so in the state. A file patchkit had not
    touched yet gets its original from upstream (the committed file), never from the edits."""
    files = dict(state.files) if state else {}
    upstream = upstream_view(tree, committed=True)
    for d in deltas:
        old = files.get(d.path)
        if old is None:
            content = upstream.read(d.path)
            original = store.put(content) if content is not None else None
            mode = upstream.mode(d.path) if content is not None else None
            old = FileRecord(d.path, original, mode, None, None)
        files[d.path] = replace(old, result=_sha(d.after))
    paths = tuple(d.path for d in deltas)
    applied = AppliedPatch(
        patch_id, set_name, PatchKind.DIFF, sha256(diff), Outcome.APPLIED, Step.EXACT, paths
    )
    patches = (*(state.patches if state else ()), applied)
    target = state.target if state else tree.target
    store.save(
        State(
            target,
            state.commit if state else None,
            state.lock_version if state else "",
            patches,
            files,
        )
    )


def _update_state_digest(tree: Tree, meta: PatchMeta, diff: bytes, files: Sequence[str]) -> None:
    store = StateStore(tree.state_dir)
    state = store.load()
    if state is None or state.patch(meta.id) is None:
        return
    patches = tuple(
        replace(p, digest=sha256(diff), files=tuple(files)) if p.id == meta.id else p
        for p in state.patches
    )
    records = dict(state.files)
    for path in files:
        if path in records:
            records[path] = replace(records[path], result=_sha(tree.read(path)))
    store.save(replace(state, patches=patches, files=records))


def record_target(
    *,
    project: Project,
    target: str,
    patch_id: str,
    checkout: Path | None = None,
    include: Sequence[str] = (),
    into: str | None = None,
    title: str = "",
    why: str = "",
    author: str = "",
    paths: Sequence[str] = (),
) -> RecordReport:
    """Turn the edits in a checkout of ``target`` into the diff patch ``patch_id``: a new patch in
    the set ``into`` (or the target's only set), or a refresh of the patch of that id."""
    entry = project.entry(target)
    tree = open_checkout(entry, checkout)
    series = project.patches(target, include=tuple(include))
    patch_set = _set_for(project, target, series, patch_id, into)
    blobs = blobs_for(entry, tree)
    try:
        with project_lock(project.root, command="record"), writing(tree, "record"):
            return record(
                tree=tree,
                patch_set=patch_set,
                series=series,
                patch_id=patch_id,
                blobs=blobs,
                title=title,
                why=why,
                author=author,
                paths=list(paths),
            )
    finally:
        blobs.close()


def _set_for(
    project: Project, target: str, series: Sequence[PatchMeta], patch_id: str, into: str | None
) -> PatchSet:
    """The set of the patch being refreshed; for a new patch (its id free in every set), the
    set ``into``, or the target's only set."""
    existing = next((p for p in series if p.id == patch_id), None)
    if existing is None:
        refuse_taken(patch_id, [p for s in project.sets for p in s.patches], None)
    set_name = existing.set_name if existing else into
    candidates = [
        s for s in project.sets if s.name == set_name or (not set_name and target in s.targets)
    ]
    if len(candidates) != 1:
        raise ConfigError("say which patch set gets the new patch with --into SET")
    return candidates[0]
