"""Run rewrite patches: load the module, rewrite the files it names, judge, cache.

A rewrite patch is a Python module in a patch set holding one or more ``Rewrite`` subclasses
(see ``patchkit.engine.rewrite_base``). ``run_rewrite_patch`` never raises for a broken patch or a
drifted tree: every result is a ``PatchResult`` value. Per file it

1. reads the current bytes (``read`` returns None for a missing file: GONE);
2. skips the parse when an anchor's name does not even appear in the text (GONE);
3. looks the result up in the cache, keyed by the rewrite module's source, the input bytes and
   the engine's own source;
4. otherwise parses with libcst (no metadata providers), runs each rewrite for that file, checks
   that the output parses and that a second run on it changes nothing and finds every site
   present; files are parsed in parallel processes when several miss the cache.
"""

from __future__ import annotations

import ast
import concurrent.futures
import concurrent.futures.process
import functools
import hashlib
import importlib.util
import json
import multiprocessing
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

import libcst as cst

from patchkit.cache import cache_dir
from patchkit.engine.diffparse import is_git_internal
from patchkit.engine.rewrite_base import (
    AnchorReport,
    FileReport,
    Rewrite,
    anchor_reports,
    combine_outcomes,
    precheck,
)
from patchkit.errors import ConfigError
from patchkit.model import ConflictDetail, FileChange, Outcome, PatchResult, Step

__all__ = [
    "AnchorReport",
    "FileReport",
    "Rewrite",
    "load_rewrites",
    "rewrite_paths",
    "rewrite_source",
    "run_rewrite_patch",
]

ENGINE_VERSION = "1"
_LIBRARIES = (Path(cst.__file__).parent, Path(__file__).parent)  # frames not worth naming
_ANCHOR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


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
    """The repository paths a rewrite module touches, in order, each once."""
    return list(dict.fromkeys(cls.path for cls in load_rewrites(file)))


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
        raise ConfigError(f"{where}.path must be a relative POSIX path inside the tree: {path!r}")
    anchors = getattr(cls, "anchors", None)
    if not isinstance(anchors, dict) or not anchors:
        raise ConfigError(f"{where}.anchors must be a non-empty dict of name -> count")
    for name, count in anchors.items():
        if not isinstance(name, str) or not _ANCHOR_RE.match(name):
            raise ConfigError(f"{where}.anchors: {name!r} is not a qualified name")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigError(f"{where}.anchors[{name!r}] must be a positive int, not {count!r}")


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


def rewrite_source(rewrites: Sequence[type[Rewrite]], path: str, data: bytes | None) -> FileReport:
    """Run the rewrites for ``path`` over ``data`` in order; judge. Never raises. No cache."""
    early = precheck(rewrites, path, data)
    if early is not None or data is None:  # precheck answers for a missing file
        return early or FileReport(path, Outcome.GONE, message="the file does not exist")
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return FileReport(path, Outcome.FAILED, message=f"libcst cannot parse it: {exc.message}")
    except Exception as exc:  # an undecodable file, say
        return FileReport(path, Outcome.FAILED, message=f"cannot parse it: {_describe(exc)}")
    try:
        return _rewrite_module(rewrites, path, data, module)
    except _RewriteBroke as exc:
        return FileReport(path, Outcome.FAILED, message=str(exc))
    except Exception as exc:  # a tree that cannot be printed, say
        return FileReport(path, Outcome.FAILED, message=f"rewriting failed: {_describe(exc)}")


def _rewrite_module(
    rewrites: Sequence[type[Rewrite]], path: str, data: bytes, module: cst.Module
) -> FileReport:
    updated, reports = _run_pass(rewrites, module)
    outcome = combine_outcomes([r.outcome for r in reports])
    if outcome not in (Outcome.APPLIED, Outcome.PARTLY_UPSTREAMED, Outcome.UPSTREAMED):
        return FileReport(path, outcome, tuple(reports))
    output = updated.bytes
    if outcome is Outcome.UPSTREAMED:
        if output != data:
            raise _RewriteBroke("every site was reported present, yet the rewrite changed the code")
        return FileReport(path, outcome, tuple(reports))
    where = "anchor(s) " + ", ".join(r.anchor for r in reports if r.changed)
    if output == data:
        raise _RewriteBroke(
            f"edit sites were reported changed at {where}, yet the code is the same"
        )
    _check_parses(output, where)
    _check_idempotent(rewrites, output)
    return FileReport(path, outcome, tuple(reports), output=output)


def _run_pass(
    rewrites: Sequence[type[Rewrite]], module: cst.Module
) -> tuple[cst.Module, list[AnchorReport]]:
    reports: list[AnchorReport] = []
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
        reports += anchor_reports(rewrite)
    return module, reports


def _check_parses(output: bytes, where: str) -> None:
    try:
        ast.parse(output)
    except SyntaxError as exc:
        raise _RewriteBroke(
            f"the code rewritten at {where} does not parse: line {exc.lineno}: {exc.msg}"
        ) from exc


def _check_idempotent(rewrites: Sequence[type[Rewrite]], output: bytes) -> None:
    try:
        module = cst.parse_module(output)
    except cst.ParserSyntaxError as exc:
        raise _RewriteBroke(f"libcst cannot parse the rewritten code: {exc.message}") from exc
    again, reports = _run_pass(rewrites, module)
    for report in reports:
        if report.outcome is not Outcome.UPSTREAMED:
            raise _RewriteBroke(
                f"not idempotent: on its own output, anchor {report.anchor} ({report.rewrite}) "
                f"reports changed {report.changed}, present {report.present}, "
                f"expected {report.expected} present"
            )
    if again.bytes != output:
        raise _RewriteBroke("not idempotent: a second run on its own output changed it again")


def _describe(exc: BaseException, file: Path | None = None) -> str:
    """``Type: message (where)``; where is the innermost frame outside libcst and patchkit."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if not any(Path(f.filename).is_relative_to(p) for p in _LIBRARIES)]
    where = f" ({Path(ours[-1].filename).name}:{ours[-1].lineno})" if ours else ""
    if isinstance(exc, SyntaxError) and file is not None:
        where = f" (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


# -- a whole patch ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    module_file: Path
    module_sha: str
    path: str
    data: bytes


def run_rewrite_patch(
    patch_id: str, file: Path, read: Callable[[str], bytes | None]
) -> PatchResult:
    """Run one rewrite patch against the tree ``read`` sees. Never raises for a bad patch."""
    try:
        classes = load_rewrites(file)
        module_sha = hashlib.sha256(Path(file).read_bytes()).hexdigest()
    except ConfigError as exc:
        return PatchResult(patch_id, Outcome.FAILED, Step.REWRITE, message=f"{patch_id}: {exc}")
    by_path: dict[str, list[type[Rewrite]]] = {}
    for cls in classes:
        by_path.setdefault(cls.path, []).append(cls)
    reports: dict[str, FileReport] = {}
    jobs: list[_Job] = []
    for path, rewrites in by_path.items():
        data = read(path)
        report = precheck(rewrites, path, data) or _cache_load(module_sha, path, data or b"")
        if report is not None:
            reports[path] = report
        elif data is not None:
            jobs.append(_Job(Path(file), module_sha, path, data))
    for job, report in zip(jobs, _run_jobs(jobs), strict=True):
        if report.outcome is not Outcome.FAILED:
            _cache_store(job.module_sha, job.path, job.data, report)
        reports[job.path] = report
    return _patch_result(patch_id, [reports[p] for p in by_path])


def _run_jobs(jobs: list[_Job]) -> list[FileReport]:
    if len(jobs) < 2:
        return [_run_job(job) for job in jobs]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    workers = min(len(jobs), os.cpu_count() or 1)
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            return list(pool.map(_run_job, jobs))
    except concurrent.futures.process.BrokenProcessPool:  # a worker died: do it here instead
        return [_run_job(job) for job in jobs]


def _run_job(job: _Job) -> FileReport:
    try:
        classes = [cls for cls in load_rewrites(job.module_file) if cls.path == job.path]
    except ConfigError as exc:
        return FileReport(job.path, Outcome.FAILED, message=str(exc))
    return rewrite_source(classes, job.path, job.data)


def _patch_result(patch_id: str, reports: list[FileReport]) -> PatchResult:
    outcome = combine_outcomes([r.outcome for r in reports])
    step = Step.PROBE if outcome is Outcome.UPSTREAMED else Step.REWRITE
    changes: tuple[FileChange, ...] = ()
    if outcome in (Outcome.APPLIED, Outcome.PARTLY_UPSTREAMED):
        changes = tuple(FileChange(r.path, r.output) for r in reports if r.output is not None)
    lines = [f"{patch_id}: {r.path}: {m}" for r in reports for m in r.messages()]
    details = tuple(d for r in reports for d in _details(r))
    return PatchResult(patch_id, outcome, step, changes, "\n".join(lines), details)


def _details(report: FileReport) -> list[ConflictDetail]:
    if report.outcome.ok or report.outcome is Outcome.PARTLY_UPSTREAMED:
        return []
    found = [
        ConflictDetail(report.path, a.anchor, a.message, ours=a.code)
        for a in report.anchors
        if not a.outcome.ok and a.outcome is not Outcome.PARTLY_UPSTREAMED
    ]
    if report.message:
        found.insert(0, ConflictDetail(report.path, "", report.message))
    return found


# -- the cache -------------------------------------------------------------------------------


def _cache_files(module_sha: str, path: str, data: bytes) -> tuple[Path, Path]:
    key = hashlib.sha256()
    for part in (ENGINE_VERSION, _engine_sha(), module_sha, path):
        key.update(part.encode() + b"\0")
    key.update(hashlib.sha256(data).digest())
    base = cache_dir("rewrites") / key.hexdigest()
    return base.with_suffix(".json"), base.with_suffix(".out")


@functools.lru_cache(maxsize=1)
def _engine_sha() -> str:
    """Hash of the engine's own source: a changed engine never reads an old result."""
    digest = hashlib.sha256()
    for module in (sys.modules[__name__], sys.modules[Rewrite.__module__]):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def _cache_load(module_sha: str, path: str, data: bytes) -> FileReport | None:
    meta_file, out_file = _cache_files(module_sha, path, data)
    try:
        meta = json.loads(meta_file.read_text())
        output = out_file.read_bytes() if meta["has_output"] else None
        anchors = tuple(
            AnchorReport(**{**a, "outcome": Outcome(a["outcome"])}) for a in meta["anchors"]
        )
        return FileReport(path, Outcome(meta["outcome"]), anchors, output, meta["message"], True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cache_store(module_sha: str, path: str, data: bytes, report: FileReport) -> None:
    meta_file, out_file = _cache_files(module_sha, path, data)
    meta = {
        "outcome": report.outcome.value,
        "message": report.message,
        "has_output": report.output is not None,
        "anchors": [{**asdict(a), "outcome": a.outcome.value} for a in report.anchors],
    }
    try:
        if report.output is not None:
            _write_atomic(out_file, report.output)
        _write_atomic(meta_file, json.dumps(meta).encode())
    except OSError:
        pass  # a cache that cannot be written is only slower


def _write_atomic(file: Path, content: bytes) -> None:
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    tmp.write_bytes(content)
    os.replace(tmp, file)
