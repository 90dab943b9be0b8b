"""What patchkit applied to a tree, with content hashes: what makes re-apply a no-op, status
exact and reset byte-for-byte. Stored as JSON in the tree's state directory, beside a small
content-addressed store of the original files."""

from __future__ import annotations

import contextlib
import enum
import functools
import json
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from patchkit.errors import TreeError, shown
from patchkit.fileio import read_file
from patchkit.model import PatchKind
from patchkit.outcome import Outcome, Step
from patchkit.workspace.tree import sha256

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any

STATE_VERSION = 1


@dataclass(frozen=True)
class FileRecord:
    """A file patchkit changed: its digest and mode before, and what patchkit left."""

    path: str
    original: str | None  # sha256 of the content before patchkit; None: the file did not exist
    original_mode: int | None
    result: str | None  # sha256 of what patchkit left; None: patchkit deleted it
    result_mode: int | None

    def edited(self, current: bytes | None) -> bool:
        """The file (``current``: its content now, None when it is gone) is not what patchkit
        left: edited, recreated or deleted since it was applied."""
        return (sha256(current) if current is not None else None) != self.result


@dataclass(frozen=True)
class AppliedPatch:
    """A patch as applied: its digest then, its outcome, the files it changed."""

    id: str
    set_name: str
    kind: PatchKind
    digest: str  # sha256 of the patch file when it was applied
    outcome: Outcome
    step: Step
    files: tuple[str, ...]


@dataclass(frozen=True)
class State:
    """What patchkit applied to a tree, and the files it changed."""

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
            data = read_file(self.file)
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
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, too deep or long
            raise TreeError(
                f"{path}: unreadable patchkit state ({exc})", hint=_way_out(path)
            ) from None
        return _from_json(raw, path)

    @staticmethod
    def render(state: State | None) -> str | None:
        """The sha256 of the state file ``save(state)`` writes (None: no state file)."""
        return None if state is None else sha256(_dump(state))

    def save(self, state: State | bytes | None) -> None:
        """Write ``state`` (bytes: a state file as written before, replayed as it is)."""
        if state is None:
            self.file.unlink(missing_ok=True)
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        try:
            tmp.write_bytes(state if isinstance(state, bytes) else _dump(state))
        except BaseException:  # a full disk: no half-written file is left behind
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(self.file)

    def put(self, content: bytes) -> str:
        digest = sha256(content)
        if digest in self._saved:  # an apply saves each original once, then names it again
            return digest
        path = os.path.join(self.objects, digest)
        if not os.path.exists(path):
            tmp = path + ".tmp"
            try:
                try:
                    _write(tmp, content)
                except FileNotFoundError:  # the first object: make the directory
                    self.objects.mkdir(parents=True, exist_ok=True)
                    _write(tmp, content)
            except BaseException:  # a full disk: no half-written object is left behind
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            os.replace(tmp, path)  # an object is whole or absent
        self._saved.add(digest)
        return digest

    def get(self, digest: str) -> bytes:
        """The saved bytes named ``digest``; a damaged object (cut short by a power loss, say)
        is refused, never restored over a file."""
        if not _DIGEST.fullmatch(digest):  # a name from a journal or state file: never a path
            raise TreeError(
                f"{self.objects}: {shown(digest)} names no saved original (not a sha256)",
                hint="the state directory was damaged; restore the file from upstream by hand",
            )
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


_DIGEST = re.compile(r"[0-9a-f]{64}")
_OPT_DIGEST = (str, None)  # a digest; checked as one where it names a saved original (get)
_MODE = (int, None)
# What each record of a state file holds: a type, a digest pattern, or a choice of them.
_FILE_SHAPE: dict[str, Any] = {
    "path": str,
    "original": _OPT_DIGEST,
    "original_mode": _MODE,
    "result": _OPT_DIGEST,
    "result_mode": _MODE,
}
_PATCH_SHAPE: dict[str, Any] = {
    "id": str,
    "set_name": str,
    "kind": PatchKind,
    "digest": str,
    "outcome": Outcome,
    "step": Step,
    "files": list,
}


class _Malformed(Exception):
    """Where a state file departs from its shape (a key path) and how."""


def _fits(value: Any, shape: Any) -> bool:
    if isinstance(shape, tuple):
        return any(_fits(value, one) for one in shape)
    if shape is None:
        return value is None
    if isinstance(shape, re.Pattern):
        return isinstance(value, str) and shape.fullmatch(value) is not None
    if isinstance(shape, enum.EnumMeta):  # one of its values (the file holds the value)
        return isinstance(value, str) and value in shape._value2member_map_
    return isinstance(value, shape) and not (shape is int and isinstance(value, bool))


def _record(raw: Any, shape: dict[str, Any], where: str) -> dict[str, Any]:
    """``raw`` checked against ``shape``: exactly its keys, each of its type."""
    if not isinstance(raw, dict) or set(raw) != set(shape):
        raise _Malformed(f"{where} must be an object with the keys {', '.join(sorted(shape))}")
    for key, want in shape.items():
        if not _fits(raw[key], want):
            raise _Malformed(f"{where}.{key} has the wrong type or form")
    return raw


def _checked(raw: Any) -> State:
    top: dict[str, Any] = {"target": str, "commit": (str, None), "lock_version": str}
    if not isinstance(raw, dict):
        raise _Malformed("the file must hold one JSON object")
    _record({k: raw.get(k) for k in top}, top, "state")
    patches, files = raw.get("patches"), raw.get("files")
    if not isinstance(patches, list) or not isinstance(files, dict):
        raise _Malformed("state.patches must be a list and state.files an object")
    applied = []
    for i, item in enumerate(patches):
        patch = _record(item, _PATCH_SHAPE, f"patches[{i}]")
        if not all(isinstance(f, str) for f in patch["files"]):
            raise _Malformed(f"patches[{i}].files must be a list of paths")
        applied.append(_applied(patch))
    records = {k: FileRecord(**_record(v, _FILE_SHAPE, f"files[{k!r}]")) for k, v in files.items()}
    return State(raw["target"], raw["commit"], raw["lock_version"], tuple(applied), records)


def _applied(patch: dict[str, Any]) -> AppliedPatch:
    """A checked record of ``patches``: its values as the enums they are (the file holds their
    values, as every state file written before did)."""
    return AppliedPatch(
        patch["id"],
        patch["set_name"],
        PatchKind(patch["kind"]),
        patch["digest"],
        Outcome(patch["outcome"]),
        Step(patch["step"]),
        tuple(patch["files"]),
    )


def _from_json(raw: Any, path: Path) -> State:
    if not isinstance(raw, dict) or raw.get("version") != STATE_VERSION:
        found = raw.get("version") if isinstance(raw, dict) else None
        raise TreeError(
            f"{path}: state version {shown(found)} is not {STATE_VERSION}", hint=_way_out(path)
        )
    try:
        return _checked(raw)
    except _Malformed as exc:
        raise TreeError(f"{path}: malformed patchkit state: {exc}", hint=_way_out(path)) from None


def _way_out(path: Path) -> str:
    """What to do about a state file patchkit cannot read: it no longer knows what it applied."""
    return (
        f"patchkit cannot tell what it applied to this tree: move {path} aside, put the tree "
        "back to upstream's files (`git checkout -- .` in a checkout, reinstall an installed "
        "package), then apply again"
    )
