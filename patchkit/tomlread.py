"""TOML files patchkit only reads (the lock, manifests, patch metadata), as plain data, each
text parsed once.

The standard library's ``tomllib`` is pure Python: the lock and a patch set's eight files took
about 10 ms to parse on every command, most of what loading a project costs. Parsed results are
kept in the cache as data only: JSON, one entry per text (``<cache>/toml/<digest>.json``), keyed
by a digest of the file's text and sealed by the cache (``Cache.write_sealed``), so a file is
always read, an edited one is parsed again, and an entry patchkit did not write (a planted
``file = "/elsewhere/evil.py"``) is never believed: it is parsed afresh. Nothing read back is
executed (no ``marshal``, no ``pickle``). A result JSON cannot hold (a TOML date) is simply
parsed each time. Files written back with their comments kept go through tomlkit, not here.

A text nested deeper than the parser can follow or with an integer of more than 4300 digits is
refused (ConfigError naming the file), never a crash.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError
from patchkit.fileio import read_file

_VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"  # tomllib's version: part of the key
_added: dict[str, bytes] = {}  # digest -> JSON payload parsed in this process: written at exit


def read_toml(path: Path) -> dict[str, Any]:
    """``path`` as plain data; ConfigError naming the file when it is missing or not TOML."""
    try:
        text = read_file(path).decode()  # TOML is UTF-8, as ``tomllib.load`` reads it
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist") from None
    except OSError as exc:  # a directory, a FIFO, a device: refused, never waited on
        raise ConfigError(
            f"{path}: cannot be read: {exc.strerror or exc}",
            hint=f"make {path} a regular file",
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML: not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    digest = hashlib.blake2b(
        text.encode("utf-8", "surrogateescape"), digest_size=16, person=_VERSION.encode()
    ).hexdigest()
    payload = _added.get(digest) or _stored(digest)
    if payload is not None:
        found = _data(payload, digest)
        if found is not None:
            return found
    data = _parse(path, text)
    try:
        _added[digest] = json.dumps({"text": digest, "data": data}).encode()
    except (TypeError, ValueError):
        pass  # a date or time: nothing to keep
    else:
        if len(_added) == 1:
            atexit.register(_save)
    return data


def _data(payload: bytes, digest: str) -> dict[str, Any] | None:
    """The parsed text an entry holds, when it is the entry of the text ``digest`` names."""
    try:
        entry = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("text") != digest:
        return None
    data = entry.get("data")
    return data if isinstance(data, dict) else None


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
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
    except RecursionError:
        raise ConfigError(
            f"{path}: not usable TOML: arrays or tables nested too deeply",
            hint="flatten the nesting (patchkit's own files need a few levels at most)",
        ) from None
    except ValueError as exc:  # int(): more than 4300 digits (sys.get_int_max_str_digits)
        raise ConfigError(
            f"{path}: not usable TOML: {str(exc).split(';')[0]}",  # not Python's own advice
            hint="no value patchkit reads needs a number that long",
        ) from None


def _stored(digest: str) -> bytes | None:
    """The cache's entry for the text ``digest`` names; None where there is none or no cache
    can be made (a read-only home): the text is parsed. A cache others can write is refused."""
    from patchkit.cache import Cache
    from patchkit.errors import CacheUntrusted

    try:
        cache = Cache.current()
        return cache.read_sealed(cache.toml(f"{digest}.json"))
    except CacheUntrusted:
        raise
    except ConfigError:
        return None


def _save() -> None:
    """Write this process's parsed texts to the cache, each sealed; silently not at all where
    the cache cannot be written or is not trusted."""
    from patchkit.cache import Cache
    from patchkit.errors import PatchkitError

    try:
        cache = Cache.current()
        for digest, payload in _added.items():
            cache.write_sealed(cache.toml(f"{digest}.json"), payload)
    except PatchkitError:
        pass
