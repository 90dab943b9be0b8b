"""Results of rewrites per file, cached by (engine, rewrite module, path, input bytes).

Nothing here is believed blindly: every file is sealed by the cache (``Cache.write_sealed``),
a result's entry names the inputs it was computed from (checked against the ones asked for)
and the sha256 of its output (checked against the output file read back). An entry that fails
any check is recomputed, never written into a tree."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from patchkit.cache import Cache
from patchkit.engine.fingerprint import engine_fingerprint
from patchkit.engine.rewrite.report import FileRun, Site, Tally
from patchkit.engine.rewrite.select import AnchorSpec, Selector

ENGINE_VERSION = "3"


def _inputs(module_sha: str, path: str, classes: tuple[str, ...], data: bytes) -> list[str]:
    """What a result is computed from (its entry says so, and is checked against them)."""
    engine = f"{ENGINE_VERSION}:{engine_sha()}"
    return [engine, module_sha, path, ",".join(classes), hashlib.sha256(data).hexdigest()]


def _cache_files(inputs: list[str]) -> tuple[Path, Path]:
    key = hashlib.sha256("\0".join(inputs).encode("utf-8", "surrogateescape")).hexdigest()
    cache = Cache.current()
    return cache.rewrites(f"{key}.json"), cache.rewrites(f"{key}.out")


def engine_sha() -> str:
    """The engine's fingerprint (every engine module, the parser libraries' versions): a
    changed engine never reads an old result."""
    return engine_fingerprint()


def _selectors_file(module_sha: str) -> Path:
    return Cache.current().rewrites(f"{module_sha}-{engine_sha()[:16]}.selectors.json")


def load_selectors(module_sha: str) -> list[Selector] | None:
    """The selectors of a rewrite module, remembered when it was last imported."""
    try:
        raw = json.loads(_read_sealed(_selectors_file(module_sha)))
        return [_selector(item) for item in raw]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_selectors(module_sha: str, selectors: list[Selector]) -> None:
    if not _WRITES[-1]:
        return
    content = json.dumps([s.to_json() for s in selectors]).encode()
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        _write_atomic(_selectors_file(module_sha), content)


# -- which files a rewrite module's selectors take, per file ------------------------------------
Fingerprint = tuple[int, ...]  # what changes whenever a file does (see Tree.fingerprint); ()


def _verdicts_file(module_sha: str) -> Path:
    return Cache.current().rewrites(f"{module_sha}-{engine_sha()[:16]}.taken.json")


def load_verdicts(module_sha: str) -> dict[str, tuple[Fingerprint, tuple[str, ...]]]:
    """Per file: its fingerprint when last looked at, and the rewrites whose prefilter took it."""
    try:
        raw = json.loads(_read_sealed(_verdicts_file(module_sha)))
        return {
            str(path): (tuple(int(n) for n in printed), tuple(str(r) for r in names))
            for path, (printed, names) in raw.items()
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def store_verdicts(
    module_sha: str, verdicts: dict[str, tuple[Fingerprint, tuple[str, ...]]]
) -> None:
    if not _WRITES[-1]:
        return
    content = json.dumps({p: [list(f), list(n)] for p, (f, n) in sorted(verdicts.items())})
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        _write_atomic(_verdicts_file(module_sha), content.encode())


def _selector(raw: dict[str, Any]) -> Selector:
    anchors = tuple(AnchorSpec(str(p), int(lo), int(hi)) for p, (lo, hi) in raw["anchors"].items())
    return Selector(
        str(raw["rewrite"]),
        str(raw["home"]),
        tuple(str(g) for g in raw["search"]),
        tuple(str(n) for n in raw["needles"]),
        anchors,
    )


def load(module_sha: str, path: str, classes: tuple[str, ...], data: bytes) -> FileRun | None:
    """The cached run of ``classes`` (the rewrites that took the file) over ``data``; None
    when there is none or it fails a check (its seal, its inputs, its output's digest)."""
    inputs = _inputs(module_sha, path, classes, data)
    meta_file, out_file = _cache_files(inputs)
    try:
        meta = json.loads(_read_sealed(meta_file))
        if meta["inputs"] != inputs:
            return None
        output = out_file.read_bytes() if meta["output"] is not None else None
        if output is not None and hashlib.sha256(output).hexdigest() != meta["output"]:
            return None
        tallies = tuple(_tally(t) for t in meta["tallies"])
        return FileRun(path, tallies, output, meta["failure"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_sealed(file: Path) -> bytes:
    """``file``'s payload; ValueError when it is not sealed by this cache."""
    payload = Cache.current().read_sealed(file)
    if payload is None:
        raise ValueError(f"{file}: no entry sealed by this cache")
    return payload


def _tally(raw: dict[str, Any]) -> Tally:
    sites = tuple(Site(**s) for s in raw["sites"])
    definitions = tuple(str(d) for d in raw["definitions"])
    return Tally(
        str(raw["path"]), str(raw["rewrite"]), str(raw["anchor"]), int(raw["defined"]),
        sites, definitions, str(raw["code"]),
    )  # fmt: skip


_WRITES = [True]  # the last entry says whether results are stored (see writes)


@contextlib.contextmanager
def writes(enabled: bool) -> Iterator[None]:
    """Within the block, results are read from the cache but not stored (the matrix probes many
    releases and must leave nothing in the cache but the releases)."""
    _WRITES.append(enabled)
    try:
        yield
    finally:
        _WRITES.pop()


def store(module_sha: str, classes: tuple[str, ...], run: FileRun, data: bytes) -> None:
    if not _WRITES[-1]:
        return
    inputs = _inputs(module_sha, run.path, classes, data)
    meta_file, out_file = _cache_files(inputs)
    meta = {
        "inputs": inputs,
        "failure": run.failure,
        "output": None if run.output is None else hashlib.sha256(run.output).hexdigest(),
        "tallies": [
            {
                "path": t.path,
                "rewrite": t.rewrite,
                "anchor": t.anchor,
                "defined": t.defined,
                "sites": [vars(s) for s in t.sites],
                "definitions": list(t.definitions),
                "code": t.code,
            }
            for t in run.tallies
        ],
    }
    try:
        if run.output is not None:
            _write_atomic(out_file, run.output, sealed=False)
    except OSError:
        return  # a cache that cannot be written is only slower
    _write_atomic(meta_file, json.dumps(meta).encode(), sealed=True)


def _write_atomic(file: Path, content: bytes, sealed: bool = True) -> None:
    if sealed:
        Cache.current().write_sealed(file, content)
        return
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    tmp.write_bytes(content)
    os.replace(tmp, file)
