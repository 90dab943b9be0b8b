"""A recorded apply's writes done again (``ops/warm.py``), under the tree's lock and through its
journal, as ``txn.commit`` writes them, importing only the standard library's ``os`` and
``fcntl``: a warm run must cost little more than the interpreter's start.

It is the same protocol, not another one: the lock is ``locks.py``'s (an ``flock`` of
``<state>.lock``, the file removed by the holder as it lets go), only never waited for (a busy
tree is a miss: the full path waits, and says who holds it); the journal is the one the
recorded run's ``txn.commit`` wrote (its text is in the record, only the process id is this
one's), naming the originals the recorded run saved in the state store. So whatever stops a
replay half-way (a full disk, a kill) is rolled back by the next writer, as any interrupted
write is (``txn.recover``): this module never rolls back itself.

The one writer of a file whole or not at all (``replace_whole``: the journal, the state file)
is here, with ``os`` alone: ``txn`` writes the journal and restores the state through it too.

Only a checkout's files are replayed, each into a real directory of the tree (a directory a
link stands for, or a file stands in, is a miss), made where ``reset`` removed it.
"""

from __future__ import annotations

import fcntl
import os
import stat

from patchkit.workspace.replay import WRITE, Record

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Busy(Exception):
    """The tree's lock is held by another process (or cannot be taken here)."""


class Held:
    """The tree's lock (``locks.py``'s file beside the state directory), held while in the
    ``with`` block; :class:`Busy` at once when another process holds it."""

    def __init__(self, state_dir: str) -> None:
        self.path = state_dir.rstrip("/") + ".lock"
        self.fd = -1

    def __enter__(self) -> Held:
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o644)
        except OSError:
            raise Busy(self.path) from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(self.fd).st_nlink == 0:  # removed by the holder as it let go
                raise OSError(self.path)
        except OSError:
            os.close(self.fd)
            raise Busy(self.path) from None
        return self

    def __exit__(self, *exc: object) -> None:
        try:  # no trace left: a waiter on the removed file takes the next one
            os.unlink(self.path)
        finally:
            os.close(self.fd)  # (closing lets go of the lock)


def originals_saved(record: Record) -> bool:
    """Whether every original the journal names is in the state store (as the recorded run
    saved it): what rolls the replay back if it is interrupted."""
    objects = os.path.join(record.state_dir, "objects")
    return all(os.path.isfile(os.path.join(objects, name)) for name in record.saved)


def places_usable(record: Record) -> bool:
    """Whether each directory of the tree the record reads or writes in is a real directory,
    or missing (then made, for a file written there): never a link, never a file."""
    for directory in record.dirs:
        try:
            if not stat.S_ISDIR(os.lstat(directory).st_mode):
                return False
        except FileNotFoundError:
            continue  # made as the file is written (its parents were checked before it)
        except OSError:
            return False
    return True


def commit(record: Record, pack: bytes, state: bytes) -> None:
    """Write the recorded results (cut from ``pack``) and the state file ``state`` through
    the journal; an OSError leaves the journal for the next writer to roll back."""
    journal = os.path.join(record.state_dir, "journal.json")
    head, tail = record.journal
    replace_whole(journal, f"{head}{os.getpid()}{tail}".encode(), sync=True)
    rows = iter(record.writes)
    for _path, place, sha, mode, offset, size in zip(*[rows] * WRITE, strict=True):
        if not sha:
            _remove(place, record.root)
            continue
        content = pack[int(offset) : int(offset) + int(size)]
        _write(place, content, int(mode) if mode else None)
    replace_whole(os.path.join(record.state_dir, "state.json"), state)
    os.unlink(journal)  # the commit point


def replace_whole(path: str, content: bytes, *, sync: bool = False) -> None:
    """``path`` written whole or not at all: a temporary file beside it (``<name>.tmp``: the
    names ``txn`` and a replay share), on the disk before the rename when ``sync``; when the
    disk refuses (full, a file size limit) no half-written temporary file is left."""
    tmp = os.path.splitext(path)[0] + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC, 0o666)
    try:
        try:
            write_all(fd, content)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, path)


def write_all(fd: int, content: bytes) -> None:
    """Write all of ``content`` (system calls, not a buffered file object: a replay writes a
    thousand files)."""
    view, done = memoryview(content), 0
    while done < len(content):
        done += os.write(fd, view[done:])


def _write(place: str, content: bytes, mode: int | None) -> None:
    """As ``tree.write_file``: a new temporary file beside it, never one a link points at, its
    mode the one recorded (or the replaced file's), renamed over the file."""
    directory, name = os.path.split(place)
    tmp = os.path.join(directory, f".{name}.patchkit-tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    except FileExistsError:  # left by an interrupted write (or put there): never written through
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, 0o755 if mode & 0o111 else 0o644)
        else:
            _keep_mode(fd, place)
        write_all(fd, content)
    finally:
        os.close(fd)
    os.replace(tmp, place)


def _keep_mode(fd: int, place: str) -> None:
    """The mode of the file replaced (a new file keeps the default the umask leaves)."""
    try:
        mode = stat.S_IMODE(os.stat(place).st_mode)
    except FileNotFoundError:
        return
    os.fchmod(fd, mode)


def _remove(place: str, root: str) -> None:
    """As ``tree.remove_file``: the file, and the directories it leaves empty up to ``root``."""
    if os.path.lexists(place):
        os.unlink(place)
    parent = os.path.dirname(place)
    while parent != root and parent.startswith(root + os.sep) and not os.listdir(parent):
        os.rmdir(parent)
        parent = os.path.dirname(parent)
