"""The warm path of ``apply`` and ``status``: when nothing a recorded run depended on changed
(the lock, the patch sets and every patch file, the verification records, patchkit's own
code and its parser libraries, and the tree's files it read and directories it listed), do
what that run did without doing its work again.

- ``apply`` after ``reset`` (no state, no journal, the tree's files back at the bytes the
  recorded run found): the recorded results are read from the state store, checked by their
  digest, and written through the journal, all or nothing, under the tree's lock, as the
  full path writes them (``workspace/replay_txn.py``); then what that run printed is printed.
- ``status``, and ``apply`` over its own result (nothing to write): what the recorded run
  printed, when the state, the journal and the files the state names are as they were.

Anything not as recorded, or not recorded, a busy tree, a cache or tree that refuses, is a
miss: the caller takes the full path, which waits, rolls back, explains or records again
(``ops/warm_record.py``). This module and those it imports use only the standard library's
``os``, ``sys``, ``stat``, ``hashlib``, ``hmac`` and ``fcntl``: no engine, no parser, no
patch-set reader, no data model, not even ``pathlib``, ``json`` or ``dataclasses``, so a warm
run costs little more than the interpreter's start.
"""

from __future__ import annotations

import os
import sys

from patchkit.errors import PatchkitError
from patchkit.workspace import replay, replay_txn

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from patchkit.workspace.replay import Record


class Replayed:
    """What a replayed run prints (on stdout and stderr)."""

    __slots__ = ("stderr", "stdout")

    def __init__(self, stdout: str, stderr: str) -> None:
        self.stdout, self.stderr = stdout, stderr


# What a command line asks, in the order its record's name keeps it (other options, such as
# ``--quiet`` or ``--python`` without ``--installed``, change nothing a replay does or prints).
_ASKED = {
    "status": ("target", "sets", "include", "json"),
    "apply": (
        "target", "sets", "include", "json", "exclude", "allow_dirty", "allow_other_commit",
        "explain", "keep_going",
    ),
}  # fmt: skip


def request_key(command: str, asked: Mapping[str, Any]) -> str:
    """The name a run of ``command`` is recorded under: what it was asked (``asked``: the
    project, the checkout and the options of ``_ASKED``, as the full parser reads them) and
    the cache it uses."""
    checkout = asked["checkout"]
    where = os.path.realpath(checkout) if checkout is not None else None
    cache = os.environ.get("PATCHKIT_CACHE")
    options = [asked[name] for name in _ASKED[command]]
    return replay.request_key([command, os.path.realpath(asked["project"]), where, cache, *options])


def to_terminal() -> bool:
    """Whether stdout or stderr is a terminal (drawn with rich: never recorded or replayed)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream.isatty():
                return True
        except (AttributeError, ValueError):
            continue
    return False


def replay_request(command: str, asked: Mapping[str, Any]) -> Replayed | None:
    """The recorded run of this command line done again, or None (a miss: nothing written, or
    a journal the full path rolls back first). An ``apply`` is the recorded one after
    ``reset``, else the recorded one over its own result (nothing to write)."""
    key = request_key(command, asked)
    try:
        if command == "status":
            return _replayed(key, "status", _unchanged)
        return _replayed(key, "apply", _apply) or _replayed(
            f"{key}-again", "apply-again", _unchanged
        )
    except (OSError, PatchkitError, replay_txn.Busy):
        return None


def _replayed(name: str, command: str, again: Callable[[Record], bool]) -> Replayed | None:
    """What the record ``name`` of ``command`` printed, once ``again`` did what it did."""
    record = replay.load(name)
    if record is None or record.command != command or not again(record):
        return None
    return Replayed(record.stdout, record.stderr)


def _apply(record: Record) -> bool:
    """The recorded apply's writes done again, when every input is as recorded."""
    with replay_txn.Held(record.state_dir):
        again = replay.unchanged(record.inputs)
        if again is None or not replay_txn.places_usable(record):
            return False
        places = record.writes[1 :: replay.WRITE]
        if not all(place in again for place in places):
            return False  # (each was read again: a file the run wrote is never judged by stat)
        pack, state = _saved(record, record.pack), _saved(record, record.state)
        if pack is None or state is None or not replay_txn.originals_saved(record):
            return False  # gone or damaged: the full path makes them again
        replay_txn.commit(record, pack, state)
    return True


def _saved(record: Record, name: str) -> bytes | None:
    """An object of the tree's state store, when it still has the digest it is named by."""
    content = replay.read(os.path.join(record.state_dir, "objects", name))
    return content if replay.digest(content) == name else None


def _unchanged(record: Record) -> bool:
    """Whether nothing a recorded run that only read the tree read changed (read under the
    tree's lock, as the full path reads, so never half-way through a writer)."""
    with replay_txn.Held(record.state_dir):
        return replay_txn.places_usable(record) and replay.unchanged(record.inputs) is not None
