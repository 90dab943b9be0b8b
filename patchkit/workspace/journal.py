"""The journal of a write to a tree (``journal.json`` in the tree's state directory): its one
format, written here before any file is touched and read back here by the next writer after
an interruption (``txn``), and by a recorded apply that writes its files again
(``ops.warm_record`` keeps its text; ``replay_txn`` writes it).

It names every file about to change with the digest and mode it had before (its bytes saved in
the state store) and will have after, and the state file as it was. Version 1 journals (before
contents only) are still read."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import TreeError
from patchkit.workspace.links import LINK
from patchkit.workspace.replay_txn import replace_whole
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree, sha256

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


@dataclass(frozen=True)
class Write:
    """One file to write (``content`` None: remove it), with its mode."""

    path: str  # repository path
    content: bytes | None  # None deletes the file
    mode: int | None = None
    # it may replace a link by a file or a file by a link (never a directory): reset, once the
    # person's own one was put aside; otherwise a write never changes a file's type
    retype: bool = False


JOURNAL_VERSION = 2
Entry = dict[str, "Any"]  # one file of a journal: before, before_mode, after, after_mode


def journal_path(store: StateStore) -> Path:
    return store.dir / "journal.json"


def digest(content: bytes | None) -> str | None:
    return None if content is None else sha256(content)


def _saved(store: StateStore, content: bytes | None) -> str | None:
    return None if content is None else store.put(content)


def file_entry(
    before: str | None, before_mode: int | None, after: str | None, after_mode: int | None
) -> Entry:
    """One file: its saved original (a digest in the store; None: it did not exist) and mode,
    the digest and mode the write gives it."""
    return {"before": before, "before_mode": before_mode, "after": after, "after_mode": after_mode}


def journal_text(command: str, pid: int, files: dict[str, Entry], state_before: str | None) -> str:
    """The journal's text (compact: the C encoder writes it)."""
    journal = {
        "version": JOURNAL_VERSION,
        "command": command,
        "pid": pid,
        "files": files,
        "state_before": state_before,
    }
    return json.dumps(journal, sort_keys=True)


def save_journal(
    tree: Tree,
    store: StateStore,
    writes: Sequence[Write],
    before: dict[str, tuple[bytes | None, int | None]],
    command: str,
) -> None:
    """Save the originals and the journal before any file is touched; when the disk refuses
    (full, a file size limit), a TreeError and the tree exactly as it was."""
    try:
        store.dir.mkdir(parents=True, exist_ok=True)
        content = _text(store, writes, before, command).encode()
        replace_whole(str(journal_path(store)), content, sync=True)  # whole or absent
    except OSError as exc:
        raise TreeError(
            f"{tree.root}: saving the journal in {store.dir} failed "
            f"({exc.strerror or exc}); nothing was written",
            hint="free disk space (or raise the file size limit), then run the command again",
        ) from None


def _text(
    store: StateStore,
    writes: Sequence[Write],
    before: dict[str, tuple[bytes | None, int | None]],
    command: str,
) -> str:
    """What the next writer needs to roll the write back: every file's old bytes (saved in the
    store) and mode, its new digest and mode, and the state file as it was."""
    old_state = store.file.read_bytes() if store.file.exists() else None
    files = {
        w.path: file_entry(
            _saved(store, before[w.path][0]), before[w.path][1], digest(w.content), w.mode
        )
        for w in writes
    }
    return journal_text(command, os.getpid(), files, _saved(store, old_state))


def load_journal(store: StateStore) -> dict[str, Any] | None:
    """The journal an interrupted write left (None: there is none); an unreadable one is a
    TreeError naming it."""
    path = journal_path(store)
    if not path.exists():
        return None
    try:
        journal = json.loads(path.read_text())
        if journal.get("version") != JOURNAL_VERSION:
            journal = _from_v1(journal)
        if not all({"before", "after", "before_mode"} <= set(e) for e in journal["files"].values()):
            raise KeyError("files")
        return dict(journal)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TreeError(
            f"{path}: the journal of an interrupted patchkit run is unreadable ({exc})",
            hint=f"check the files it names against `patchkit status`, then remove {path}",
        ) from None


def _from_v1(journal: dict[str, Any]) -> dict[str, Any]:
    """A journal written before version 2: before-contents only, no after-digests."""
    files = {
        path: {"before": f["sha256"], "before_mode": f["mode"], "after": None, "v1": True}
        for path, f in journal["files"].items()
    }
    return {"version": 1, "command": "apply", "pid": None, "files": files, "v1": journal}


def changed_since(entry: Entry, current: bytes | None) -> bool:
    """The file is neither as it was before the write nor as the write left it."""
    if entry.get("v1"):
        return False  # a version 1 journal has no after-digests: it cannot tell
    return digest(current) not in (entry["before"], entry["after"])


def kind_changed_since(entry: Entry, mode: int | None) -> bool:
    """Someone made the file a symbolic link, or a link a file, since the write: it is neither
    the kind it was before the write nor the kind the write left (``mode`` None: no file)."""
    if entry.get("v1") or mode is None:
        return False
    after = entry.get("after_mode") or entry["before_mode"]
    kinds = {m == LINK for m in (entry["before_mode"], after) if m is not None}
    return bool(kinds) and (mode == LINK) not in kinds


def mode_changed_since(entry: Entry, mode: int | None) -> bool:
    """Someone gave the file a mode neither it had before nor the write gave it."""
    if entry.get("v1") or mode is None:
        return False
    after = entry.get("after_mode") or entry["before_mode"]
    return mode not in (entry["before_mode"], after) and not (
        entry["before_mode"] is None and after is None and mode == 0o100644
    )
