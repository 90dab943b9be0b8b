"""What a command depended on, kept so that a later run can tell, without redoing the work, that
nothing it depended on changed: the warm path of ``apply`` and ``status`` (``ops/warm.py``).

An input is a file or a directory (or the absence of one), kept as the sha256 of its bytes (of
a directory: its entries, each name with its type), whether it is executable, and its
fingerprint (one ``lstat``: type and mode, device, inode, size, modification and change times).
A later check takes the fingerprint again: the same one means the same bytes; another one (a
file written back with the same bytes, as ``reset`` does) is read and compared by digest. A
fingerprint is trusted only on a local file system (``mounts``), and only one taken when the
file had not changed for two seconds: a file changed during the run, or so shortly before it
that its times may not tell the next change apart (git's "racily clean" rule), makes no record
at all, or (one whose bytes the run handed over) is read again by every check.

A record is kept in the cache's ``warm`` directory, sealed with the cache's key
(``cacheroot``), in a format of its own: a line of section lengths, then the sections, each a
list of strings joined by NUL (no path holds one). Reading it back is a few splits, and this
module imports only the standard library's ``os``, ``stat``, ``sys`` and ``hashlib``: a warm run
must cost little more than the interpreter's start.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys

from patchkit import cacheroot

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

VERSION = 4  # 4: a format of its own (no JSON), the journal and the directories to write in
SETTLED_NS = 2_000_000_000  # a file unchanged this long before a run is not racy
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_MAGIC = b"patchkit-replay"
# One input is four strings: its path (a directory's ends in "/"), the sha256 of its bytes
# ("": nothing there), whether it is executable ("1", "0"; "": not compared) and its fingerprint
# (numbers joined by spaces; "": none trusted, read it).
INPUT = 4
# One write is six: the repository path, its place on disk, the sha256 of the bytes written
# ("": the file is removed), the mode ("": the file's own), and where the bytes lie in the pack.
WRITE = 6


class Record:
    """One recorded run: where it ran, what it depended on, what it wrote and printed."""

    __slots__ = (
        "command", "dirs", "fenced", "inputs", "journal", "pack", "project", "root", "saved",
        "state", "state_dir", "stderr", "stdout", "target", "writes",
    )  # fmt: skip
    _META = ("command", "root", "state_dir", "target", "project", "state", "pack")
    _LISTS = ("fenced", "inputs", "writes", "dirs", "journal", "saved")

    def __init__(self, command: str, **fields: object) -> None:
        self.command = command
        self.root = self.state_dir = self.target = self.project = ""
        self.state = self.pack = self.stdout = self.stderr = ""  # state, pack: store objects
        self.fenced: list[str] = []  # git directories the tree's files may never resolve into
        self.inputs: list[str] = []  # INPUT strings each
        self.writes: list[str] = []  # WRITE strings each
        self.dirs: list[str] = []  # where files are written: real directories, or made
        self.journal: list[str] = []  # the journal's text before and after its process id
        self.saved: list[str] = []  # the originals the journal names (store objects)
        for name, value in fields.items():
            setattr(self, name, value)

    def encode(self) -> bytes:
        meta = [getattr(self, name) for name in self._META]
        parts = [meta, *(getattr(self, name) for name in self._LISTS)]
        sections = [_text("\0".join(part)) for part in parts]
        sections += [_text(self.stdout), _text(self.stderr)]
        lengths = " ".join(str(len(s)) for s in sections).encode()
        return b"%s %d %s\n" % (_MAGIC, VERSION, lengths) + b"".join(sections)

    @classmethod
    def decode(cls, payload: bytes) -> Record | None:
        """The record ``encode`` made, or None (another version, or not one)."""
        head, _, body = payload.partition(b"\n")
        magic, version, *lengths = head.split(b" ")
        if magic != _MAGIC or version != b"%d" % VERSION or len(lengths) != 9:
            return None
        sections, at = [], 0
        for length in map(int, lengths):
            sections.append(body[at : at + length].decode("utf-8", "surrogateescape"))
            at += length
        meta, *lists, stdout, stderr = sections
        fields = dict(zip(cls._META, meta.split("\0"), strict=True))
        record = cls(**fields, stdout=stdout, stderr=stderr)
        for name, text in zip(cls._LISTS, lists, strict=True):
            setattr(record, name, text.split("\0") if text else [])
        whole = len(record.inputs) % INPUT == 0 and len(record.writes) % WRITE == 0
        return record if whole and len(record.journal) in (0, 2) else None


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


def digest(content: bytes | None) -> str:
    return "" if content is None else hashlib.sha256(content).hexdigest()


def _print(st: os.stat_result) -> str:
    return f"{st.st_mode} {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _lstat(path: str) -> os.stat_result | None:
    """The ``lstat`` of a plain file, or of a directory for a path ending in "/"; None when
    nothing is there; ValueError for anything else (a link: never an input a record can
    stand on)."""
    directory = path.endswith("/")
    try:
        st = os.lstat(path[:-1] if directory else path)  # (a trailing "/" would follow a link)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not (stat.S_ISDIR if directory else stat.S_ISREG)(st.st_mode):
        raise ValueError(path)
    return st


def _executable(st: os.stat_result | None) -> str:
    return "" if st is None or stat.S_ISDIR(st.st_mode) else "01"[bool(st.st_mode & stat.S_IXUSR)]


def read(path: str) -> bytes | None:
    """The file's bytes, or a directory's entries (None: nothing there); a link is refused by
    the open itself (OSError)."""
    if path.endswith("/"):
        try:
            return listing(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:  # (system calls, not a buffered file object: a thousand files are read per replay)
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) == size:
            return data  # all of it, in one read
        chunks = [data]  # it grew or shrank since, or is over one read
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


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


def snapshot(
    paths: Iterable[str],
    since_ns: int,
    known: Mapping[str, tuple[bytes | None, int | None]],
    fresh: Callable[[str], bool],
) -> list[str] | None:
    """The inputs of a run that started at ``since_ns``: ``known``, the files the run read
    (their bytes and modes as it read them), and ``paths``, files it depended on without
    handing over their bytes, read now. A file that changed in the two seconds before the run
    or since keeps no fingerprint when its bytes are known (it is read again by every check),
    and makes no record at all when they are not (the bytes now may not be what the run saw).
    ``fresh``: whether a path's ``lstat`` shows a change at once (a local file system; asked
    once per device)."""
    inputs: list[str] = []
    seen: set[str] = set()
    local: dict[int, bool] = {}  # device -> fresh (one file system each: asked once)
    for path in [*known, *paths]:
        if path in seen:
            continue
        seen.add(path)
        try:
            st = _lstat(path)
        except ValueError:
            return None
        settled = st is None or max(st.st_mtime_ns, st.st_ctime_ns) < since_ns - SETTLED_NS
        if path in known:
            content, mode = known[path]
            executable = "" if mode is None else "01"[bool(mode & 0o100)]
        elif not settled:
            return None
        else:
            content, executable = (read(path) if st else None), _executable(st)
            if _changed(path, st):
                return None  # (while read)
        if st is not None and st.st_dev not in local:
            local[st.st_dev] = fresh(path)
        trusted = _print(st) if settled and st and local[st.st_dev] else ""
        inputs += [path, digest(content), executable, trusted]
    return inputs


def _changed(path: str, before: os.stat_result | None) -> bool:
    """Whether ``path`` is no longer as ``before`` found it."""
    try:
        now = _lstat(path)
    except ValueError:
        return True
    return (now and _print(now)) != (before and _print(before))


def unchanged(inputs: list[str]) -> dict[str, bytes | None] | None:
    """The bytes of the inputs that had to be read again, when every input is as recorded;
    None as soon as one is not."""
    read_again: dict[str, bytes | None] = {}
    rows = iter(inputs)
    for path, sha, executable, recorded in zip(rows, rows, rows, rows, strict=True):
        try:
            st = _lstat(path)
        except ValueError:
            return None
        if executable and _executable(st) != executable:
            return None
        if st is not None and recorded and _print(st) == recorded:
            continue  # settled when recorded, and untouched since
        try:
            content = read(path) if st else None
        except OSError:
            return None
        if digest(content) != sha:
            return None
        read_again[path] = content
    return read_again


def request_key(request: Iterable[object]) -> str:
    """The name of the record for one request (a command and what it was asked) made by this
    patchkit (where it is installed) run by this interpreter with this import path: another
    of them may import other code, or other parser libraries."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = repr([VERSION, package, sys.executable, sys.path, *request])
    return hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest()[:32]


def warm_dir() -> str | None:
    """The cache's ``warm`` directory, checked as ``Cache.dir`` checks it; None when the cache
    or the directory is not there yet (nothing was recorded)."""
    top = cacheroot.root()
    place = os.path.join(top, "warm")
    if not os.path.isdir(place):
        return None
    cacheroot.trusted(top, top)
    cacheroot.trusted(place, top)
    return place


def load(key: str) -> Record | None:
    """The record kept for ``key``, or None (none, unreadable, not sealed by this cache, another
    version: the full path runs, and replaces it). A record decides what is written to a tree:
    it is trusted only with the cache's seal."""
    place = warm_dir()
    if place is None:
        return None
    top = os.path.dirname(place)
    key_file = cacheroot.read_key(os.path.join(top, cacheroot.KEY))
    return None if key_file is None else read_record(key_file, os.path.join(place, key))


def read_record(key: bytes, path: str) -> Record | None:
    """The record in the file at ``path``, sealed under ``key`` (see ``load``)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO planted as the record: no wait
                return None
            seal, _, payload = handle.read().partition(b"\n")
        if not cacheroot.sealed(key, payload, seal):
            return None
        return Record.decode(payload)
    except (OSError, ValueError):
        return None


def store(place: str, key: bytes, name: str, record: Record) -> None:
    """Keep ``record`` as ``name`` in the directory ``place``, sealed under ``key``
    (atomically; a cache that cannot be written is only slower)."""
    path = os.path.join(place, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    payload = record.encode()
    try:
        with open(tmp, "wb") as handle:
            handle.write(cacheroot.seal(key, payload).encode() + b"\n" + payload)
        os.replace(tmp, path)
    except OSError:
        try:  # noqa: SIM105 (no contextlib: a warm run does without it)
            os.unlink(tmp)
        except OSError:
            pass
