"""Recording a full ``apply`` or ``status`` for the warm path (``ops/warm.py``): what it printed,
what it wrote, and every input it depended on (``workspace/replay.py``):

- the project: the lock (and that no nearer directory has one), the patch sets' directory,
  each set's manifest, every file beside its patches and the directory listing them, its
  verification records (tracked, and this machine's in the cache);
- patchkit's own code (every module, and the directories holding them) and the parser
  libraries its results stand on (libcst, tree-sitter and its grammars: each one's
  ``.dist-info`` metadata and the directory holding it, which an upgrade changes);
- the tree: the files the run read (kept as it read them), those it judged by their
  fingerprint alone, every directory under those it listed (each entry's name and type), the
  files that name its commit and pins, git's ``HEAD``, the ref it names and the index, the
  state and the journal.

No record is made when the run recovered an interrupted write, found a state (an apply
replays only onto a tree without patchkit's changes, as after ``reset``), when an input
changed in the two seconds before the run or while it ran, or when a directory it listed
holds a link (whose target, not the directory, says whether it is listed as a file).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import patchkit
from patchkit import cacheroot
from patchkit.cache import Cache
from patchkit.engine.fingerprint import LIBRARIES
from patchkit.ops.apply import TargetApply
from patchkit.ops.apply_tree import ApplyTrace
from patchkit.ops.status import StatusReport
from patchkit.project.load import Project
from patchkit.targets import profile
from patchkit.verification.records import records_path
from patchkit.workspace import replay
from patchkit.workspace.installed import InstalledTree
from patchkit.workspace.journal import Entry, Write, file_entry, journal_path, journal_text
from patchkit.workspace.links import LINK
from patchkit.workspace.mounts import stat_is_fresh
from patchkit.workspace.replay import Record
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree, checkout_tree, sha256


def project_inputs(start: Path, project: Project) -> list[str]:
    """The files and directories (ending in "/") loading ``project`` from ``start`` reads."""
    found = [
        str(directory / "upstream.lock")
        for directory in (start.resolve(), *start.resolve().parents)
        if directory != project.root and project.root in directory.parents
    ]  # none of them has a lock
    found.append(str(project.root / "upstream.lock"))
    base = project.root / "patchsets"
    found.append(f"{base}/")
    for name in sorted(os.listdir(base)) if base.is_dir() else []:
        root = base / name
        found += [str(root / "patchset.toml"), f"{root / 'patches'}/"]
        found += [str(records_path(root)), str(records_path(root, tracked=False))]
        patches = root / "patches"
        with os.scandir(patches) if patches.is_dir() else _nothing() as entries:
            found += [entry.path for entry in entries if not entry.is_dir(follow_symlinks=False)]
    return found


class _nothing:
    def __enter__(self) -> list[os.DirEntry[str]]:
        return []

    def __exit__(self, *exc: object) -> None:
        return None


def code_inputs() -> list[str]:
    """patchkit's modules and the directories holding them; for each parser library, its
    ``.dist-info`` metadata and the directory holding that (every directory of the import
    path, for one not installed: where it would appear)."""
    found = []
    for directory, dirs, files in os.walk(os.path.dirname(os.path.abspath(patchkit.__file__))):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.append(f"{directory}/")
        found += [os.path.join(directory, name) for name in sorted(files) if name.endswith(".py")]
    for distribution, module in LIBRARIES:
        found += _library_inputs(distribution, module)
    return found


def _library_inputs(distribution: str, module: str) -> list[str]:
    spec = importlib.util.find_spec(module)
    places = (spec.submodule_search_locations or [spec.origin or ""]) if spec else []
    stem = distribution.replace("-", "_").lower()
    for place in places:
        folder = os.path.dirname(place)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            info, _, version = name.removesuffix(".dist-info").partition("-")
            if name.endswith(".dist-info") and version and info.lower() == stem:
                return [f"{folder}/", os.path.join(folder, name, "METADATA")]
    return [f"{os.path.abspath(p or '.')}/" for p in sys.path if os.path.isdir(p or ".")]


def listing_inputs(tree: Tree, listed: Mapping[str, Iterable[str]]) -> dict[str, bytes] | None:
    """Every directory under those the run listed (``listed``: what it found under each), with
    its entries read now; None when they no longer give what the run found, or hold a link."""
    state = os.path.realpath(tree.state_dir)
    found: dict[str, bytes] = {}
    for directory, files in listed.items():
        seen: list[str] = []
        pending = [(directory, os.path.join(tree.root, directory).rstrip("/") + "/")]
        while pending:
            prefix, place = pending.pop()
            entries = replay.read(place)
            if entries is None:
                return None  # gone since
            found[place] = entries
            for line in entries.decode(errors="surrogateescape").split("\n") if entries else []:
                name, kind = line.split("\0")
                path = f"{prefix}/{name}" if prefix else name
                if kind == "l":
                    return None
                if kind != "d":
                    seen.append(path)
                elif name != ".git" and os.path.realpath(place + name) != state:
                    pending.append((path, f"{place}{name}/"))
        if sorted(seen) != sorted(files):
            return None
    return found


def tree_inputs(tree: Tree) -> list[str]:
    """The tree's files that say which commit it is at and what it pins, and git's ``HEAD``,
    the ref it names and the index (the clean check asks git)."""
    found = []
    prof = profile(tree.target)
    for path in (prof.version_file, prof.pins_file) if prof else ():
        if path and tree.holds(path):
            found.append(str(tree.place(path)))
    git_dir = tree.state_dir.parent
    found += [str(git_dir / "HEAD"), str(git_dir / "index"), str(git_dir / "commondir")]
    head = replay.read(str(git_dir / "HEAD")) or b""
    if head.startswith(b"ref: "):
        common = replay.read(str(git_dir / "commondir"))
        refs = (git_dir / common.decode().strip()).resolve() if common else git_dir
        found += [str(refs / head[5:].decode().strip()), str(refs / "packed-refs")]
    return found


def _keep(key: str, record: Record, project: Project, said: tuple[str, str]) -> None:
    """Keep ``record`` as ``key`` in the cache, with where the project is and what the run
    printed."""
    record.project, (record.stdout, record.stderr) = str(project.root), said
    cache = Cache.current()
    replay.store(str(cache.dir("warm")), cacheroot.sealing_key(cache.root), key, record)


def record_apply(
    key: str,
    *,
    started_ns: int,
    start: Path,
    project: Project,
    done: TargetApply,
    said: tuple[str, str],
) -> bool:
    """Keep what this apply did for a warm run; False when it cannot be replayed."""
    report, tree, trace = done.report, done.tree, done.report.trace
    if report.noop and report.recovered is None and not isinstance(tree, InstalledTree):
        record = _reading("apply-again", started_ns, start, project, tree)
        if record is not None:  # (as an apply over its own result: nothing to write)
            _keep(f"{key}-again", record, project, said)
        return record is not None
    if trace is None or trace.state is None or trace.state_before is not None:
        return False  # a no-op, or applied over earlier changes: nothing to replay
    if report.recovered is not None or isinstance(tree, InstalledTree):
        return False
    record = _replayable(tree, trace, started_ns, start, project)
    if record is None:
        return False
    _keep(key, record, project, said)
    return True


def _replayable(
    tree: Tree, trace: ApplyTrace, started_ns: int, start: Path, project: Project
) -> Record | None:
    """The record of an apply that wrote ``tree`` (``trace``), with every input it read as it
    read it; None when the tree has moved on since (a later write, a file changed)."""
    store = StateStore(tree.state_dir)
    state_bytes = replay.read(str(store.file))
    if state_bytes is None or sha256(state_bytes) != StateStore.render(trace.state):
        return None  # written again since (another apply)
    record = _written(store, tree, trace.writes, trace)
    listings = listing_inputs(tree, trace.listed)
    if record is None or listings is None:
        return None
    known: dict[str, tuple[bytes | None, int | None]] = {
        str(tree.place(path)): (content, trace.modes.get(path))
        for path, content in trace.read.items()
    }
    known.update((place, (entries, None)) for place, entries in listings.items())
    known[str(store.file)] = known[str(journal_path(store))] = (None, None)
    paths = [str(tree.place(p)) for p in sorted(trace.fingerprinted - set(trace.read))]
    paths = [*project_inputs(start, project), *code_inputs(), *tree_inputs(tree), *paths]
    inputs = replay.snapshot(paths, started_ns, known, stat_is_fresh)
    if inputs is None:
        return None
    record.inputs, record.state = inputs, store.put(state_bytes)
    record.dirs = _in_tree(inputs, str(tree.root), record.dirs)
    return record


def _written(
    store: StateStore, tree: Tree, writes: Iterable[Write], trace: ApplyTrace
) -> Record | None:
    """The record of what the run wrote: the files' bytes kept as one object of the state
    store (one write, one read to replay, not one per file), each file by its digest, offset
    and length; the journal ``txn.commit`` writes for them; the directories they go in. None
    when a file is no longer as the run wrote it (what it printed may not hold), or the run
    did not read it before (its original is not known)."""
    record = Record("apply", **_where(tree))
    parts, offset, files, dirs = [], 0, {}, {str(tree.root)}
    for write in writes:
        place = str(tree.place(write.path))
        sha = replay.digest(write.content)
        if write.path not in trace.read or write.path not in trace.modes:
            return None  # (its original, or its mode, is not known)
        if LINK in (write.mode, trace.modes[write.path]):
            return None  # a symbolic link: written by the full path alone (``places``)
        if replay.digest(replay.read(place)) != sha:
            return None
        size = len(write.content) if write.content is not None else 0
        mode = "" if write.mode is None else str(write.mode)
        record.writes += [write.path, place, sha, mode, str(offset), str(size)]
        parts.append(write.content or b"")
        offset += size
        original = trace.read[write.path]
        before = None if original is None else store.put(original)
        files[write.path] = file_entry(before, trace.modes[write.path], sha or None, write.mode)
        dirs.update(_parents(place, str(tree.root)))
    record.pack, record.dirs = store.put(b"".join(parts)), sorted(dirs)
    record.saved = sorted({str(f["before"]) for f in files.values() if f["before"]})
    record.journal = _journal(files)
    return record


def _in_tree(inputs: list[str], root: str, dirs: list[str]) -> list[str]:
    """``dirs`` and every directory of the tree an input lies in (each must be a real
    directory when the record is replayed: never a link, as the full path's reads refuse)."""
    found = {root, *dirs}
    for path in inputs[:: replay.INPUT]:
        found.update(_parents(path.rstrip("/"), root))
    return sorted(found)


def _parents(place: str, root: str) -> list[str]:
    """The directories between ``root`` and the file at ``place``."""
    found, parent = [], os.path.dirname(place)
    while parent.startswith(root + os.sep):
        found.append(parent)
        parent = os.path.dirname(parent)
    return found


def _journal(files: dict[str, Entry]) -> list[str]:
    """The text of the journal ``txn.commit`` writes before it writes these files, cut where
    the writer's process id goes."""
    head, _, tail = journal_text("apply", -1, files, None).partition('"pid": -1')
    return [f'{head}"pid": ', tail]


def _where(tree: Tree) -> dict[str, Any]:
    """Where the tree is, and the git directories it may never write into."""
    return {
        "root": str(tree.root),
        "state_dir": str(tree.state_dir),
        "target": tree.target,
        "fenced": list(tree.fenced),
    }


def record_status(
    key: str,
    *,
    started_ns: int,
    start: Path,
    project: Project,
    report: StatusReport,
    said: tuple[str, str],
) -> bool:
    """Keep what this status printed for a warm run; False when it cannot be replayed."""
    if report.pending is not None:
        return False
    tree = checkout_tree(Path(report.root), report.target)
    record = _reading("status", started_ns, start, project, tree)
    if record is not None:
        _keep(key, record, project, said)
    return record is not None


def _reading(
    command: str, started_ns: int, start: Path, project: Project, tree: Tree
) -> Record | None:
    """The record of a run that read the tree and wrote nothing (``status``, an ``apply``
    over its own result): the project, the code, the tree's commit, the journal, the state
    and every file it names."""
    store = StateStore(tree.state_dir)
    state = store.load()
    files: Iterable[str] = state.files if state else ()
    paths = [
        *project_inputs(start, project),
        *code_inputs(),
        *tree_inputs(tree),
        str(journal_path(store)),  # (first: a writer saves it before anything else)
        *(str(tree.place(path)) for path in sorted(files)),
        str(store.file),
    ]
    inputs = replay.snapshot(paths, started_ns, {}, stat_is_fresh)
    if inputs is None:
        return None
    dirs = _in_tree(inputs, str(tree.root), [])
    return Record(command, inputs=inputs, dirs=dirs, **_where(tree))
