"""``patchkit verify --ray``: each patch's tests as Ray tasks on a cluster, one per GPU kind.

A task asks for what its tests need: one CPU; for a patch with GPU tests also ``num_gpus=1``
and the node's accelerator type (``accelerator_type:H100``) for each kind named by
``--gpu-kinds`` or the tests' ``gpu_kinds``. A GPU task is submitted only where a live node
offers a GPU of that kind (Ray would queue it forever): a named kind no node offers is
``not run: no node with a GPU of kind H100 in the cluster``; with no kind named and no GPU in the
cluster, the patch's tests run on a CPU worker, its GPU tests ``not run: no GPU``. Each task has
a timeout (twice ``--timeout``, tests on the patched and the unpatched tree, plus the tree's
preparation); SIGINT/SIGTERM end the wait and cancel the tasks. On the
worker, patchkit writes the project (lock and sets, sent as bytes) to a temporary directory,
makes a fresh tree at the lock from its own cache (fetching the release there once), applies
the series, runs that patch's tests exactly as a local ``verify`` does (on the patched tree,
and to prove it on a worktree of the unpatched one; ``--bench``: its benchmarks too) and sends
back the records with where they ran (node, GPU ids). A task whose worker dies is run once more, then reported ``not run`` with the reason.
The driver keeps the records as a local run would (in the cache; ``--record``: the set's
``verification.json``).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchkit.cluster import KIND_PREFIX, RETRIES, Died, connect, gather, offers_gpu
from patchkit.errors import SourceError, VerificationFailed
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.model import LockEntry, PatchMeta, SourceKind
from patchkit.ops.apply_tree import apply
from patchkit.ops.context import blobs_for
from patchkit.ops.verify import verify
from patchkit.ops.verify_bench import Unpatched, bench_with
from patchkit.project.load import Project, load_project
from patchkit.project.sets import patch_digest
from patchkit.upstream.sources import UpstreamRepo, fetch
from patchkit.verification.env import (
    DEFAULT_TIMEOUT_S,
    Environment,
    LocalRunner,
    probe_environment,
)
from patchkit.verification.records import Record, TestRecord, add_records, set_root_of
from patchkit.verification.run import _utcnow
from patchkit.workspace.tree import Tree, checkout_tree
from patchkit.workspace.treecheck import tree_commit


@dataclass(frozen=True)
class Snapshot:
    """The project a worker needs, as bytes: ``upstream.lock`` and the sets' files."""

    files: tuple[tuple[str, bytes], ...]

    @classmethod
    def of(cls, project: Project) -> Snapshot:
        found = [("upstream.lock", project.lock.path.read_bytes())]
        for patch_set in project.sets:
            for file in sorted(patch_set.root.rglob("*")):
                if file.is_file() and "__pycache__" not in file.parts:
                    rel = file.relative_to(project.root).as_posix()
                    found.append((rel, file.read_bytes()))
        return cls(tuple(found))

    def write(self, root: Path) -> Path:
        for rel, content in self.files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(content)
        return root


@dataclass(frozen=True)
class VerifyTask:
    snapshot: Snapshot
    sets: tuple[str, ...]
    target: str
    include: tuple[str, ...]  # opt-in patches applied with the series
    patch_id: str
    kind: str | None  # the GPU kind asked for; None: any node
    timeout_s: float = DEFAULT_TIMEOUT_S
    python: str | None = None  # the interpreter on the worker that runs the tests
    bench: bool = False  # also time the patch's [[bench]] (unpatched vs patched)


@dataclass(frozen=True)
class TaskResult:
    records: tuple[dict[str, Any], ...]  # Record.to_json(), as a local run writes them
    node: str = ""  # the Ray node it ran on
    resources: dict[str, float] = field(default_factory=dict)  # what Ray assigned it
    gpu_ids: tuple[str, ...] = ()  # the GPUs Ray gave it (CUDA_VISIBLE_DEVICES on the node)
    duration_s: float = 0.0  # the task's wall time on the worker


@dataclass(frozen=True)
class RayVerifyReport:
    records: tuple[Record, ...]
    placed: tuple[tuple[str, str | None, TaskResult | None], ...]  # (patch, kind, result)
    written: tuple[Path, ...] = ()

    def tasks(self) -> list[dict[str, Any]]:
        """Per record (in order; one per planned task), the task that made it: node, GPU ids,
        wall time; a record no task made (not submitted, or its task died): "not placed"."""
        out: list[dict[str, Any]] = []
        for rec, (_, _, result) in zip(self.records, self.placed, strict=True):
            if result is None or not result.node:
                out.append({"patch": rec.patch, "placed": "not placed"})
                continue
            gpus = ",".join(result.gpu_ids) or "none"
            where = f"node {result.node[:8]}, GPU {gpus}, {result.duration_s:.0f} s"
            out.append(
                {
                    "patch": rec.patch,
                    "placed": where,
                    "node": result.node,
                    "gpu_ids": list(result.gpu_ids),
                    "duration_s": result.duration_s,
                }
            )
        return out


def raise_for_ray(report: RayVerifyReport, *, strict: bool = False) -> None:
    """VerificationFailed (exit 7) when a patch failed on the cluster, or with ``strict`` was
    not run or not proven there."""
    bad = [r for r in report.records if r.result == "failed"]
    not_run = [r for r in report.records if r.result == "not run" or r.proof != "proven"]
    if bad or (strict and not_run):
        raise VerificationFailed(
            "verification on Ray: "
            + "; ".join(
                f"{r.patch} {r.proof or r.result} ({r.reason or r.proof_reason})"
                for r in bad + not_run
            ),
            hint="see the table above: each record names the GPU kind it ran on",
        )


# -- on the worker ----------------------------------------------------------------------------
def run_task(task: VerifyTask) -> TaskResult:
    """Prepare the patched tree from this node's cache and run one patch's tests there, and on
    a worktree of the unpatched tree to prove it."""
    import time

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="patchkit-verify-") as tmp:
        root = task.snapshot.write(Path(tmp) / "project")
        project = load_project(root, list(task.sets) or None)
        entry = project.entry(task.target)
        patches = project.patches(task.target, include=task.include)
        with _fresh_tree(entry, Path(tmp) / "tree") as tree, contextlib.ExitStack() as stack:
            blobs = blobs_for(entry, tree)
            try:
                apply(tree=tree, entry=entry, patches=patches, blobs=blobs)
            finally:
                blobs.close()
            meta = next(p for p in patches if p.id == task.patch_id)
            unpatched = Unpatched(stack, tree, None)
            report = verify(
                tree_root=tree.root,
                patches=[meta],
                lock=project.lock,
                runner=LocalRunner(),
                python=task.python,
                tree_commit=tree_commit(tree),
                record=False,
                timeout_s=task.timeout_s,
                unpatched=unpatched,
                bench=_bench(task, unpatched, tree.root) if task.bench else None,
            )
    node, resources, gpus = _placement()
    records = tuple(r.to_json() for r in report.records)
    return TaskResult(records, node, resources, gpus, round(time.monotonic() - start, 1))


def _bench(task: VerifyTask, unpatched: Unpatched, after: Path) -> Any:
    import sys

    python = task.python or sys.executable
    env = probe_environment(python)
    return bench_with(before=unpatched.required(), after=after, env=env, python=python)


def _placement() -> tuple[str, dict[str, float], tuple[str, ...]]:
    import sys

    ray = sys.modules.get("ray")  # never imported (nor a Ray started) outside a Ray worker
    if ray is None or not ray.is_initialized():
        return "", {}, ()
    context = ray.get_runtime_context()
    gpus = tuple(str(g) for g in ray.get_gpu_ids())
    return context.get_node_id(), dict(context.get_assigned_resources()), gpus


@contextlib.contextmanager
def _fresh_tree(entry: LockEntry, path: Path) -> Iterator[Tree]:
    """A throwaway worktree at the lock: from this node's cache, or from the path source's own
    repository; removed afterwards."""
    if entry.source.kind is not SourceKind.PATH:
        fetch(entry, into=path)
        try:
            yield checkout_tree(path, entry.name)
        finally:
            with UpstreamRepo(entry.name) as repo:
                repo.remove_tree(path)
        return
    source = Path(entry.source.path or "")
    if not is_repo(source):
        raise SourceError(f"{entry.name}: the source path {source} is not a git repository")
    with GitRepo(source) as repo:
        repo.add_worktree(path, entry.commit)
        try:
            yield checkout_tree(path, entry.name)
        finally:
            repo.remove_worktree(path)


# -- on the driver ----------------------------------------------------------------------------
Task = Callable[[VerifyTask], TaskResult]
SETUP_S = 900.0  # a task's time to make and patch its tree, besides its tests' timeouts


def verify_on_ray(
    *,
    project: Project,
    target: str,
    address: str,
    include: tuple[str, ...] = (),
    only: tuple[str, ...] = (),
    gpu_kinds: Sequence[str] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
    record: bool = True,
    tracked: bool = False,
    python: str | None = None,
    bench: bool = False,
    task: Task = run_task,
) -> RayVerifyReport:
    """Each selected patch's tests as Ray tasks (per GPU kind); the records, written like a
    local run's unless ``record`` is false. Never waits forever (see the module's text)."""
    ray = connect(address)
    patches = project.patches(target, include=include, only=only)
    snapshot = Snapshot.of(project)
    sets = tuple(s.name for s in project.sets)
    plans = [(m, k) for m in patches for k in kinds_for(m, gpu_kinds, bench=bench)]
    placed = {(m.id, k): _gpu_for(ray, m, k, bench=bench) for m, k in plans}
    runnable = [(m, k) for m, k in plans if placed[(m.id, k)] is not None]
    remote = ray.remote(max_retries=RETRIES)(task)
    refs = [
        remote.options(**resources_for(m, k, gpu=bool(placed[(m.id, k)]))).remote(
            VerifyTask(snapshot, sets, target, include, m.id, k, timeout_s, python, bench)
        )
        for m, k in runnable
    ]
    wait_s = (2 * timeout_s + SETUP_S) * max(1, len(refs))
    results = gather(ray, refs, timeout_s=wait_s)
    done = dict(zip([(m.id, k) for m, k in runnable], results, strict=True))
    records, where = _collect(plans, done, project.entry(target), address)
    written = _write(patches, records, tracked) if record else ()
    return RayVerifyReport(tuple(records), tuple(where), written)


def _gpu_for(ray: Any, meta: PatchMeta, kind: str | None, *, bench: bool = False) -> bool | None:
    """Whether the patch's task asks for a GPU; None: it is not submitted at all (a kind named
    that no live node offers with a GPU). With no kind named and no GPU anywhere, the task runs
    on a CPU worker: its CPU tests run, its GPU tests are not run there."""
    if not needs_gpu(meta, bench=bench):
        return False
    if offers_gpu(ray, kind):
        return True
    return False if kind is None else None


def _collect(
    plans: Sequence[tuple[PatchMeta, str | None]],
    done: Mapping[tuple[str, str | None], object],
    entry: LockEntry,
    address: str,
) -> tuple[list[Record], list[tuple[str, str | None, TaskResult | None]]]:
    """Per planned (patch, GPU kind): the records its task sent back, or a `not run` record
    saying why (no node of that kind, the worker died)."""
    records: list[Record] = []
    placed: list[tuple[str, str | None, TaskResult | None]] = []
    for meta, kind in plans:
        result = done.get((meta.id, kind))
        if isinstance(result, TaskResult):
            records += [Record.from_json(r) for r in result.records]
            placed.append((meta.id, kind, result))
        else:
            records.append(not_run(meta, entry, kind, _why_not(kind, result, address)))
            placed.append((meta.id, kind, None))
    return records, placed


def needs_gpu(meta: PatchMeta, *, bench: bool = False) -> bool:
    """The patch has GPU tests, or (``bench``) benchmarks, which time GPU code."""
    return any(t.gpu for t in meta.tests) or (bench and bool(meta.benches))


def kinds_for(meta: PatchMeta, asked: Sequence[str], *, bench: bool = False) -> list[str | None]:
    """The GPU kinds a patch is proven on: ``--gpu-kinds``, else its tests' ``gpu_kinds``; a
    patch without GPU work runs once, anywhere (None)."""
    if not needs_gpu(meta, bench=bench):
        return [None]
    kinds = list(asked) or list(dict.fromkeys(k for t in meta.tests for k in t.gpu_kinds))
    return list(kinds) or [None]


def resources_for(meta: PatchMeta, kind: str | None, *, gpu: bool | None = None) -> dict[str, Any]:
    """What the task of ``meta`` asks Ray for: a CPU, and a GPU (of ``kind``) when it has GPU
    tests and ``gpu`` is not False."""
    gpu = any(t.gpu for t in meta.tests) if gpu is None else gpu
    options: dict[str, Any] = {"num_cpus": 1, "num_gpus": 1 if gpu else 0}
    if kind is not None:
        options["resources"] = {f"{KIND_PREFIX}{kind}": 0.001}
    return options


def _why_not(kind: str | None, result: object, address: str) -> str:
    if isinstance(result, Died):
        return f"the Ray task failed after {RETRIES} retry: {result.reason}"
    return f"no node with a GPU of kind {kind} in the cluster ({address})"


def not_run(meta: PatchMeta, entry: LockEntry, kind: str | None, why: str) -> Record:
    env = Environment(python="", platform="ray cluster", gpu=kind)
    tests = tuple(TestRecord(t.node, t.where, "not run", why) for t in meta.tests)
    when = _utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    return Record(
        meta.id, patch_digest(meta), meta.target, entry.commit, entry.version, None,
        "not run", why, tests, env, when, 0.0,
    )  # fmt: skip


def _write(
    patches: Sequence[PatchMeta], records: Sequence[Record], tracked: bool
) -> tuple[Path, ...]:
    roots = {m.id: set_root_of(m) for m in patches}
    by_set: dict[Path, list[Record]] = {}
    for rec in records:
        by_set.setdefault(roots[rec.patch], []).append(rec)
    return tuple(add_records(root, recs, tracked=tracked) for root, recs in by_set.items())
