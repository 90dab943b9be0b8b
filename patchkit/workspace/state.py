"""What patchkit applied to a tree, with content hashes: what makes re-apply a no-op, status
exact and reset byte-for-byte. Stored as JSON in the tree's state directory, beside a small
content-addressed store of the original files."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from patchkit.errors import TreeError
from patchkit.workspace.tree import sha256

STATE_VERSION = 1


@dataclass(frozen=True)
class FileRecord:
    path: str
    original: str | None  # sha256 of the content before patchkit; None: the file did not exist
    original_mode: int | None
    result: str | None  # sha256 of what patchkit left; None: patchkit deleted it
    result_mode: int | None


@dataclass(frozen=True)
class AppliedPatch:
    id: str
    set_name: str
    kind: str
    digest: str  # sha256 of the patch file when it was applied
    outcome: str
    step: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class State:
    target: str
    commit: str | None  # upstream commit of the tree
    lock_version: str
    patches: tuple[AppliedPatch, ...]
    files: dict[str, FileRecord] = field(default_factory=dict)

    def patch(self, patch_id: str) -> AppliedPatch | None:
        return self._by_id.get(patch_id)

    @functools.cached_property
    def _by_id(self) -> dict[str, AppliedPatch]:
        """The first applied patch of each id (status asks for every patch of a series)."""
        return {p.id: p for p in reversed(self.patches)}


class StateStore:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.file = directory / "state.json"
        self.objects = directory / "objects"
        self._saved: set[str] = set()  # objects this store saw saved (they are never removed)

    def load(self) -> State | None:
        try:
            data = self.file.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TreeError(f"{self.file}: unreadable patchkit state ({exc})") from None
        return self.parse(data, self.file)

    @staticmethod
    def parse(data: bytes, path: Path) -> State:
        """A state file's bytes read back (``path`` names it in messages)."""
        try:
            raw = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TreeError(
                f"{path}: unreadable patchkit state ({exc})",
                hint="restore it from a backup, or remove it and check the tree by hand",
            ) from None
        return _from_json(raw, path)

    @staticmethod
    def render(state: State | None) -> str | None:
        """The sha256 of the state file ``save(state)`` writes (None: no state file)."""
        return None if state is None else sha256(_dump(state))

    def save(self, state: State | None) -> None:
        if state is None:
            self.file.unlink(missing_ok=True)
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        tmp.write_bytes(_dump(state))
        tmp.replace(self.file)

    def put(self, content: bytes) -> str:
        digest = sha256(content)
        if digest in self._saved:  # an apply saves each original once, then names it again
            return digest
        path = os.path.join(self.objects, digest)
        if not os.path.exists(path):
            tmp = path + ".tmp"
            try:
                _write(tmp, content)
            except FileNotFoundError:  # the first object: make the directory
                self.objects.mkdir(parents=True, exist_ok=True)
                _write(tmp, content)
            os.replace(tmp, path)  # an object is whole or absent
        self._saved.add(digest)
        return digest

    def get(self, digest: str) -> bytes:
        """The saved bytes named ``digest``; a damaged object (cut short by a power loss, say)
        is refused, never restored over a file."""
        try:
            content = (self.objects / digest).read_bytes()
        except FileNotFoundError:
            raise TreeError(
                f"{self.objects / digest}: the saved original is missing",
                hint="the state directory was damaged; restore the file from upstream by hand",
            ) from None
        if sha256(content) != digest:
            raise TreeError(
                f"{self.objects / digest}: the saved original is damaged (its content no longer "
                "has the digest it is named by)",
                hint="the state directory was damaged; restore the file from upstream by hand",
            )
        return content


def _write(path: str, content: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(content)


def _fields(record: object) -> dict[str, Any]:
    """A record's fields, values as they are (``asdict`` deep-copies every value: a tenth of
    a second for a state of a thousand files)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}  # type: ignore[arg-type]


def _dump(state: State) -> bytes:
    data = _fields(state)
    data["patches"] = [_fields(p) for p in state.patches]
    data["files"] = {path: _fields(rec) for path, rec in state.files.items()}
    data["version"] = STATE_VERSION
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def _from_json(raw: dict[str, Any], path: Path) -> State:
    if raw.get("version") != STATE_VERSION:
        raise TreeError(f"{path}: state version {raw.get('version')} is not {STATE_VERSION}")
    try:
        return State(
            target=raw["target"],
            commit=raw["commit"],
            lock_version=raw["lock_version"],
            patches=tuple(
                AppliedPatch(**{**p, "files": tuple(p["files"])}) for p in raw["patches"]
            ),
            files={k: FileRecord(**v) for k, v in raw["files"].items()},
        )
    except (KeyError, TypeError) as exc:
        raise TreeError(f"{path}: malformed patchkit state ({exc})") from None
