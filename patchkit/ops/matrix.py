"""``patchkit matrix``: every patch of a target's sets x every upstream release in a range, each
cell the outcome the engine gives there, with the last verification recorded for it.

The releases are brought into the cache first (once; ``fetch_s``), then every cell not already
in the store is computed by the executor (a local process pool by default, Ray with ``--ray``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from patchkit import progress
from patchkit.engine.probe import chain_for
from patchkit.matrix.cells import CellJob, CellValue, PatchFile, cell_key, engine_version
from patchkit.matrix.execute import Executor, Serial
from patchkit.matrix.store import CellStore
from patchkit.matrix.table import (
    Cell,
    Matrix,
    Run,
    Verified,
    absorbed_at,
    assemble_rows,
    select_points,
)
from patchkit.model import LockEntry, PatchMeta, SourceKind
from patchkit.project.load import Project
from patchkit.targets import commits_match
from patchkit.upstream.history import History, Point, open_history
from patchkit.verification.proof import proof_text
from patchkit.verification.records import (
    BenchRecord,
    Record,
    load_records,
    same_code,
    set_root_of,
)
from patchkit.workspace.tree import sha256


def matrix(
    *,
    project: Project,
    target: str,
    releases: str = "",
    executor: Executor | None = None,
    store: CellStore | None = None,
    history: History | None = None,
    prefetch: bool = True,
    only: Sequence[str] = (),
) -> Matrix:
    """The matrix of ``target`` over ``releases`` (``FROM..TO``, ``all``; default: the lock's
    release to the newest). With ``prefetch``, releases are fetched here before the cells run
    (a Ray run leaves that to each node). ``only``: the rows of these patches alone (each still
    judged after the patches it runs after)."""
    entry = project.entry(target)
    hist = history or open_history(entry)
    own_store = store is None
    cells_store = store or CellStore()
    try:
        base, points = hist.start(), select_points(hist, releases)
        fetch_s = _prefetched(hist, [base, *points]) if prefetch else 0.0
        patches = project.listed(target)
        jobs = plan(entry, base, points, patches)
        if only:
            patches = [p for p in patches if p.id in only]
            jobs = {key: job for key, job in jobs.items() if key[0] in only}
        values, run = _values(jobs, cells_store, executor or Serial())
        run = replace(run, fetch_s=round(fetch_s, 3))
        labels = [hist.version(p) for p in points]
        verified = verifications(entry, patches, points, labels)
        return _assemble(entry, hist.version(base), patches, labels, jobs, values, verified, run)
    finally:
        if own_store:
            cells_store.close()
        if history is None:
            hist.close()


def _prefetched(hist: History, points: Sequence[Point]) -> float:
    """Each release among ``points`` fetched (a download, the first time); the seconds it took."""
    started = time.perf_counter()
    unique = {hist.version(p): p for p in points}
    for point in progress.steps(unique.values(), "release", hist.version):
        hist.commit(point)
    return time.perf_counter() - started


def cells_at(
    *, project: Project, target: str, ref: str, patch_ids: Sequence[str] = ()
) -> tuple[str, dict[str, CellValue]]:
    """One row of the matrix: each listed patch of ``target`` (or only ``patch_ids``) at the
    release or commit ``ref`` (``latest``: the newest release; ``HEAD`` for a git source),
    judged against the lock as a matrix cell is; cells a matrix already computed are reused.
    Returns the release's label and patch id -> its cell."""
    entry = project.entry(target)
    hist = open_history(entry)
    store = CellStore()
    try:
        is_index = entry.source.kind is SourceKind.INDEX
        base = hist.start()
        point = hist.resolve(ref if is_index or ref != "latest" else "HEAD")
        for p in (base, point):
            hist.commit(p)
        jobs = {
            pid: job
            for (pid, _), job in plan(entry, base, [point], project.listed(target)).items()
            if not patch_ids or pid in patch_ids
        }
        values, _ = _values({(pid, 0): j for pid, j in jobs.items()}, store, Serial())
        return hist.version(point), {pid: values[job.key] for pid, job in jobs.items()}
    finally:
        store.close()
        hist.close()


def plan(
    entry: LockEntry, base: Point, points: Sequence[Point], patches: Sequence[PatchMeta]
) -> dict[tuple[str, int], CellJob]:
    """(patch id, release index) -> the job computing that cell."""
    files = {m.id: PatchFile.of(m) for m in patches}
    jobs = {}
    for meta in patches:
        chain = tuple(files[m.id] for m in chain_for(patches, meta.id))
        for i, point in enumerate(points):
            jobs[(meta.id, i)] = CellJob(
                entry, base, point, chain, cell_key(entry, base, point, chain)
            )
    return jobs


def _values(
    jobs: dict[tuple[str, int], CellJob], store: CellStore, executor: Executor
) -> tuple[dict[str, CellValue], Run]:
    started = time.perf_counter()
    keys = {job.key for job in jobs.values()}
    known = store.get_many(keys)
    todo = list({j.key: j for j in jobs.values() if j.key not in known}.values())
    computed = dict(zip([j.key for j in todo], executor.run(todo), strict=True))
    store.put_many({k: v for k, v in computed.items() if not v.detail.get("died")})
    cells_s = time.perf_counter() - started
    total = sum(v.seconds for v in computed.values())
    reused = len(keys) - len(computed)
    run = Run(executor.name, len(computed), reused, 0.0, round(cells_s, 3), round(total, 3))
    return {**known, **computed}, run


def _assemble(
    entry: LockEntry,
    locked: str,
    patches: Sequence[PatchMeta],
    labels: Sequence[str],
    jobs: dict[tuple[str, int], CellJob],
    values: dict[str, CellValue],
    verified: Verified,
    run: Run,
) -> Matrix:
    outcomes = {(pid, labels[i]): values[j.key].outcome for (pid, i), j in jobs.items()}
    cells = []
    for meta in patches:
        row = [outcomes[(meta.id, label)] for label in labels]
        for i, label in enumerate(labels):
            value = values[jobs[(meta.id, i)].key]
            absorbed = absorbed_at(labels, row, i)
            kinds = verified.get((meta.id, label))
            cells.append(
                Cell(meta.id, label, value.outcome, value.step, absorbed, kinds, value.detail)
            )
    rows = assemble_rows(patches, labels, outcomes)
    return Matrix(
        entry.name, locked, tuple(labels), tuple(rows), tuple(cells), engine_version(), run
    )


# -- verification records ---------------------------------------------------------------------
def verifications(
    entry: LockEntry, patches: Sequence[PatchMeta], points: Sequence[Point], labels: Sequence[str]
) -> Verified:
    """(patch, release) -> GPU kind -> the newest record of that patch at that release there."""
    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    by_set: dict[str, list[Record]] = {}
    for meta in patches:
        root = set_root_of(meta)
        records = by_set.setdefault(str(root), load_records(root))
        digest = sha256(meta.file.read_bytes())
        for record in records:  # oldest first: the newest of a kind wins
            label = _release_of(entry, record, points, labels)
            if record.patch == meta.id and label is not None:
                kinds = found.setdefault((meta.id, label), {})
                kinds[record.environment.kind] = _summary(record, digest)
    return found


def _release_of(
    entry: LockEntry, record: Record, points: Sequence[Point], labels: Sequence[str]
) -> str | None:
    for point, label in zip(points, labels, strict=True):
        if record.lock_version == label:
            return label
        if entry.source.kind is not SourceKind.INDEX and commits_match(
            record.lock_commit, point.ref
        ):
            return label
    return None


def _summary(record: Record, digest: str) -> dict[str, Any]:
    summary = {
        "result": proof_text(record),  # "proven", "proves nothing", ... (verification.proof)
        "tests_result": record.result,
        "reason": record.reason,
        "time": record.time,
        "stale": record.digest != digest,  # the patch changed since
        "environment": record.environment.describe(),
    }
    if record.bench:  # `verify --bench` figures: speed before and after the patch
        summary["bench"] = [_bench(b) for b in record.bench]
    return summary


def _bench(b: BenchRecord) -> dict[str, Any]:
    keep = ("bench", "case", "metric", "status", "before", "after", "ratio", "slower")
    found = {k: getattr(b, k) for k in keep}
    if same_code(b):  # a ratio of noise: shown as "same code", never as x1.00
        found.update(status="same code", ratio=None)
    return found
