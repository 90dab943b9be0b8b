"""Running cell jobs: here, in a local process pool sized to the machine (the default), or as
Ray tasks on a cluster. Every executor takes jobs and returns values in the same order."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from patchkit import progress
from patchkit.matrix.cells import CellJob, CellValue, compute_cell
from patchkit.outcome import Outcome

Compute = Callable[[CellJob], CellValue]


class Executor(Protocol):
    @property
    def name(self) -> str: ...  # "serial", "pool of 2", "ray at ..."

    def run(self, jobs: Sequence[CellJob]) -> list[CellValue]: ...


def machine_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class Serial:
    compute: Compute = compute_cell
    name: str = "serial"

    def run(self, jobs: Sequence[CellJob]) -> list[CellValue]:
        return [self.compute(job) for job in progress.counting(jobs, len(jobs), "cell")]


@dataclass
class LocalPool:
    workers: int
    compute: Compute = compute_cell

    @property
    def name(self) -> str:
        return f"pool of {self.workers}"

    def run(self, jobs: Sequence[CellJob]) -> list[CellValue]:
        if self.workers < 2 or len(jobs) < 2:
            return Serial(self.compute).run(jobs)
        methods = multiprocessing.get_all_start_methods()
        # fork: workers start in milliseconds with everything imported; they touch none of
        # the parent's open repositories or store
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        workers = min(self.workers, len(jobs))
        # contiguous chunks: a worker sees a patch at neighbouring releases, whose files
        # mostly did not change, so what it parsed for one it reuses for the next
        chunk = min(-(-len(jobs) // (workers * 2)), 4)  # small: progress comes as they end
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            done = pool.map(self.compute, jobs, chunksize=chunk)
            return list(progress.counting(done, len(jobs), "cell"))


@dataclass
class OnRay:
    """Each cell a Ray task (one CPU; retried once when its worker dies). Each node reads the
    releases from its own cache, fetching a missing one there once."""

    address: str
    compute: Compute = compute_cell

    @property
    def name(self) -> str:
        return f"ray at {self.address}"

    def run(self, jobs: Sequence[CellJob]) -> list[CellValue]:
        from patchkit.cluster import RETRIES, Died, connect, gather

        ray = connect(self.address)
        task = ray.remote(num_cpus=1, max_retries=RETRIES)(self.compute)
        results: list[Any] = gather(ray, [task.remote(job) for job in jobs])
        return [_died(r) if isinstance(r, Died) else r for r in results]


def _died(died: Any) -> CellValue:
    why = {"message": f"not computed: {died.reason}", "died": True}
    return CellValue(Outcome.FAILED, "none", why)


def choose(*, ray_address: str | None, workers: int | None) -> Executor:
    if ray_address:
        return OnRay(ray_address)
    count = machine_workers() if workers is None else workers
    return LocalPool(count) if count > 1 else Serial()
