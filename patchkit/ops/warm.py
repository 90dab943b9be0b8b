"""The warm path of ``apply`` and ``status``: when nothing a recorded run depended on changed
(the lock, the patch sets and every patch file, the verification records, patchkit's own
code, and the tree's files it read), do what that run did without doing its work again.

- ``apply`` after ``reset`` (no state, no journal, the tree's files back at the bytes the
  recorded run found): the recorded results are read from the state store, each checked by
  its digest, and written through the journal, all or nothing, under the tree's lock, as the
  full path writes them; then what that run printed is printed.
- ``status``: what the recorded run printed, when the state, the journal and the files the
  state names are as they were.

Anything not as recorded, or not recorded, is a miss: the caller takes the full path, which
records again (``ops/warm_record.py``). This module imports neither the engine, libcst,
tree-sitter, rich, the package-index client nor the patch-set reader: a warm run must cost
little more than the interpreter's start.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from patchkit.errors import TreeError
from patchkit.workspace import replay
from patchkit.workspace.locks import reading, writing
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree
from patchkit.workspace.txn import Write, commit

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any


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
    """The recorded run of this command line done again, or None (a miss: nothing written)."""
    key = request_key(command, asked)
    return replay_apply(key) if command == "apply" else replay_status(key)


def _tree(record: dict[str, Any]) -> Tree:
    """The checkout the recorded run wrote, fenced from its git directories as it was."""
    root, state_dir = Path(record["root"]), Path(record["state_dir"])
    return Tree(root, state_dir, str(record["target"]), fenced=tuple(record["fenced"]))


def _usable(record: dict[str, Any] | None, command: str) -> bool:
    return record is not None and record.get("command") == command


def replay_apply(key: str) -> Replayed | None:
    """The recorded apply done again from its recorded results, or None (a miss: nothing was
    written)."""
    record = replay.load(key)
    if record is None or not _usable(record, "apply"):
        return None
    tree = _tree(record)
    with writing(tree, "apply"):
        again = replay.unchanged(record["inputs"])
        if again is None:
            return None
        store = StateStore(tree.state_dir)
        try:
            writes = _writes(store.get(record["pack"]), record["writes"])
            state = store.get(record["state"])  # the state file the recorded run wrote
        except TreeError:
            return None  # a saved result is gone or damaged: the full path makes it again
        if writes is None:
            return None
        if not all(place in again for place in record["places"].values()):
            return None  # (each was read again: a file the run wrote is never judged by stat)
        expected = {path: again[place] for path, place in record["places"].items()}
        commit(tree, store, writes, state, command="apply", expected=expected)
    return Replayed(record["stdout"], record["stderr"])


def _writes(pack: bytes, listed: list[list[Any]]) -> list[Write] | None:
    """The recorded writes, each file's bytes cut from the results' pack and checked by its own
    digest (the pack's was checked as it was read); None if one does not match."""
    writes = []
    for path, sha, mode, offset, size in listed:
        content = pack[offset : offset + size] if sha is not None else None
        if replay.digest(content) != sha:
            return None
        writes.append(Write(path, content, mode))
    return writes


def replay_status(key: str) -> Replayed | None:
    """What the recorded status printed, when nothing it read changed; else None."""
    record = replay.load(key)
    if record is None or not _usable(record, "status"):
        return None
    with reading(_tree(record)):
        if replay.unchanged(record["inputs"]) is None:
            return None
    return Replayed(record["stdout"], record["stderr"])
