"""``upstream.lock``: the pinned upstream commit and release of every target (TOML, edited by
people too: read with the standard library, written back with tomlkit, keeping its comments).

```toml
[targets.vllm]
repository = "https://github.com/vllm-project/vllm"
version = "0.19.0"
commit = "2a69949bd"
source = { kind = "index", package = "vllm" }
pins = { flashinfer = "0.6.6" }
```
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError, shown
from patchkit.model import Lock, LockEntry, SourceKind, SourceSpec
from patchkit.project.writer import write_project
from patchkit.tomlread import read_toml
from patchkit.trust.gitargs import check_commit, check_url
from patchkit.trust.names import check_name
from patchkit.upstream.localpath import local_source

log = logging.getLogger("patchkit.project.lock")

LOCK_NAME = "upstream.lock"


def find_lock(start: Path) -> Path:
    """The nearest ``upstream.lock`` at or above ``start``."""
    for directory in (start, *start.parents):
        candidate = directory / LOCK_NAME
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no {LOCK_NAME} found in {start} or above",
        hint="run patchkit from the patch repository, or pass --project DIR",
    )


def _require(table: Any, key: str, where: str, path: Path) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: {where}.{key} must be a non-empty string (got {shown(value)})")
    return value


def _source(raw: Any, where: str, path: Path) -> SourceSpec:
    if not isinstance(raw, dict):
        raise ConfigError(f'{path}: {where}.source must be a table like {{ kind = "index" }}')
    _only(raw, _SOURCE_KEYS, f"{where}.source", path)
    kind_text = _require(raw, "kind", f"{where}.source", path)
    try:
        kind = SourceKind(kind_text)
    except ValueError:
        choices = ", ".join(k.value for k in SourceKind)
        raise ConfigError(
            f"{path}: {where}.source.kind {shown(kind_text)} is not one of {choices}"
        ) from None
    spec = SourceSpec(
        kind=kind,
        package=raw.get("package"),
        url=raw.get("url"),
        path=local_source(raw.get("path"), lock=path, where=where),
    )
    _check_source(spec, f"{path}: {where}.source")
    needed = {SourceKind.INDEX: "package", SourceKind.GIT: "url", SourceKind.PATH: "path"}[kind]
    if not getattr(spec, needed):
        raise ConfigError(
            f"{path}: {where}.source.{needed} is required for kind = {shown(kind.value)}"
        )
    return spec


_ENTRY_KEYS = frozenset({"repository", "version", "commit", "source", "pins"})
_SOURCE_KEYS = frozenset({"kind", "package", "url", "path"})


def _only(raw: dict[str, Any], allowed: frozenset[str], where: str, path: Path) -> None:
    """Refuse a key the lock does not know: a typo (``comit``) or a smuggled option
    (``ref = "--upload-pack=..."``) would otherwise be ignored without a word."""
    unknown = sorted(str(key) for key in raw if key not in allowed)
    if unknown:
        raise ConfigError(
            f"{path}: {where} has unknown keys {', '.join(shown(k) for k in unknown)}",
            hint=f"use only {', '.join(sorted(allowed))} (or fix the spelling)",
        )


def _check_source(spec: SourceSpec, where: str) -> None:
    """What reaches git or a path stays a value: a URL of an allowed scheme, never an option
    (``--upload-pack=...``); a package a name."""
    if spec.url is not None:
        check_url(spec.url, where=where)
    if spec.path is not None:
        check_url(spec.path, where=where, what="path")
    if spec.package is not None:
        check_name(spec.package, what="package", where=where)


def _entry(name: str, raw: Any, path: Path) -> LockEntry:
    where = f"targets.{name}"
    check_name(name, what="target", where=f"{path}: [targets.{name}]")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    _only(raw, _ENTRY_KEYS, where, path)
    pins = raw.get("pins", {})
    if not isinstance(pins, dict) or not all(isinstance(v, str) for v in pins.values()):
        raise ConfigError(f"{path}: {where}.pins must map target names to versions")
    for pinned, version in pins.items():
        check_name(pinned, what="target", where=f"{path}: {where}.pins")
        check_name(version, what="version", where=f"{path}: {where}.pins.{pinned}")
    return LockEntry(
        name=name,
        repository=check_url(_require(raw, "repository", where, path), where=f"{path}: {where}"),
        version=check_name(
            _require(raw, "version", where, path), what="version", where=f"{path}: {where}"
        ),
        commit=check_commit(_require(raw, "commit", where, path), where=f"{path}: {where}"),
        source=_source(raw.get("source"), where, path),
        pins={str(k): str(v) for k, v in pins.items()},
    )


def load_lock(path: Path) -> Lock:
    if not path.is_file():
        raise ConfigError(f"{path} does not exist", hint="create it; see README.md")
    doc = read_toml(path)  # the standard library's reader; tomlkit only to write it back
    targets = doc.get("targets")
    if not isinstance(targets, dict) or not targets:
        raise ConfigError(f"{path}: needs at least one [targets.<name>] table")
    entries = {name: _entry(name, raw, path) for name, raw in targets.items()}
    lock = Lock(path=path, targets=entries)
    for problem in pin_problems(lock):
        if problem not in _warned:  # a command loads the lock more than once: say it once
            _warned.add(problem)
            log.warning("%s", problem)
    return lock


_warned: set[str] = set()


def target(lock: Lock, name: str) -> LockEntry:
    try:
        return lock.targets[name]
    except KeyError:
        known = ", ".join(sorted(lock.targets))
        raise ConfigError(f"{lock.path}: no target {shown(name)} (known: {known})") from None


def pin_problems(lock: Lock) -> list[str]:
    """The lock's own pins that disagree with the versions it locks."""
    return [
        f"{lock.path}: targets.{entry.name}.pins says {other} {version}, but "
        f"targets.{other}.version is {lock.targets[other].version}; "
        f"`patchkit rebase --target {other} --onto {version}` moves it (or rebase "
        f"{entry.name} with --with-pins)"
        for entry in lock.targets.values()
        for other, version in entry.pins.items()
        if other in lock.targets and lock.targets[other].version != version
    ]


def pins_to_move(lock: Lock, target: str) -> dict[str, str]:
    """The targets ``target`` pins at a version the lock does not hold: name -> version."""
    entry = lock.targets[target]
    return {
        other: version
        for other, version in entry.pins.items()
        if other in lock.targets and lock.targets[other].version != version
    }


def tree_pin_problems(lock: Lock, target: str, pins: dict[str, str]) -> list[str]:
    """Pins a target's own tree makes (vLLM's requirements pin flashinfer-python) that
    disagree with the lock, in :func:`pin_problems`' words; a pin the lock keeps too is left
    to :func:`pin_problems` (said once, when the lock is loaded)."""
    entry = lock.targets[target]
    return [
        f"{lock.path}: {entry.name} {entry.version}'s requirements pin {other} {version}, but "
        f"targets.{other}.version is {lock.targets[other].version}; `patchkit rebase --target "
        f"{other} --onto {version}` moves it (or rebase {entry.name} with --with-pins)"
        for other, version in pins.items()
        if other in lock.targets
        and lock.targets[other].version != version
        and entry.pins.get(other) != version
    ]


def move_lock(
    path: Path,
    name: str,
    *,
    version: str,
    commit: str,
    pins: dict[str, str] | None = None,
    files: Mapping[Path, bytes] | None = None,
    command: str = "rebase",
) -> None:
    """Rewrite one target's version and commit in place, keeping comments and layout; ``pins``
    (what the new release itself pins, e.g. vLLM's flashinfer-python) update the pins the lock
    already keeps for that target. ``files`` (a rebase's patch files and metadata) are written
    with it: all of them or none, through the project writer."""
    moved = moved_lock_text(path, name, version=version, commit=commit, pins=pins)
    write_project(path.parent, {**(files or {}), path: moved.encode()}, command=command)


def moved_lock_text(
    path: Path, name: str, *, version: str, commit: str, pins: dict[str, str] | None = None
) -> str:
    """The text :func:`move_lock` would write, for a caller that writes it in a transaction."""
    import tomlkit

    doc = tomlkit.parse(path.read_text())
    table = doc["targets"][name]
    table["version"] = version
    table["commit"] = commit
    kept = table.get("pins")
    for other, pinned in (pins or {}).items():
        if kept is not None and other in kept:
            kept[other] = pinned
    return tomlkit.dumps(doc)
