"""Dataclass methods compiled once per installation, not on every start.

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and (when
frozen) ``__setattr__``/``__delattr__`` as source text and compiles it with ``exec`` when the
class is defined: six compiles per frozen class, about 0.5 ms a class, a third of what
``patchkit status`` spends importing itself (some 50 classes). The text fully determines the
code, so the compiled code objects of each patchkit module's dataclasses are kept beside that
module's bytecode (``__pycache__/<module>.<tag>.dataclasses``): a later start compiles none.

Only text that ``dataclasses`` hands ``exec`` from a ``patchkit`` module goes through this; it
is compiled exactly as ``exec`` compiles it (same file name, no inherited ``__future__``
flags). A module's file holds the code its last import used, so an edited class leaves nothing
stale behind. The files are trusted as bytecode is, written like it (atomically, only when
something changed, never under ``PYTHONDONTWRITEBYTECODE``), and ignored when unreadable or
from another interpreter.
"""

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER, cache_from_source
from types import CodeType
from typing import Any

# module file -> code by source text: as its cache file had them, and as this process used them
_stored: dict[str, dict[str, CodeType]] = {}
_used: dict[str, dict[str, CodeType]] = {}


def _cache_file(module_file: str) -> str | None:
    try:
        pyc = cache_from_source(module_file)
    except (NotImplementedError, ValueError):
        return None
    return pyc.removesuffix(".pyc") + ".dataclasses"


def _load(path: str | None) -> dict[str, CodeType]:
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if not data.startswith(MAGIC_NUMBER):
            return {}
        found = marshal.loads(data[len(MAGIC_NUMBER) :])
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _compiled(module_file: str, source: str) -> CodeType:
    stored = _stored.get(module_file)
    if stored is None:
        stored = _stored[module_file] = _load(_cache_file(module_file))
    code = stored.get(source)
    if code is None:
        code = compile(source, "<string>", "exec", dont_inherit=True)
    _used.setdefault(module_file, {})[source] = code
    return code


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    if isinstance(source, str) and isinstance(globals, dict):
        name, module_file = globals.get("__name__"), globals.get("__file__")
        ours = isinstance(name, str) and (name == "patchkit" or name.startswith("patchkit."))
        if ours and isinstance(module_file, str):
            source = _compiled(module_file, source)
    builtins.exec(source, globals, locals)


def _save() -> None:
    if sys.dont_write_bytecode:
        return
    for module_file, used in _used.items():
        path = _cache_file(module_file)
        if path is None or used.keys() == _stored.get(module_file, {}).keys():
            continue
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(MAGIC_NUMBER + marshal.dumps(used))
            os.replace(tmp, path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def install() -> None:
    """Route ``dataclasses``' compiles through the cache (CPython only; once per process)."""
    if sys.implementation.name != "cpython" or getattr(dataclasses, "exec", None) is _exec:
        return
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # shadows the builtin there only
    atexit.register(_save)
