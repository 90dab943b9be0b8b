"""TOML files patchkit only reads (the lock, manifests, patch metadata), as plain data, each
text parsed once.

The standard library's ``tomllib`` is pure Python: the lock and a patch set's eight files took
about 6 ms to parse on every command, most of what loading a project costs. Parsed results are
kept in the cache (``toml.marshal``), keyed by a digest of the file's text, so a file is always
read and an edited one is parsed again: no time stamps to trust. A result ``marshal`` cannot
hold (a TOML date) is simply parsed each time. Files written back with their comments kept go
through tomlkit, not here. The cache file is the user's own and trusted as bytecode is.
"""

from __future__ import annotations

import atexit
import hashlib
import marshal
import os
import sys
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError
from patchkit.fileio import read_file

_CAP = 2048  # parsed files kept
_FILE = f"toml-{sys.version_info[0]}.{sys.version_info[1]}.marshal"  # tomllib's version

_known: dict[bytes, bytes] | None = None  # digest -> marshalled result, as the cache had them
_added: dict[bytes, bytes] = {}  # parsed in this process: written back at exit


def read_toml(path: Path) -> dict[str, Any]:
    """``path`` as plain data; ConfigError naming the file when it is missing or not TOML."""
    try:
        text = read_file(path).decode()  # TOML is UTF-8, as ``tomllib.load`` reads it
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML: not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    key = hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).digest()
    stored = _added.get(key) or _cached().get(key)
    if stored is not None:
        try:
            found = marshal.loads(stored)
        except (EOFError, ValueError, TypeError):
            found = None
        if isinstance(found, dict):
            return found
    data = _parse(path, text)
    try:
        _added[key] = marshal.dumps(data)
    except ValueError:
        pass  # a date or time: nothing to keep
    else:
        if len(_added) == 1:
            atexit.register(_save)
    return data


def _parse(path: Path, text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    import tomlkit  # pragma: no cover (Python 3.10)
    import tomlkit.exceptions

    try:
        return tomlkit.parse(text).unwrap()
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def _store() -> Path:
    from patchkit.cache import Cache

    return Cache.current().root / _FILE


def _cached() -> dict[bytes, bytes]:
    global _known
    if _known is None:
        _known = _load()
    return _known


def _load() -> dict[bytes, bytes]:
    try:
        loaded = marshal.loads(_store().read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if isinstance(k, bytes) and isinstance(v, bytes)}


def _save() -> None:
    """Write the cache back: this process's files first, then the others it had, up to the cap;
    atomically, and silently not at all where the cache cannot be written."""
    entries = dict(_added)
    for key, value in [*_load().items(), *_cached().items()]:  # what another process wrote too
        if len(entries) >= _CAP:
            break
        entries.setdefault(key, value)
    try:
        store = _store()
        tmp = store.with_name(f".{store.name}.{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps(entries))
        os.replace(tmp, store)
    except (OSError, ValueError):
        pass
