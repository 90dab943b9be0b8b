"""Run rewrite patches: load the module, find the files its rewrites take, rewrite, judge, cache.

A rewrite patch is a Python module in a patch set holding one or more ``Rewrite`` subclasses
(see ``patchkit.engine.rewrite.base``), loaded and checked by ``load``. Here: a whole
patch's run. ``run_rewrite_patch`` never raises
for a broken patch or a drifted tree: every result is a ``PatchResult`` value. It

1. lists the candidate files of each rewrite from text alone (``patchkit.engine.rewrite.select``): its
   home file, plus the files under its ``search`` globs that pass the text prefilter;
2. looks each file's result up in the cache, keyed by the rewrite module's source (and declared
   files), the path, the input bytes and the engine's own source;
3. otherwise (``file``) parses with libcst once (no metadata providers), runs the
   rewrites that take the file, checks that the output parses (``ast``) and that a second run on the tree libcst holds
   changes nothing and finds every site present, and prints once; files are rewritten in
   parallel processes when several miss the cache (``prewarm``: across a whole series);
4. judges each anchor (``outcome``) over every candidate file together: its count (or range) of edit sites,
   and where each was found, so a rewrite follows code that moved to another file or function.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.rewrite import cache
from patchkit.engine.rewrite.deadline import bounded
from patchkit.engine.rewrite.file import rewrite_file
from patchkit.engine.rewrite.load import load_rewrites
from patchkit.engine.rewrite.outcome import RewriteRun, conclude, module_sha, patch_result
from patchkit.engine.rewrite.report import FileRun
from patchkit.engine.rewrite.select import Lister, Selector, candidates
from patchkit.errors import ConfigError, SettingRefused
from patchkit.outcome import Outcome, PatchResult, Step

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class _Job:
    module_file: Path
    module_sha: str
    path: str
    data: bytes
    classes: tuple[str, ...]


def _loaded(file: Path, files: Sequence[str]) -> tuple[list[Selector], str]:
    """A rewrite module's selectors, checked against the files its metadata
    declares, and its key; the selectors are remembered under that key, for runs that do not
    import it."""
    classes = load_rewrites(file)
    homes = list(dict.fromkeys(cls.path for cls in classes))
    with bounded(f"{file}: its selectors"):  # (a rewrite may override selector())
        selectors = [cls.selector() for cls in classes]
    # Declared: every home, and the files under a rewrite's search it changes at the lock.
    stray = [p for p in files if not any(s.wants(p) for s in selectors)]
    if files and (set(homes) - set(files) or stray):
        searches = sorted({g for s in selectors for g in s.search})
        raise ConfigError(
            f"{file}: the patch metadata declares files {sorted(files)}, but its rewrites are "
            f"made on {sorted(homes)}" + (f" and search {searches}" if searches else ""),
            hint="list in `files` the paths its rewrites name, and any file under their "
            "`search` that they change at the lock",
        )
    key = module_sha(Path(file).read_bytes(), files)
    cache.store_selectors(key, selectors)
    return selectors, key


def run_rewrites(
    file: Path, read: Reader, listing: Lister | None = None, files: Sequence[str] = ()
) -> RewriteRun:
    """Run a rewrite module over the tree ``read`` (and ``listing``) sees. ConfigError for a
    broken module, or one whose rewrites are not made on the ``files`` its metadata declares;
    every other problem is in the result."""
    selectors, key = _loaded(file, files)
    with bounded(f"{file}: its search and needles"):
        taken = candidates(selectors, read, listing)
    runs, jobs = _lookup(file, key, taken, read)
    for job, run in zip(jobs, _run_jobs(jobs), strict=True):
        if not run.failure:
            cache.store(key, job.classes, run, job.data)
        runs[job.path] = run
    runs_in_order = tuple(runs[p] for p in taken)
    seen = {s.rewrite for chosen in taken.values() for s in chosen}
    return conclude(selectors, runs_in_order, seen, read)


def prewarm(
    series: Sequence[tuple[Path, Sequence[str]] | set[str]],
    read: Reader,
    listing: Lister | None = None,
) -> None:
    """Rewrite at once, in parallel processes, the candidate files that miss the cache of every
    rewrite in ``series`` (``(module, declared files)``; a diff is the set of paths it changes)
    whose candidates no earlier patch may change; cache the runs for the series run after."""
    touched: set[str] = set()
    jobs: list[_Job] = []
    for item in series:
        if isinstance(item, set):
            touched |= item
            continue
        try:
            selectors, key = _loaded(*item)
            with bounded(f"{item[0]}: its search and needles"):
                taken = candidates(selectors, read, listing)
        except ConfigError:
            return  # the series run reports it; what follows depends on it
        if not touched & set(taken):
            jobs += _lookup(item[0], key, taken, read)[1]
        touched |= set(taken)
    jobs.sort(key=lambda job: -len(job.data))  # the largest file starts first
    for job, run in zip(jobs, _run_jobs(jobs), strict=True):
        if not run.failure:
            cache.store(job.module_sha, job.classes, run, job.data)


def _lookup(
    file: Path, key: str, taken: dict[str, list[Selector]], read: Reader
) -> tuple[dict[str, FileRun], list[_Job]]:
    """The candidate files' runs the cache holds, and a job for each file it does not."""
    runs: dict[str, FileRun] = {}
    jobs: list[_Job] = []
    for path, chosen in taken.items():
        data = read(path) or b""
        names = tuple(s.rewrite for s in chosen)
        cached = cache.load(key, path, names, data)
        if cached is not None:
            runs[path] = cached
        else:
            jobs.append(_Job(Path(file), key, path, data, names))
    return runs, jobs


def _run_jobs(jobs: list[_Job]) -> list[FileRun]:
    if len(jobs) < 2 or (os.cpu_count() or 1) < 2:
        return [_run_job(job) for job in jobs]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    workers = min(len(jobs), os.cpu_count() or 1)
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            return list(pool.map(_run_job, jobs))
    except concurrent.futures.process.BrokenProcessPool:  # a worker died: do it here instead
        return [_run_job(job) for job in jobs]


def _run_job(job: _Job) -> FileRun:
    try:
        with bounded(f"{job.module_file}: rewriting {job.path}"):
            classes = [cls for cls in load_rewrites(job.module_file) if cls.__name__ in job.classes]
            return rewrite_file(classes, job.path, job.data)
    except SettingRefused:
        raise  # the command's setting, not this file's failure
    except ConfigError as exc:
        return FileRun(job.path, failure=str(exc))


def run_rewrite_patch(
    patch_id: str,
    file: Path,
    read: Reader,
    listing: Lister | None = None,
    files: Sequence[str] = (),
) -> PatchResult:
    """Run one rewrite patch against the tree ``read`` sees. Never raises for a bad patch.
    ``files``: the paths its metadata declares (checked against its rewrites)."""
    try:
        run = run_rewrites(file, read, listing, files)
    except SettingRefused:
        raise  # the command's setting, not this patch's failure
    except ConfigError as exc:
        return PatchResult(patch_id, Outcome.FAILED, Step.REWRITE, message=f"{patch_id}: {exc}")
    return patch_result(patch_id, run)
