"""All-or-nothing writes to a tree.

Everything is computed in memory first. Then the current content of every file about to change
is saved in the state store and listed in a journal; files are replaced one by one (each
atomically); the state is saved; the journal is removed. If anything fails, every file is put
back from memory. If the process dies half-way, the next patchkit run finds the journal and
restores the tree before doing anything else.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import TreeError
from patchkit.workspace.state import State, StateStore
from patchkit.workspace.tree import Tree, remove_file, sha256, write_file

log = logging.getLogger("patchkit.workspace.txn")


@dataclass(frozen=True)
class Write:
    path: str  # repository path
    content: bytes | None  # None deletes the file
    mode: int | None = None


# After files of a kind of tree were written or restored (installed trees drop stale bytecode).
PostWrite = Callable[[Tree, list[str]], object]
_post_write: dict[str, PostWrite] = {}


def register_post_write(kind: str, hook: PostWrite) -> None:
    _post_write[kind] = hook


def _written(tree: Tree, paths: list[str]) -> None:
    hook = _post_write.get(tree.kind)
    if hook is not None and paths:
        hook(tree, paths)


def _journal(store: StateStore) -> Path:
    return store.dir / "journal.json"


def _state_digest(store: StateStore) -> str | None:
    try:
        return sha256(store.file.read_bytes())
    except FileNotFoundError:
        return None


def _put_back(tree: Tree, path: str, content: bytes | None, mode: int | None) -> None:
    target = tree.disk_path(path)
    if content is None:
        remove_file(target, tree.root)
    else:
        write_file(target, content, mode)


def commit(tree: Tree, store: StateStore, writes: Iterable[Write], state: State | None) -> None:
    """Apply ``writes`` and save ``state``, or leave every file as it was."""
    writes = list(writes)
    before = {w.path: (tree.read(w.path), tree.mode(w.path)) for w in writes}
    files = {
        path: {"sha256": store.put(content) if content is not None else None, "mode": mode}
        for path, (content, mode) in before.items()
    }
    store.dir.mkdir(parents=True, exist_ok=True)
    journal = {"files": files, "new_state": store.render(state)}
    tmp = _journal(store).with_suffix(".tmp")
    tmp.write_text(json.dumps(journal, indent=1, sort_keys=True))
    tmp.replace(_journal(store))  # a journal is whole or absent
    done: list[str] = []
    try:
        for w in writes:
            _put_back(tree, w.path, w.content, w.mode)
            done.append(w.path)
        store.save(state)
    except BaseException:
        for path in reversed(done):
            content, mode = before[path]
            _put_back(tree, path, content, mode)
        _journal(store).unlink(missing_ok=True)
        _written(tree, done)
        raise
    _journal(store).unlink(missing_ok=True)
    _written(tree, done)


def recover(tree: Tree, store: StateStore) -> list[str]:
    """Finish an interrupted transaction by restoring every journalled file."""
    path = _journal(store)
    if not path.exists():
        return []
    try:
        journal = json.loads(path.read_text())
        files, new_state = journal["files"], journal["new_state"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TreeError(
            f"{path}: the journal of an interrupted patchkit run is unreadable ({exc})",
            hint=f"check the files it names against `patchkit status`, then remove {path}",
        ) from None
    if _state_digest(store) == new_state:
        path.unlink()  # the run had finished; only the journal was left behind
        return []
    for repo_path, saved in files.items():
        content = store.get(saved["sha256"]) if saved["sha256"] else None
        _put_back(tree, repo_path, content, saved["mode"])
    path.unlink()
    _written(tree, sorted(files))
    log.warning("restored %d file(s) from an interrupted patchkit run", len(files))
    return sorted(files)
