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
from collections.abc import Sequence
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


def request_key(
    command: str,
    *,
    project: Path,
    target: str,
    checkout: Path | None,
    options: Sequence[object] = (),
) -> str:
    """The name a run of ``command`` is recorded under: what it was asked (``options``: the
    command's other arguments that change what it does or prints) and the cache it uses."""
    where = str(checkout.resolve()) if checkout is not None else None
    cache = os.environ.get("PATCHKIT_CACHE")
    return replay.request_key([command, str(project.resolve()), target, where, cache, *options])


def _tree(record: dict[str, Any]) -> Tree:
    """The checkout the recorded run wrote, fenced from its git directories as it was."""
    root, state_dir = Path(record["root"]), Path(record["state_dir"])
    return Tree(root, state_dir, str(record["target"]), fenced=tuple(record["fenced"]))


def _usable(record: dict[str, Any] | None, command: str) -> bool:
    return (
        record is not None
        and record.get("command") == command
        and record.get("code") == replay.code_key()
    )


def replay_apply(key: str) -> Replayed | None:
    """The recorded apply done again from its recorded results, or None (a miss: nothing was
    written)."""
    record = replay.load(key)
    if record is None or not _usable(record, "apply"):
        return None
    tree = _tree(record)
    with writing(tree, "apply"):
        again = replay.unchanged(record["inputs"])
        if again is None or not _same_listings(tree, record["listed"]):
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


def _same_listings(tree: Tree, listed: dict[str, list[str]]) -> bool:
    """The directories the recorded run listed (a rewrite searching for moved code) hold the
    same files now."""
    return all(tree.files_under(directory) == found for directory, found in listed.items())


def replay_status(key: str) -> Replayed | None:
    """What the recorded status printed, when nothing it read changed; else None."""
    record = replay.load(key)
    if record is None or not _usable(record, "status"):
        return None
    with reading(_tree(record)):
        if replay.unchanged(record["inputs"]) is None:
            return None
    return Replayed(record["stdout"], record["stderr"])
