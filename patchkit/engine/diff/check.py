"""What a diff may ask for before anything is placed: every line of it read (none lost to a
mangled hunk header), and only regular files with modes patchkit writes."""

from __future__ import annotations

import re
from pathlib import Path

from patchkit.errors import UnsupportedChange

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_WRITABLE = (0o100644, 0o100755)
_KINDS = {0o120000: "a symbolic link", 0o160000: "a submodule (gitlink)", 0o040000: "a directory"}


def _skip_hunk(lines: list[str], i: int, old: int, new: int) -> int:
    """The index after the hunk body starting at ``i`` (``old``/``new`` lines to read)."""
    while (old > 0 or new > 0) and i < len(lines):
        kind = lines[i][:1]
        if kind != "\\":
            old -= kind != "+"
            new -= kind != "-"
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):
        i += 1
    return i


def stray_lines(text: str) -> list[tuple[int, str, str]]:
    """Lines inside a file's part of the diff that belong to no hunk: (line number, text,
    file). unidiff skips them silently, which loses the changes of a hunk whose header was
    mangled; a diff with any is malformed."""
    lines = text.splitlines()
    stray: list[tuple[int, str, str]] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _HUNK.match(line) if path else None
        if match:
            old, new = (int(g) if g is not None else 1 for g in match.groups())
            i = _skip_hunk(lines, i + 1, old, new)
            continue
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
        elif line.startswith(("diff ", "From ", "-- ")) or line == "--":
            path = None
        elif path and line.strip():
            stray.append((i + 1, line, path))
        i += 1
    return stray


def _refuse(path: str, source: Path, mode: int) -> None:
    kind = _KINDS.get(mode & 0o170000)
    what = f"makes it {kind}" if kind else f"gives it mode {mode:06o}"
    raise UnsupportedChange(
        f"{source}: refuses the change to {path}: the diff {what}; patchkit writes only "
        "regular files with mode 100644 or 100755",
        hint="make the link, submodule or special mode in a build step, not in a patch",
    )


def check_modes(path: str, modes: tuple[int | None, int | None], source: Path) -> None:
    """Refuse setuid/setgid or invalid modes and type changes (links, gitlinks, directories):
    ``modes`` are the file's old and new mode in the diff from ``source``."""
    for mode in modes:
        if mode is not None and mode not in _WRITABLE:
            _refuse(path, source, mode)
