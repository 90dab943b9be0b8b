"""The one type check of the TOML patchkit reads (patch metadata, ``patchset.toml``, their
``[export]``, ``[upstream]``, ``[pr]`` and ``[[bench]]`` tables): every value is taken through a
:class:`Table`, which gives it with the type the reader expects or raises a ConfigError naming
the file, the key's full path (``bench[0].cases``) and what was found instead. A reader never
calls a method of a value it has not checked, so a wrong type is a message, never a crash.
"""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError, shown

_SHOWN = 60  # characters of a wrong value a message quotes


def kind(value: object) -> str:
    """What a TOML value is, as a person reads the file: ``an integer``, ``a table``."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (datetime, date, time)):
        return "a date or time"
    return type(value).__name__


def _quoted(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**_SHOWN:
        return "a very large integer"
    text = shown(value) if isinstance(value, (str, int, float)) else ""
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + "…"
    return f"{kind(value)} {text}".rstrip()


class Table:
    """One table of a TOML file: ``raw`` read from ``path``, found at ``where`` (the key path of
    the table itself, ``""`` at the top)."""

    __slots__ = ("path", "raw", "where")

    def __init__(self, raw: object, path: Path, where: str = "", *, what: str = "") -> None:
        if not isinstance(raw, dict):
            at = f"key {shown(where)}" if where else "the file"
            raise ConfigError(f"{path}: {at} must be a table{what} (got {_quoted(raw)})")
        self.raw: dict[str, Any] = raw
        self.path, self.where = path, where

    def name(self, key: str) -> str:
        """The key's full path, as a message names it."""
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, expected: str, value: object = None) -> ConfigError:
        got = f" (got {_quoted(value)})" if key in self.raw else " (missing)"
        return ConfigError(f"{self.path}: key {shown(self.name(key))} must be {expected}{got}")

    def __contains__(self, key: str) -> bool:
        return key in self.raw

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def only(self, allowed: set[str]) -> None:
        """Refuse keys the reader does not know (a typo would otherwise be ignored)."""
        unknown = sorted(set(self.raw) - allowed)
        if unknown:
            at = f"[{self.where}]" if self.where else "the file"
            raise ConfigError(
                f"{self.path}: {at} has unknown keys {unknown}: use {sorted(allowed)}"
            )

    def text(self, key: str, default: str | None = None) -> str:
        """A string; without ``default`` it must be there and not empty."""
        value = self.raw.get(key, default)
        if not isinstance(value, str) or (default is None and not value):
            raise self.fail(key, "a non-empty string" if default is None else "a string", value)
        return value

    def optional_text(self, key: str) -> str | None:
        """A string, or None when missing or empty."""
        return self.text(key, "") or None

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "a list of strings", value)
        return tuple(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def table(self, key: str, *, what: str = "") -> Table:
        """A sub-table; an empty one when missing."""
        where = self.name(key)
        value = self.raw.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"a table{what}", value)
        return Table(value, self.path, where)

    def tables(self, key: str) -> list[Table]:
        """An array of tables (``[[key]]``); empty when missing."""
        value = self.raw.get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, f"an array of tables ([[{self.name(key)}]])", value)
        where = self.name(key)
        found = []
        for i, item in enumerate(value):
            found.append(Table(item, self.path, f"{where}[{i}]"))
        return found
