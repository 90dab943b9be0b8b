"""What a command depended on, kept so that a later run can tell, without redoing the work, that
nothing it depended on changed: the warm path of ``apply`` and ``status`` (``ops/warm.py``).

An input is a file (or the absence of one), kept as the sha256 of its bytes, whether it is
executable, and its fingerprint (one ``lstat``: type and mode, device, inode, size,
modification and change times). A later check takes the fingerprint again: the same one means
the same bytes; another one (a file written back with the same bytes, as ``reset`` does) is
read and compared by digest. A fingerprint is trusted only on a local file system
(``mounts``), and only one taken when the file had not changed for two seconds: a file
changed during the run, or so shortly before it that its times may not tell the next change
apart (git's "racily clean" rule), makes no record at all.

Imports only the standard library and the bottom of patchkit: a warm run must stay cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
from collections.abc import Iterable, Mapping

from patchkit.cache import Cache
from patchkit.workspace.mounts import stat_is_fresh

VERSION = 3  # 3: code and listed directories as inputs; the interpreter in the key
SETTLED_NS = 2_000_000_000  # a file unchanged this long before a run is not racy
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any

    # path -> [sha256 or None (no file), executable (None: not compared), fingerprint ([]: read it)]
    Inputs = dict[str, list[Any]]


def fingerprint(path: str) -> list[int] | None:
    """The file's fingerprint; [] when nothing is there; None when something other than a
    plain file is (a link, say: never an input a record can stand on). A path ending in "/"
    names a directory, whose input is the list of names in it."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not (stat.S_ISDIR if path.endswith("/") else stat.S_ISREG)(st.st_mode):
        return None
    return [st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def read(path: str) -> bytes | None:
    """The file's bytes, or a directory's entries (None: nothing there); a link is refused by
    the open itself (OSError)."""
    if path.endswith("/"):
        try:
            return listing(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    with open(fd, "rb") as handle:
        return handle.read()


def listing(directory: str) -> bytes:
    """A directory's entries, each name with its type as ``lstat`` gives it ("d" a directory,
    "f" a plain file, "l" a link, "o" anything else), sorted by name."""
    with os.scandir(directory) as entries:
        found = sorted(f"{entry.name}\0{_kind(entry)}" for entry in entries)
    return "\n".join(found).encode(errors="surrogateescape")


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "l"
    if entry.is_dir(follow_symlinks=False):
        return "d"
    return "f" if entry.is_file(follow_symlinks=False) else "o"


def digest(content: bytes | None) -> str | None:
    return None if content is None else hashlib.sha256(content).hexdigest()


def _executable(fp: list[int]) -> bool | None:
    """Whether the file is executable (None: no file, or a directory)."""
    return bool(fp[0] & stat.S_IXUSR) if fp and stat.S_ISREG(fp[0]) else None


def snapshot(
    paths: Iterable[str], since_ns: int, known: Mapping[str, tuple[bytes | None, int | None]]
) -> Inputs | None:
    """The inputs of a run that started at ``since_ns``: ``known``, the files the run read
    (their bytes and modes as it read them), and ``paths``, files it depended on without
    handing over their bytes, read now. A file that changed in the two seconds before the run
    or since keeps no fingerprint when its bytes are known (it is read again by every check),
    and makes no record at all when they are not (the bytes now may not be what the run saw)."""
    inputs: Inputs = {}
    for path in [*known, *paths]:
        if path in inputs:
            continue
        fp = fingerprint(path)
        if fp is None:
            return None
        settled = not fp or max(fp[4], fp[5]) < since_ns - SETTLED_NS
        if path in known:
            content, mode = known[path]
            executable = None if mode is None else bool(mode & 0o100)
        elif not settled:
            return None
        else:
            content, executable = (read(path) if fp else None), _executable(fp)
            if fingerprint(path) != fp:
                return None  # changed while read
        trusted = fp if settled and fp and stat_is_fresh(path) else []
        inputs[path] = [digest(content), executable, trusted]
    return inputs


def unchanged(inputs: Inputs) -> dict[str, bytes | None] | None:
    """The bytes of the inputs that had to be read again, when every input is as recorded;
    None as soon as one is not."""
    read_again: dict[str, bytes | None] = {}
    for path, (sha, executable, recorded) in inputs.items():
        fp = fingerprint(path)
        if fp is None or (executable is not None and _executable(fp) != executable):
            return None
        if fp and fp == recorded:
            continue  # settled when recorded, and untouched since
        try:
            content = read(path) if fp else None
        except OSError:
            return None
        if digest(content) != sha:
            return None
        read_again[path] = content
    return read_again


def _file(key: str) -> str:
    return os.path.join(Cache.current().dir("warm"), f"{key}.json")


def request_key(request: Iterable[object]) -> str:
    """The name of the record for one request (a command and what it was asked) made by this
    patchkit (where it is installed) run by this interpreter with this import path: another
    of them may import other code, or other parser libraries."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = repr([VERSION, package, sys.executable, sys.path, *request])
    return hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest()[:32]


def load(key: str) -> dict[str, Any] | None:
    """The record kept for ``key``, or None (none, unreadable, not sealed by this cache, another
    version: the full path runs, and replaces it). A record decides what is written to a tree:
    it is trusted only with the cache's seal (``Cache.seal``)."""
    return read_record(Cache.current(), _file(key))


def read_record(cache: Cache, path: str) -> dict[str, Any] | None:
    """The record in the file at ``path`` of ``cache``'s ``warm`` directory (see ``load``)."""
    try:
        with open(path, "rb") as handle:
            seal, _, payload = handle.read().partition(b"\n")
        if not cache.sealed(payload, seal.decode("ascii")):
            return None
        found = json.loads(payload)
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("version") != VERSION:
        return None
    return found


def store(key: str, record: dict[str, Any]) -> None:
    """Keep ``record``, sealed (atomically; a cache that cannot be written is only slower)."""
    path = _file(key)
    tmp = f"{path}.{os.getpid()}.tmp"
    payload = json.dumps({**record, "version": VERSION}).encode()
    try:
        with open(tmp, "wb") as handle:
            handle.write(Cache.current().seal(payload).encode() + b"\n" + payload)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
