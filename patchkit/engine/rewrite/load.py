"""Loading a rewrite module: import it from its path (once per content) and check each of its
``Rewrite`` subclasses (home path, anchors, search globs, needles) before anything runs it.

A module that cannot be read, imported or checked is a ConfigError naming the file and class.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import traceback
import types
from pathlib import Path, PurePosixPath

import libcst as cst

from patchkit.engine.diff.paths import is_git_internal
from patchkit.engine.rewrite.base import Rewrite
from patchkit.engine.rewrite.deadline import bounded
from patchkit.engine.rewrite.gate import check_source
from patchkit.engine.rewrite.select import (
    ANCHOR_RE,
    Selector,
    anchor_spec,
    valid_glob,
    valid_needle,
)
from patchkit.errors import ConfigError, shown

_LIBRARIES = (Path(cst.__file__).parent, Path(__file__).parent)  # frames not worth naming


def load_rewrites(file: Path) -> list[type[Rewrite]]:
    """Import a rewrite module from its path; its ``Rewrite`` subclasses in definition order."""
    try:
        source = Path(file).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read rewrite module: {exc.strerror}") from exc
    check_source(source, Path(file))  # nothing of it runs unless it passes
    with bounded(f"{file}: importing the rewrite"):  # its module-level code ends, or is stopped
        module = _import_module(Path(file).resolve(), hashlib.sha256(source).hexdigest(), source)
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
def _import_module(file: Path, sha: str, source: bytes) -> types.ModuleType:
    """The module of ``source``, the bytes checked (never the file read again: it could have
    changed since)."""
    name = "patchkit_rewrites._" + re.sub(r"\W", "_", f"{file.stem}_{sha[:12]}")
    module = types.ModuleType(name)
    module.__file__ = str(file)
    sys.modules[name] = module
    try:
        exec(compile(source, str(file), "exec"), module.__dict__)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"{file}: importing the rewrite failed: {describe(exc, file)}") from exc
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


def describe(exc: BaseException, file: Path | None = None) -> str:
    """``Type: message (where)``; where is the innermost frame outside libcst and patchkit."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if not any(Path(f.filename).is_relative_to(p) for p in _LIBRARIES)]
    where = f" ({Path(ours[-1].filename).name}:{ours[-1].lineno})" if ours else ""
    if isinstance(exc, SyntaxError) and file is not None:
        where = f" (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}{where}"
