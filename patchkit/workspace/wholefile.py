"""A file written whole or not at all, with ``os`` alone: the journal and the state file, as
``txn.commit`` writes them and a replay (``replay_txn``) writes them again, through this one
writer (a warm run imports nothing heavier)."""

from __future__ import annotations

import os

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def replace(path: str, content: bytes, *, sync: bool = False) -> None:
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
