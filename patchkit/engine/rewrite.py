"""Run rewrite patches: load the module, find the files its rewrites take, rewrite, judge, cache.

A rewrite patch is a Python module in a patch set holding one or more ``Rewrite`` subclasses
(see ``patchkit.engine.rewrite_base``). ``run_rewrite_patch`` never raises for a broken patch or a
drifted tree: every result is a ``PatchResult`` value. It

1. lists the candidate files of each rewrite from text alone (``patchkit.engine.rewrite_select``): its
   home file, plus the files under its ``search`` globs that pass the text prefilter;
2. looks each file's result up in the cache, keyed by the rewrite module's source (and declared
   files), the path, the input bytes and the engine's own source;
3. otherwise parses with libcst once (no metadata providers), runs the rewrites that take the
   file, checks that the output parses (``ast``) and that a second run on the tree libcst holds
   changes nothing and finds every site present, and prints once; files are rewritten in
   parallel processes when several miss the cache (``prewarm``: across a whole series);
4. judges each anchor over every candidate file together: its count (or range) of edit sites,
   and where each was found, so a rewrite follows code that moved to another file or function.
"""

from __future__ import annotations

import ast
import concurrent.futures
import concurrent.futures.process
import functools
import hashlib
import importlib.util
import multiprocessing
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import libcst as cst

from patchkit.engine import rewrite_cache
from patchkit.engine.diffpaths import is_git_internal
from patchkit.engine.rewrite_base import Rewrite
from patchkit.engine.rewrite_outcome import RewriteRun, conclude, judge, module_sha, patch_result
from patchkit.engine.rewrite_report import (
    AnchorReport,
    FileReport,
    FileRun,
    Site,
    Tally,
    combine_outcomes,
)
from patchkit.engine.rewrite_select import (
    ANCHOR_RE,
    Lister,
    Selector,
    anchor_spec,
    candidates,
    valid_glob,
    valid_needle,
)
from patchkit.errors import ConfigError, shown
from patchkit.model import Outcome, PatchResult, Step

__all__ = [
    "AnchorReport",
    "FileReport",
    "Rewrite",
    "RewriteRun",
    "Site",
    "load_rewrites",
    "rewrite_paths",
    "rewrite_selectors",
    "rewrite_source",
    "run_rewrite_patch",
    "run_rewrites",
]

_LIBRARIES = (Path(cst.__file__).parent, Path(__file__).parent)  # frames not worth naming
Reader = Callable[[str], bytes | None]


# -- loading ---------------------------------------------------------------------------------


def load_rewrites(file: Path) -> list[type[Rewrite]]:
    """Import a rewrite module from its path; its ``Rewrite`` subclasses in definition order."""
    try:
        source = Path(file).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read rewrite module: {exc.strerror}") from exc
    module = _import_module(Path(file).resolve(), hashlib.sha256(source).hexdigest())
    classes = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Rewrite)
        and obj.__module__ == module.__name__
        and hasattr(obj, "path")
    ]
    if not classes:
        raise ConfigError(
            f"{file}: defines no rewrite",
            hint="subclass patchkit.engine.rewrite.Rewrite and set `path` and `anchors`",
        )
    for cls in classes:
        _validate(cls, file)
    return classes


def rewrite_paths(file: Path) -> list[str]:
    """The home paths of a rewrite module's rewrites (where they were made), each once."""
    return list(dict.fromkeys(cls.path for cls in load_rewrites(file)))


def rewrite_selectors(file: Path) -> list[Selector]:
    """Where each rewrite of a module looks, as plain data (see ``Selector.to_json``)."""
    return [cls.selector() for cls in load_rewrites(file)]


@functools.lru_cache(maxsize=256)
def _import_module(file: Path, sha: str) -> types.ModuleType:
    name = "patchkit_rewrites._" + re.sub(r"\W", "_", f"{file.stem}_{sha[:12]}")
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"{file}: importing the rewrite failed: {_describe(exc, file)}") from exc
    return module


def _validate(cls: type[Rewrite], file: Path) -> None:
    where = f"{file}: {cls.__name__}"
    path = getattr(cls, "path", None)
    if not isinstance(path, str) or not _is_relative_posix(path):
        raise ConfigError(
            f"{where}.path must be a relative POSIX path inside the tree: {shown(path)}"
        )
    anchors = getattr(cls, "anchors", None)
    if not isinstance(anchors, dict) or not anchors:
        raise ConfigError(f"{where}.anchors must be a non-empty dict of name -> count")
    for name, count in anchors.items():
        if not isinstance(name, str) or not ANCHOR_RE.match(name):
            raise ConfigError(f"{where}.anchors: {shown(name)} is not a qualified name or pattern")
        spec = anchor_spec(name, count)
        if spec is None or spec.low < 1:
            raise ConfigError(
                f"{where}.anchors[{shown(name)}] must be a positive int or a (low, high) pair with "
                f"1 <= low <= high, not {shown(count)}"
            )
    for glob in _strings(cls, "search", where):
        if not valid_glob(glob) or is_git_internal(glob):
            raise ConfigError(
                f"{where}.search: {shown(glob)} is not a relative glob inside the tree"
            )
    for needle in _strings(cls, "needles", where):
        if not valid_needle(needle):
            raise ConfigError(f"{where}.needles: {shown(needle)} is not a regular expression")


def _strings(cls: type[Rewrite], attr: str, where: str) -> tuple[str, ...]:
    value = getattr(cls, attr)
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}.{attr} must be a tuple of strings, not {shown(value)}")
    return value


def _is_relative_posix(path: str) -> bool:
    pure = PurePosixPath(path)
    return (
        bool(path)
        and "\\" not in path
        and not pure.is_absolute()
        and ".." not in pure.parts
        and not is_git_internal(path)
    )


# -- rewriting one file ----------------------------------------------------------------------


class _RewriteBroke(Exception):
    """Internal: a rewrite misbehaved; the message is the FAILED reason."""


def rewrite_file(rewrites: Sequence[type[Rewrite]], path: str, data: bytes) -> FileRun:
    """Run the rewrites over one file's bytes, in order. Never raises. No cache, no judging."""
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return FileRun(path, failure=f"libcst cannot parse it: {exc.message}")
    except Exception as exc:  # an undecodable file, say
        return FileRun(path, failure=f"cannot parse it: {_describe(exc)}")
    try:
        return _rewrite_module(rewrites, path, data, module)
    except _RewriteBroke as exc:
        return FileRun(path, failure=str(exc))
    except Exception as exc:  # a tree that cannot be printed, say
        return FileRun(path, failure=f"rewriting failed: {_describe(exc)}")


def _rewrite_module(
    rewrites: Sequence[type[Rewrite]], path: str, data: bytes, module: cst.Module
) -> FileRun:
    updated, tallies = _run_pass(rewrites, path, module)
    changed = [t for t in tallies if any(not s.present for s in t.sites)]
    if not changed:
        if not _same(updated, module, data):
            raise _RewriteBroke("no site was reported changed, yet the rewrite changed the code")
        return FileRun(path, tuple(tallies))
    output = updated.bytes  # the one print
    where = "anchor(s) " + ", ".join(dict.fromkeys(t.anchor for t in changed))
    if output == data:
        raise _RewriteBroke(
            f"edit sites were reported changed at {where}, yet the code is the same"
        )
    _check_parses(output, where)
    _check_idempotent(rewrites, path, updated, output, tallies)
    return FileRun(path, tuple(tallies), output)


def _same(new: cst.Module, old: cst.Module, old_code: bytes) -> bool:
    """The trees print the same code: compared as trees first (the parts a rewrite did not
    visit are shared objects, so this costs next to nothing), printed only when they differ."""
    return new.deep_equals(old) or new.bytes == old_code


def _run_pass(
    rewrites: Sequence[type[Rewrite]], path: str, module: cst.Module
) -> tuple[cst.Module, list[Tally]]:
    tallies: list[Tally] = []
    for cls in rewrites:
        rewrite = cls()
        try:
            module = module.visit(rewrite)
        except Exception as exc:
            anchor = rewrite.current_anchor or "(outside any anchor)"
            raise _RewriteBroke(
                f"rewrite {cls.__name__} raised at anchor {anchor}: {_describe(exc)}"
            ) from exc
        if rewrite.stray_sites:
            raise _RewriteBroke(
                f"rewrite {cls.__name__} reported {rewrite.stray_sites} edit site(s) outside "
                f"its anchors {sorted(cls.anchors)}"
            )
        tallies += [_tally(rewrite, path, anchor) for anchor in cls.anchors]
    return module, tallies


def _tally(rewrite: Rewrite, path: str, anchor: str) -> Tally:
    sites = tuple(Site(path, m.qualname, m.present) for m in rewrite.marks if m.anchor == anchor)
    node = rewrite.anchor_nodes.get(anchor)
    code = cst.Module(body=[]).code_for_node(node) if node is not None else ""
    definitions = tuple(rewrite.definitions.get(anchor, ()))
    return Tally(
        path, type(rewrite).__name__, anchor, rewrite.defined[anchor], sites, definitions, code
    )


def _check_parses(output: bytes, where: str) -> None:
    try:
        ast.parse(output)
    except SyntaxError as exc:
        raise _RewriteBroke(
            f"the code rewritten at {where} does not parse: line {exc.lineno}: {exc.msg}"
        ) from exc


def _check_idempotent(
    rewrites: Sequence[type[Rewrite]],
    path: str,
    updated: cst.Module,
    output: bytes,
    first: list[Tally],
) -> None:
    """A second run over the rewritten tree as libcst holds it (never parsed again) must find
    every site present and change nothing."""
    again, tallies = _run_pass(rewrites, path, updated)
    for before, after in zip(first, tallies, strict=True):
        changed = sum(not s.present for s in after.sites)
        present = len(after.sites) - changed
        if changed or present != len(before.sites):
            raise _RewriteBroke(
                f"not idempotent: on its own output, anchor {after.anchor} ({after.rewrite}) "
                f"reports changed {changed}, present {present}, "
                f"expected {len(before.sites)} present"
            )
    if not _same(again, updated, output):
        raise _RewriteBroke("not idempotent: a second run on its own output changed it again")


def _describe(exc: BaseException, file: Path | None = None) -> str:
    """``Type: message (where)``; where is the innermost frame outside libcst and patchkit."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if not any(Path(f.filename).is_relative_to(p) for p in _LIBRARIES)]
    where = f" ({Path(ours[-1].filename).name}:{ours[-1].lineno})" if ours else ""
    if isinstance(exc, SyntaxError) and file is not None:
        where = f" (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


def rewrite_source(rewrites: Sequence[type[Rewrite]], path: str, data: bytes | None) -> FileReport:
    """Run the rewrites over ``data`` as if ``path`` were their only file; judge. No cache."""
    if data is None:
        return FileReport(path, Outcome.GONE, message="the file does not exist")
    admitted = all(cls.selector().admits(data) for cls in rewrites)
    run = rewrite_file(rewrites, path, data) if admitted else FileRun(path)
    if run.failure:
        return FileReport(path, Outcome.FAILED, message=run.failure)
    anchors = judge([cls.selector() for cls in rewrites], [run])
    outcome = combine_outcomes([a.outcome for a in anchors])
    output = run.output if outcome in (Outcome.APPLIED, Outcome.PARTLY_UPSTREAMED) else None
    return FileReport(path, outcome, tuple(anchors), output)


# -- a whole patch ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    module_file: Path
    module_sha: str
    path: str
    data: bytes
    classes: tuple[str, ...]


def _loaded(file: Path, files: Sequence[str]) -> tuple[list[type[Rewrite]], str]:
    """A rewrite module's rewrites, checked against the files its metadata declares, and its
    key; its selectors are remembered under that key, for runs that do not import it."""
    classes = load_rewrites(file)
    homes = list(dict.fromkeys(cls.path for cls in classes))
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
    rewrite_cache.store_selectors(key, selectors)
    return classes, key


def run_rewrites(
    file: Path, read: Reader, listing: Lister | None = None, files: Sequence[str] = ()
) -> RewriteRun:
    """Run a rewrite module over the tree ``read`` (and ``listing``) sees. ConfigError for a
    broken module, or one whose rewrites are not made on the ``files`` its metadata declares;
    every other problem is in the result."""
    classes, key = _loaded(file, files)
    selectors = [cls.selector() for cls in classes]
    taken = candidates(selectors, read, listing)
    runs: dict[str, FileRun] = {}
    jobs: list[_Job] = []
    for path, chosen in taken.items():
        data = read(path) or b""
        names = tuple(s.rewrite for s in chosen)
        cached = rewrite_cache.load(key, path, names, data)
        if cached is not None:
            runs[path] = cached
        else:
            jobs.append(_Job(Path(file), key, path, data, names))
    for job, run in zip(jobs, _run_jobs(jobs), strict=True):
        if not run.failure:
            rewrite_cache.store(key, job.classes, run, job.data)
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
            classes, key = _loaded(*item)
        except ConfigError:
            return  # the series run reports it; what follows depends on it
        taken = candidates([c.selector() for c in classes], read, listing)
        if not touched & set(taken):
            jobs += _misses(item[0], key, taken, read)
        touched |= set(taken)
    jobs.sort(key=lambda job: -len(job.data))  # the largest file starts first
    for job, run in zip(jobs, _run_jobs(jobs), strict=True):
        if not run.failure:
            rewrite_cache.store(job.module_sha, job.classes, run, job.data)


def _misses(file: Path, key: str, taken: dict[str, list[Selector]], read: Reader) -> list[_Job]:
    jobs = []
    for path, chosen in taken.items():
        data = read(path) or b""
        names = tuple(s.rewrite for s in chosen)
        if rewrite_cache.load(key, path, names, data) is None:
            jobs.append(_Job(Path(file), key, path, data, names))
    return jobs


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
        classes = [cls for cls in load_rewrites(job.module_file) if cls.__name__ in job.classes]
    except ConfigError as exc:
        return FileRun(job.path, failure=str(exc))
    return rewrite_file(classes, job.path, job.data)


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
    except ConfigError as exc:
        return PatchResult(patch_id, Outcome.FAILED, Step.REWRITE, message=f"{patch_id}: {exc}")
    return patch_result(patch_id, run)
