"""Reset a tree: put every file patchkit changed back to its upstream bytes (the core of
``patchkit reset``, and of moving the cache's tree to a new lock).

A file edited after apply is never overwritten silently: reset refuses, or with ``force`` saves
the edited file under the state directory first (a link as a link) and says where; what cannot
be reset safely is refused before anything is saved."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import TreeError
from patchkit.workspace.journal import Write
from patchkit.workspace.links import LINK
from patchkit.workspace.locks import writing
from patchkit.workspace.places import check_places
from patchkit.workspace.state import State, StateStore
from patchkit.workspace.tree import Tree, write_file
from patchkit.workspace.txn import Recovery, commit, recover


@dataclass(frozen=True)
class ResetReport:
    restored: tuple[str, ...]
    saved_aside: Path | None = None
    modes_kept: tuple[str, ...] = ()  # patched files whose mode the user changed: mode kept
    recovered: Recovery | None = None  # an interrupted write this run rolled back first


def reset(*, tree: Tree, force: bool = False) -> ResetReport:
    with writing(tree, "reset"):
        return _reset(tree, force)


def _reset(tree: Tree, force: bool) -> ResetReport:
    store = StateStore(tree.state_dir)
    recovered = recover(tree, store)
    state = store.load()
    if state is None:
        return ResetReport((), recovered=recovered)
    edited = {}
    for path, rec in state.files.items():
        current = tree.read(path)
        if rec.edited(current):
            edited[path] = current
    if edited and not force:
        raise TreeError(
            f"files were edited after patchkit applied them: {', '.join(sorted(edited))}",
            hint="`patchkit record` keeps the edits as a patch; `patchkit reset --force` saves "
            "them aside and resets",
        )
    writes, modes_kept = _writes(tree, store, state, edited)
    check_places(tree, writes)  # refused before anything is saved aside
    aside = _save_aside(tree, store, edited) if edited else None
    commit(tree, store, writes, None, command="reset")
    return ResetReport(tuple(w.path for w in writes), aside, tuple(modes_kept), recovered)


def _writes(
    tree: Tree, store: StateStore, state: State, edited: dict[str, bytes | None]
) -> tuple[list[Write], list[str]]:
    """Every file back at its upstream bytes; an edited one (saved aside first) may change
    type: a person's link is replaced by the file, their file by the link (``retype``)."""
    writes, modes_kept = [], []
    for path, rec in sorted(state.files.items()):
        original = store.get(rec.original) if rec.original else None
        mode = rec.original_mode
        current_mode = tree.mode(path)
        left = rec.result_mode or rec.original_mode  # the mode patchkit left the file with
        if (
            original is not None
            and current_mode not in (None, left)
            and LINK not in (current_mode, left)
        ):
            mode = current_mode  # the user changed it since: theirs to keep
            modes_kept.append(path)
        writes.append(Write(path, original, mode, retype=path in edited))
    return writes, modes_kept


def _save_aside(tree: Tree, store: StateStore, edited: dict[str, bytes | None]) -> Path:
    """Each edited file copied under the state directory as it is: a link as a link (the same
    target, never followed), a file with its bytes and mode."""
    saved = store.dir / "saved"
    saved.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%d-%H%M%S-"), dir=saved))
    for path, content in edited.items():
        if content is not None:
            write_file(aside / path, content, tree.mode(path))  # (a link: made, not followed)
    return aside
