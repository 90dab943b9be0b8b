"""The header of one file's part of a diff, as the parser reads it: the paths a name gives
(quoted, ``a/``/``b/``, ``/dev/null``) and git's extended header lines (modes, new or deleted
file, rename, index with its blobs, binary); a copy is refused here, since patchkit applies
none (it would otherwise be read as a rename, and the copied-from file lost)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.diff.paths import ENCODING, unquote
from patchkit.errors import MalformedPatch, UnsupportedChange, shown

_INDEX = re.compile(rb"^index ([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)(?: +(\S+))?\s*$")
_ZERO = re.compile(rb"0+")


@dataclass
class FilePart:
    """One file's header while the part is being read (the parser adds its hunks)."""

    line: int  # where it starts (1-based), for messages
    git: bool = False  # it has a ``diff --git`` header
    header_old: str | None = None  # from "diff --git a/X b/Y"
    header_new: str | None = None
    old: str | None = None  # from ---/+++ or rename/copy lines; "" for /dev/null
    new: str | None = None
    old_mode: int | None = None
    new_mode: int | None = None
    index_mode: int | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    added: bool = False
    deleted: bool = False
    binary: bool = False


def _text(raw: bytes) -> str:
    return raw.decode(*ENCODING)


def name_of(raw: bytes) -> str | None:
    """The path a header names (``""``: ``/dev/null``), unquoted, without ``a/`` or ``b/``."""
    name = unquote(raw.strip())
    if name == b"/dev/null":
        return ""
    if name[:2] in (b"a/", b"b/"):
        name = name[2:]
    return _text(name)


def read_extended(current: FilePart, line: bytes, source: Path, at: int) -> bool:
    """Read one extended header line (line ``at`` of ``source``) into ``current``; False when
    the line is not one."""
    text = line.rstrip(b"\r\n")
    word = text.split(b" ", 2)
    if text.startswith((b"old mode ", b"new mode ")):
        mode = _mode(word[2], current, source, at)
        if word[0] == b"old":
            current.old_mode = mode
        else:
            current.new_mode = mode
    elif text.startswith(b"new file mode "):
        current.added, current.new_mode = True, _mode(text[14:], current, source, at)
    elif text.startswith(b"deleted file mode "):
        current.deleted, current.old_mode = True, _mode(text[18:], current, source, at)
    elif text.startswith((b"copy from ", b"copy to ")):  # (was read as a rename: lost)
        raise UnsupportedChange(
            f"{source}: refuses a copy (line {at}): patchkit applies no copy",
            hint="regenerate the diff without copy detection (`git diff --full-index`, no "
            "-C), so the copy is a new file",
        )
    elif text.startswith(b"rename from "):
        current.old = name_of(word[2])
    elif text.startswith(b"rename to "):
        current.new = name_of(word[2])
    elif text.startswith(b"index "):
        _index(current, text, source, at)
    elif text.startswith(b"Binary files "):
        current.binary = True
    elif not text.startswith((b"similarity index ", b"dissimilarity index ")):
        return False
    return True


def _index(current: FilePart, text: bytes, source: Path, at: int) -> None:
    found = _INDEX.match(text)
    if not found:
        raise MalformedPatch(
            f"{source}: not a valid unified diff: a malformed index line "
            f"{shown(_text(text))} (line {at})",
            hint="regenerate the diff (`git diff --full-index`, or `patchkit record`)",
        )
    old, new = found.group(1), found.group(2)
    current.old_blob = None if _ZERO.fullmatch(old) else _text(old).lower()
    current.new_blob = None if _ZERO.fullmatch(new) else _text(new).lower()
    if found.group(3):
        current.index_mode = _mode(found.group(3), current, source, at)


def _mode(raw: bytes, current: FilePart, source: Path, at: int) -> int:
    """An octal mode; which modes patchkit writes is ``check.check_modes``' to say."""
    text = _text(raw.strip())
    if not re.fullmatch(r"[0-7]{1,7}", text):
        path = current.header_new or current.header_old or "a file"
        raise UnsupportedChange(
            f"{source}: refuses the change to {path}: the diff gives it mode "
            f"{shown(text[:20])} (line {at}), which is no file mode; patchkit writes only "
            "regular files with mode 100644 or 100755",
            hint="regenerate the diff with git",
        )
    return int(text, 8)
