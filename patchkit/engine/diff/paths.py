"""Paths as diffs write them: git's C-quoting undone, and the checks every path passes.

A path a patch names is refused (UnsafePathError, naming the patch file) when it is absolute,
leaves the tree (``..``), reaches inside ``.git``, holds a NUL byte or is longer than a file
system allows; :func:`safe_relpath` is the one gate.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from patchkit.errors import UnsafePathError, shown

ENCODING = ("utf-8", "surrogateescape")  # how a diff's bytes become path text and back
NAME_MAX = 255  # bytes in one path component (ext4, xfs, btrfs, apfs)
PATH_MAX = 4095
_ESCAPES = {b"n": 10, b"t": 9, b'"': 34, b"\\": 92, b"a": 7, b"b": 8, b"f": 12, b"r": 13, b"v": 11}


def safe_relpath(raw: str, source: Path) -> str:
    """A repository-relative POSIX path, or UnsafePathError naming the patch file."""
    path = PurePosixPath(raw)
    if "\0" in raw:
        raise UnsafePathError(f"{source}: refuses path {shown(raw)}: it holds a NUL byte")
    if path.is_absolute() or raw.startswith("~") or "\\" in raw:
        raise UnsafePathError(
            f"{source}: refuses absolute path {shown(raw)}; patches use tree paths"
        )
    if any(part in ("..", "") for part in raw.split("/")) or raw in (".", ""):
        raise UnsafePathError(f"{source}: refuses path {shown(raw)}: it leaves the tree")
    if is_git_internal(raw):
        raise UnsafePathError(
            f"{source}: refuses path {shown(raw)}: patches never write inside .git"
        )
    _check_length(raw, source)
    return str(path)


def _check_length(raw: str, source: Path) -> None:
    encoded = raw.encode(*ENCODING)
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > NAME_MAX:
        raise UnsafePathError(
            f"{source}: refuses path {shown(raw[:60])}...: one of its names is {longest} bytes, "
            f"longer than file systems allow ({NAME_MAX})"
        )
    if len(encoded) > PATH_MAX:
        raise UnsafePathError(
            f"{source}: refuses path {shown(raw[:60])}...: it is {len(encoded)} bytes, longer than "
            f"file systems allow ({PATH_MAX})"
        )


def is_git_internal(path: str) -> bool:
    """Inside a ``.git`` directory (hooks, config): never a patch's business."""
    return any(part.lower() == ".git" for part in path.split("/"))


def unquote(raw: bytes) -> bytes:
    """A path as git writes it: C-quoted ("a/x\\tb", octal escapes) when it has odd bytes."""
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2):
        return raw
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i : i + 1]
        if ch != b"\\":
            out += ch
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(rb"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out += ch
            i += 1
    return bytes(out)
