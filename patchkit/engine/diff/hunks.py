"""A hunk's body lines: counted against its header, then read into old, new, added and ops.

Lines are bytes with their own endings. An empty line (or a bare ``\\r\\n``) is context, as
some editors write it; a ``\\ No newline at end of file`` marker takes the break off the line
before it.
"""

from __future__ import annotations

Lines = tuple[bytes, ...]
Ops = tuple[tuple[str, bytes], ...]  # every line in order: (" " | "-" | "+", text)
_KINDS = {32: " ", 45: "-", 43: "+"}


def scan(lines: list[bytes], i: int, old_count: int, new_count: int) -> tuple[int, int, int, bool]:
    """Where the hunk's body starting at ``lines[i]`` ends, its old and new line counts, and
    whether it carries a ``\\ No newline`` marker; lines are counted by their first byte alone."""
    end = len(lines)
    old = new = 0
    marked = False
    while (old < old_count or new < new_count) and i < end:
        first = lines[i][0]
        if first == 32 or first == 10 or (first == 13 and lines[i] == b"\r\n"):
            old, new = old + 1, new + 1
        elif first == 45:
            old += 1
        elif first == 43:
            new += 1
        elif first == 92:
            marked = True
        else:
            break
        i += 1
    while i < end and lines[i][0] == 92:
        marked, i = True, i + 1
    return i, old, new, marked


def read_body(body: list[bytes], marked: bool) -> tuple[Lines, Lines, Lines, Ops]:
    """The body's old side, new side, added lines and ops."""
    if marked:
        return _slow_body(body)
    # the common case, in three comprehensions (an empty line is bare context)
    old = tuple(x if x[0] in (10, 13) else x[1:] for x in body if x[0] != 43)
    new = tuple(x if x[0] in (10, 13) else x[1:] for x in body if x[0] != 45)
    added = tuple(x[1:] for x in body if x[0] == 43)
    ops = tuple((" ", x) if x[0] in (10, 13) else (_KINDS[x[0]], x[1:]) for x in body)
    return old, new, added, ops


def _slow_body(body: list[bytes]) -> tuple[Lines, Lines, Lines, Ops]:
    old: list[bytes] = []
    new: list[bytes] = []
    added: list[bytes] = []
    ops: list[tuple[str, bytes]] = []
    last = b""
    for line in body:
        kind = line[:1]
        if kind == b"\\":
            _no_newline(last, old, new, added)
            if ops and last:
                ops[-1] = (ops[-1][0], ops[-1][1].rstrip(b"\n"))
            continue
        value = line if kind in (b"\n", b"\r") else line[1:]
        ops.append((" " if kind in (b"\n", b"\r") else kind.decode(), value))
        if kind != b"+":
            old.append(value)
        if kind != b"-":
            new.append(value)
        if kind == b"+":
            added.append(value)
        last = b" " if kind in (b"\n", b"\r") else kind
    return tuple(old), tuple(new), tuple(added), tuple(ops)


def _no_newline(last: bytes, old: list[bytes], new: list[bytes], added: list[bytes]) -> None:
    """``\\ No newline at end of file``: the line before it has no line break."""
    for seq in {b"-": (old,), b"+": (new, added), b" ": (old, new)}.get(last, ()):
        if seq:
            seq[-1] = seq[-1].rstrip(b"\n")
