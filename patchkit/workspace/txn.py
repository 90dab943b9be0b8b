"""All-or-nothing writes to a tree: the one journal every writer (apply, reset, port, record,
rebase's project files) goes through.

Everything is computed in memory first. Then the bytes of every file about to change, and the
state file as it is, are saved in the state store, and a journal lists each file with the
digest and mode it had before and will have after. Files are replaced one by one (each
atomically); the state is saved; removing the journal is the commit. If anything fails, every
file is put back from memory. If the process dies half-way, the next writer finds the journal
and rolls the whole write back before doing anything else: each file that is as it was before
or as the write left it gets its old bytes and mode, the old state comes back. A file changed
since by someone else (content or mode) is kept as they left it and reported, never replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from patchkit.errors import PatchkitError, TreeError
from patchkit.workspace.journal import (
    Write,
    changed_since,
    journal_path,
    kind_changed_since,
    load_journal,
    mode_changed_since,
    save_journal,
)
from patchkit.workspace.links import LINK
from patchkit.workspace.places import check_places
from patchkit.workspace.replay_txn import replace_whole
from patchkit.workspace.state import State, StateStore
from patchkit.workspace.tree import Tree, remove_file, write_file

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any


class _Keep:
    """Leave the state file as it is (a write that records no state, like ``port``)."""


KEEP = _Keep()


@dataclass(frozen=True)
class Recovery:
    """What rolling back an interrupted write did."""

    command: str  # the command that was interrupted
    restored: tuple[str, ...]  # files put back as they were before it
    kept: tuple[str, ...] = ()  # files changed since by someone else: left as they are
    modes_kept: tuple[str, ...] = ()  # files whose mode someone changed since: mode left

    def lines(self) -> list[str]:
        """What to tell a person."""
        out = [
            f"an interrupted `patchkit {self.command}` was rolled back: "
            f"{len(self.restored)} file(s) restored"
        ]
        if self.kept:
            out.append(
                f"kept as you left them (edited after the interruption): {', '.join(self.kept)}"
            )
        if self.modes_kept:
            out.append(f"kept the mode you gave: {', '.join(self.modes_kept)}")
        return out


@dataclass(frozen=True)
class Pending:
    """A journal left by an interrupted write, as a reader describes it (nothing changed)."""

    command: str
    pid: int | None
    files: tuple[str, ...]  # what the next writer will restore
    edited: tuple[str, ...]  # changed since the interruption: the next writer keeps them

    def describe(self) -> str:
        kept = f"; it keeps {', '.join(self.edited)} as edited since" if self.edited else ""
        return (
            f"an interrupted `patchkit {self.command}` (process {self.pid}) left a journal: the "
            f"next command that writes this tree first rolls it back, restoring "
            f"{len(self.files) - len(self.edited)} file(s) and the state from before it{kept}"
        )


def _written(tree: Tree, paths: list[str]) -> None:
    if paths:
        tree.written(paths)


def _put_back(
    tree: Tree, path: str, content: bytes | None, mode: int | None, retype: bool = False
) -> None:
    """Write or remove one file; a link is removed or replaced itself, never written through
    (``places`` checked every write before the first). ``retype``: a file may replace the link
    there (renamed over it: the link itself goes)."""
    if content is None:
        remove_file(tree.place(path), tree.root)
    elif mode == LINK:
        write_file(tree.place(path), content, mode)
    elif retype:
        write_file(tree.place(path), content, mode or 0o100644)  # (None would stat the link)
    else:
        write_file(tree.disk_path(path), content, mode)


def commit(
    tree: Tree,
    store: StateStore,
    writes: Iterable[Write],
    state: State | bytes | _Keep | None,
    *,
    command: str = "apply",
    expected: Mapping[str, bytes | None] | None = None,
    then: Callable[[], object] | None = None,
) -> None:
    """Apply ``writes`` and save ``state`` (``KEEP``: leave it; bytes: a state file as a recorded
    run wrote it), or leave every file as it was.
    ``expected``: files as the command read them when it computed the writes; one that differs
    now was changed meanwhile by someone else, and nothing is written (their edit would be
    replaced, and lost from the state's originals).
    ``then``: run once every file is written, before the write counts (``record`` saves the
    checkout's state with the project's files); if it raises, every file is put back."""
    writes = list(writes)
    check_places(tree, writes)
    before = {w.path: (tree.read(w.path), tree.mode(w.path)) for w in writes}
    _check_unchanged(tree, before, expected or {}, command)
    save_journal(tree, store, writes, before, command)
    done: list[str] = []
    try:
        _replace_all(tree, store, writes, state, done)
        if then is not None:
            then()
    except BaseException:
        retyped = {w.path for w in writes if w.retype}
        for path in reversed(done):
            content, mode = before[path]
            _put_back(tree, path, content, mode, path in retyped)
        journal_path(store).unlink(missing_ok=True)
        _written(tree, done)
        raise
    journal_path(store).unlink(missing_ok=True)  # the commit point
    _written(tree, done)


def _check_unchanged(
    tree: Tree,
    before: Mapping[str, tuple[bytes | None, int | None]],
    expected: Mapping[str, bytes | None],
    command: str,
) -> None:
    changed = sorted(p for p in before if p in expected and before[p][0] != expected[p])
    if changed:
        raise TreeError(
            f"{', '.join(changed)} changed in {tree.root} while `patchkit {command}` ran "
            "(someone else wrote it); nothing was written",
            hint=f"run `patchkit {command}` again once the other writer is done",
        )


def _replace_all(
    tree: Tree,
    store: StateStore,
    writes: list[Write],
    state: State | bytes | _Keep | None,
    done: list[str],
) -> None:
    """Replace the files one by one (each atomically, listed in ``done`` once replaced), then
    save the state; an OS failure is a TreeError naming what failed (the caller rolls back)."""
    failing = "the state"
    try:
        for w in writes:
            failing = w.path
            # atomic: on failure it is as it was
            _put_back(tree, w.path, w.content, w.mode, w.retype)
            done.append(w.path)
        failing = "the state"
        if not isinstance(state, _Keep):
            store.save(state)
    except OSError as exc:
        if isinstance(exc, PatchkitError):
            raise
        raise TreeError(
            f"{tree.root}: writing {failing} failed "
            f"({exc.strerror or exc}); every file was put back as it was",
            hint="free disk space or fix the permissions, then run the command again",
        ) from None


# -- after a crash ------------------------------------------------------------------------------
def pending(tree: Tree, store: StateStore) -> Pending | None:
    """The journal an interrupted write left, described; nothing is changed."""
    journal = load_journal(store)
    if journal is None:
        return None
    edited = tuple(sorted(p for p, e in journal["files"].items() if changed_since(e, tree.read(p))))
    return Pending(journal["command"], journal["pid"], tuple(sorted(journal["files"])), edited)


def rolled_back(
    tree: Tree, store: StateStore
) -> tuple[State | None, Callable[[str], bytes | None]]:
    """The state and the files as rolling back the pending journal would leave them, for a
    reader; nothing is written."""
    journal = load_journal(store)
    if journal is None or "v1" in journal:
        return store.load(), tree.read
    files: dict[str, bytes | None] = {}
    for path, entry in journal["files"].items():
        current = tree.read(path)
        if not changed_since(entry, current):
            files[path] = store.get(entry["before"]) if entry["before"] else None
    before = journal["state_before"]
    state = StateStore.parse(store.get(before), store.file) if before else None

    def read(path: str) -> bytes | None:
        return files[path] if path in files else tree.read(path)

    return state, read


def recover(tree: Tree, store: StateStore) -> Recovery | None:
    """Roll back an interrupted write (its journal), keeping what someone changed since."""
    journal = load_journal(store)
    if journal is None:
        return None
    if "v1" in journal and StateStore.render(store.load()) == journal["v1"].get("new_state"):
        journal_path(store).unlink()  # a version 1 run that had finished
        return None
    restored, kept, modes = [], [], []
    for path, entry in sorted(journal["files"].items()):
        current, mode = tree.read(path), tree.mode(path)
        content = store.get(entry["before"]) if entry["before"] else None
        user_mode = mode_changed_since(entry, mode)
        theirs = changed_since(entry, current) or kind_changed_since(entry, mode)
        if theirs or (user_mode and content is None):
            kept.append(path)  # someone changed it after the interruption: theirs now
            continue
        want = mode if user_mode else entry["before_mode"]
        if user_mode:
            modes.append(path)
        if current != content or (content is not None and want != mode):
            retype = mode == LINK == entry.get("after_mode")  # the link the write left
            _put_back(tree, path, content, want, retype)
            restored.append(path)
    _restore_state(store, journal)
    journal_path(store).unlink()
    _written(tree, restored)
    return Recovery(journal["command"], tuple(restored), tuple(kept), tuple(modes))


def _restore_state(store: StateStore, journal: dict[str, Any]) -> None:
    if "v1" in journal:
        return  # a version 1 journal kept no state: the state was saved last, so it is the old
    before = journal["state_before"]
    if before is None:
        store.file.unlink(missing_ok=True)
        return
    replace_whole(str(store.file), store.get(before))
