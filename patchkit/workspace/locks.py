"""One writer at a time per tree (a checkout, an installed package, the cache's shared trees,
a project's files): an exclusive file lock (``flock``) per tree, kept beside the tree's state
directory: ``<git dir>/patchkit.lock`` of a checkout (the worktree's own git directory, for a
linked worktree), ``.patchkit/<name>.lock`` beside an installed package's state. So it leaves no
trace in a tree, and any two patchkit processes exclude each other, whatever caches they use.

A writer waits a little (``PATCHKIT_LOCK_TIMEOUT`` seconds, default 10) and then refuses,
naming the process that holds the lock and its command, which it wrote beside the lock. A
reader takes the same lock for the moment it reads, so it never sees a half-written tree. The
lock is the kernel's (``flock``): a process that dies, even by SIGKILL, releases it; one that
ends removes the file (a waiter that then holds a removed file takes the new one). Within one
process the lock is re-entrant, so a command that reads its own tree after writing it is fine.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from patchkit.errors import ConfigError, TreeBusy
from patchkit.trust.envvars import seconds
from patchkit.workspace.tree import Tree

LOCK = ".lock"
HOLDER = ".holder.json"
_UNWRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)
DEFAULT_TIMEOUT = 10.0
POLL = 0.05  # seconds between tries while another process holds a lock


def timeout() -> float:
    return seconds("PATCHKIT_LOCK_TIMEOUT", DEFAULT_TIMEOUT)  # (`nan` would wait forever)


def _beside(directory: Path, suffix: str) -> Path:
    """The lock (``.lock``) or holder note (``.holder.json``) of the tree whose state lives in
    ``directory``: beside that directory, so wherever the tree's state is, so is its lock."""
    return directory.with_name(directory.name + suffix)


class _Held(threading.local):
    """The locks this thread holds: lock file -> (descriptor, depth). Acquiring a held lock
    again nests instead of deadlocking; another thread opens its own descriptor and waits, as
    another process does (``flock`` locks belong to an open file, not to a process)."""

    def __init__(self) -> None:
        self.locks: dict[Path, tuple[int, int]] = {}


_held = _Held()


def _try_flock(path: Path) -> int | None:
    """A descriptor of ``path`` holding its exclusive lock, or None while another holds it.
    A lock file made by another user (root applied to a system package) is opened read-only:
    ``flock`` needs no write access."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno not in _UNWRITABLE or not path.exists():
            raise
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    if os.fstat(fd).st_nlink == 0:  # removed since it was opened: lock the file there now
        os.close(fd)
        return None
    return fd


def _acquire(path: Path, wait: float) -> bool:
    """Take the lock of ``path`` (re-entrant in this thread), trying for ``wait`` seconds."""
    fd, depth = _held.locks.get(path, (-1, 0))
    if depth:
        _held.locks[path] = (fd, depth + 1)
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    while True:
        found = _try_flock(path)
        if found is not None:
            _held.locks[path] = (found, 1)
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


def _release(path: Path) -> None:
    fd, depth = _held.locks[path]
    if depth > 1:
        _held.locks[path] = (fd, depth - 1)
        return
    del _held.locks[path]
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def holder(directory: Path) -> dict[str, object] | None:
    """What the process holding (or that last held) the lock wrote about itself."""
    try:
        found = json.loads(_beside(directory, HOLDER).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _describe(info: dict[str, object] | None) -> str:
    if not info:
        return "another patchkit process"
    return (
        f"patchkit process {info.get('pid')} (`{info.get('command')}`, since {info.get('since')})"
    )


@contextlib.contextmanager
def exclusive(directory: Path, what: str, command: str, reader: bool = False) -> Iterator[None]:
    """Hold the lock of the tree whose state lives in ``directory`` (``what`` names the tree
    in messages); refuse with :class:`TreeBusy` if another process keeps it too long."""
    path = _beside(directory, LOCK)
    if not _take(directory, what, reader):
        yield  # a reader where the lock cannot be made: nobody who could write locks it either
        return
    outermost = _held.locks[path][1] == 1
    try:
        if outermost:
            with contextlib.suppress(OSError):  # another user's lock: their note stays
                _write_holder(directory, command)
        yield
    finally:
        if outermost:  # no trace left: a waiter on the removed file locks the next one
            with contextlib.suppress(OSError):
                _beside(directory, HOLDER).unlink()
            with contextlib.suppress(OSError):
                path.unlink()
        _release(path)


def _take(directory: Path, what: str, reader: bool) -> bool:
    """Take the lock of ``directory``'s tree: True once held; False for a reader that cannot
    make it; TreeBusy when another process keeps it past the timeout."""
    path = _beside(directory, LOCK)
    try:
        taken = _acquire(path, timeout())
    except OSError as exc:  # a read-only tree, a file system without locks (NFS without lockd)
        if reader and exc.errno in _UNWRITABLE:
            return False
        raise ConfigError(
            f"cannot lock {what} ({path}): {exc.strerror or exc}",
            hint=f"patchkit locks a tree beside its state, in {path.parent}: it must be "
            "writable, on a file system with locks",
        ) from None
    if not taken:
        raise TreeBusy(
            f"{what} is being changed by {_describe(holder(directory))}; "
            "refusing to touch it at the same time",
            hint="wait for that command to finish and run this one again",
        ) from None
    return True


def _write_holder(directory: Path, command: str) -> None:
    info = {
        "pid": os.getpid(),
        "command": command,
        "argv": ["patchkit", *sys.argv[1:]],
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = _beside(directory, HOLDER)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info))
    tmp.replace(path)


def writing(tree: Tree, command: str) -> contextlib.AbstractContextManager[None]:
    """The one writer of ``tree`` (apply, reset, record, port, rebase, fetch)."""
    return exclusive(tree.state_dir, f"the {tree.kind} at {tree.root}", command)


def reading(tree: Tree, command: str = "status") -> contextlib.AbstractContextManager[None]:
    """Read ``tree`` whole: no writer is half-way through it meanwhile (where the lock cannot
    be made for want of write access, nobody who could write the tree is locking it either)."""
    return exclusive(tree.state_dir, f"the {tree.kind} at {tree.root}", command, reader=True)
