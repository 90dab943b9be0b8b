"""One cell of the matrix: one patch at one upstream release, computed on blobs in memory.

A :class:`CellJob` is a plain value (the lock entry, the release, the patch and the earlier
patches that share files with it, with their bytes), so it runs the same here, in a process
pool or as a Ray task on another machine. The worker reads the release from its own cache
(fetching it there once if missing), runs the patches with the rebase prober (the very
evaluation ``rebase`` and its bisection use), and returns a :class:`CellValue`. Nothing is
checked out, and nothing is written but the release itself when it was missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchkit import model, outcome
from patchkit.engine.fingerprint import engine_fingerprint
from patchkit.engine.probe import Prober
from patchkit.engine.rewrite import cache
from patchkit.engine.series import Blobs, patch_paths
from patchkit.model import LockEntry, PatchMeta, SourceKind
from patchkit.outcome import Outcome, PatchResult
from patchkit.project import sets, upstreamspec
from patchkit.upstream import absorbed as absorbed_module
from patchkit.upstream.absorbed import Absorbed, absorbed
from patchkit.upstream.history import History, IndexHistory, Point, open_history, same_files
from patchkit.upstream.sources import ReleaseStore, package_of
from patchkit.workspace.tree import sha256


@dataclass(frozen=True)
class PatchFile:
    meta: PatchMeta
    content: bytes  # the patch file's bytes: a worker without the project writes them out

    @classmethod
    def of(cls, meta: PatchMeta) -> PatchFile:
        return cls(meta, meta.file.read_bytes())


@dataclass(frozen=True)
class CellJob:
    entry: LockEntry
    base: Point  # the locked release: its files tell applied from carried
    point: Point  # the release of this cell
    chain: tuple[PatchFile, ...]  # the earlier patches sharing files with it, then the patch
    key: str  # the cell's key in the store (see :func:`cell_key`)

    @property
    def patch_id(self) -> str:
        return self.chain[-1].meta.id


@dataclass(frozen=True)
class CellValue:
    outcome: Outcome  # its value only in the store's JSON (to_json, from_json)
    step: str  # the engine step that produced it
    detail: dict[str, Any] = field(default_factory=dict)  # whatever the outcome value carries
    seconds: float = 0.0  # how long it took to compute

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "outcome": self.outcome.value}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CellValue:
        return cls(**{**raw, "outcome": Outcome(raw["outcome"])})


def engine_version() -> str:
    """The engine's fingerprint (all of ``patchkit/engine/`` and the parser libraries'
    versions): a changed engine never reuses an old cell."""
    return engine_fingerprint()[:16]


def release_id(entry: LockEntry, point: Point) -> str:
    """What names a release on every machine: an index release is immutable by version; a git
    point is its commit."""
    if entry.source.kind is SourceKind.INDEX:
        return f"{package_of(entry)}=={point.ref}"
    return point.ref


def cell_key(entry: LockEntry, base: Point, point: Point, chain: Sequence[PatchFile]) -> str:
    """(the patch's sha256 and its metadata's, with the patches it runs after, the release,
    the engine version and the code outside it that judges a cell), and the locked base it is
    judged against."""
    parts = [engine_version(), _judges(), release_id(entry, base), release_id(entry, point)]
    parts += [f"{p.meta.id}:{sha256(p.content)}:{_meta_digest(p.meta)}" for p in chain]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _meta_digest(meta: PatchMeta) -> str:
    """The metadata's bytes (a rewrite's ``files``, say, change what a cell computes)."""
    try:
        return sha256(meta.meta_file.read_bytes())
    except OSError:
        return ""


@functools.lru_cache(maxsize=1)
def _judges() -> str:
    """This module, the data model, the outcomes and the set reader: outside the engine, they
    still decide what a cell says (applied or carried, the detail kept)."""
    digest = hashlib.sha256()
    for module in (model, outcome, sets, upstreamspec, absorbed_module):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


# -- on the worker ----------------------------------------------------------------------------
def compute_cell(job: CellJob) -> CellValue:
    """The outcome of ``job``'s patch at ``job.point``; never raises for a broken patch."""
    start = time.perf_counter()
    with _materialised(job.chain) as metas, _history(job.entry, job) as history:
        base, commit = history.commit(job.base), history.commit(job.point)
        blobs = Blobs([history.repo.path])
        try:
            with cache.writes(False):  # nothing left in the cache but the releases
                prober = Prober(history, metas, blobs, job.base)
                prober.outcome(job.point, job.patch_id)
            result = prober.runs[job.point.ref][job.patch_id]
            paths = patch_paths(metas[-1])
            outcome = result.outcome.since_base(
                lambda: same_files(history.repo, base, commit, paths)
            )
            pr = _pr_in(metas[-1], history, job.point, commit)
        finally:
            blobs.close()
    seconds = round(time.perf_counter() - start, 3)
    if pr is not None:  # the release has the PR it carries, by its merge: absorbed, whatever
        detail = {**result_detail(result), "absorbed": pr.describe(), "engine": outcome.value}
        return CellValue(Outcome.UPSTREAMED, "merge-commit", detail, seconds)
    return CellValue(outcome, result.step.value, result_detail(result), seconds)


def _pr_in(meta: PatchMeta, history: History, point: Point, commit: str) -> Absorbed | None:
    """The PR the patch carries, when this release has it by its merge (``upstream.absorbed``)."""
    if not (meta.upstream.merge_commit or meta.upstream.released_in):
        return None
    version = history.version(point)
    return absorbed(meta.upstream, repo=history.repo, commit=commit, version=version)


@contextlib.contextmanager
def _history(entry: LockEntry, job: CellJob) -> Iterator[History]:
    """This machine's history of the target: releases come from its own cache."""
    history: History
    if entry.source.kind is SourceKind.INDEX:
        store = ReleaseStore(entry.name, package_of(entry))
        history = IndexHistory(entry, store, [job.base.ref, job.point.ref])
    else:
        history = open_history(entry)
        history.resolve(job.base.ref)  # a git mirror fetches what it lacks
        history.resolve(job.point.ref)
    try:
        yield history
    finally:
        history.close()


@contextlib.contextmanager
def _materialised(chain: Sequence[PatchFile]) -> Iterator[list[PatchMeta]]:
    """The chain's patches as files: the project's own when they are there with these bytes,
    else written to a temporary directory for the duration of the cell."""
    if all(_is_there(p) for p in chain):
        yield [p.meta for p in chain]
        return
    with tempfile.TemporaryDirectory(prefix="patchkit-cell-") as tmp:
        metas = []
        for p in chain:
            file = Path(tmp) / p.meta.set_name / p.meta.file.name
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(p.content)
            metas.append(dataclasses.replace(p.meta, file=file))
        yield metas


def _is_there(patch: PatchFile) -> bool:
    try:
        return patch.meta.file.read_bytes() == patch.content
    except OSError:
        return False


def result_detail(result: PatchResult) -> dict[str, Any]:
    """Every field the outcome value carries (message, conflict hunks, explanations, ...),
    as plain JSON values; file contents are left out."""
    skip = {"patch_id", "outcome", "step", "changes", "conflicted"}
    return {
        f.name: plain(getattr(result, f.name))
        for f in dataclasses.fields(result)
        if f.name not in skip
    }


def plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, Path):
        return str(value)
    return value
