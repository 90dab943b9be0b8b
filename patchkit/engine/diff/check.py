"""What a diff may ask for before anything is placed: only regular files with modes patchkit
writes."""

from __future__ import annotations

from pathlib import Path

from patchkit.errors import UnsupportedChange

_WRITABLE = (0o100644, 0o100755)
_KINDS = {0o120000: "a symbolic link", 0o160000: "a submodule (gitlink)", 0o040000: "a directory"}


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
