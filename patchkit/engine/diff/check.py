"""What a diff may ask for before anything is placed: regular files with modes patchkit writes,
and symbolic links whose target the policy of :mod:`patchkit.workspace.links` allows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from patchkit.errors import UnsafePathError, UnsupportedChange
from patchkit.workspace.links import HINT, LINK, shown_target, target_problem

_WRITABLE = (0o100644, 0o100755, LINK)
_KINDS = {0o160000: "a submodule (gitlink)", 0o040000: "a directory"}
_WRITES = "patchkit writes regular files with mode 100644 or 100755 and symbolic links (120000)"


def _refuse(path: str, source: Path, mode: int) -> None:
    kind = _KINDS.get(mode & 0o170000)
    what = f"makes it {kind}" if kind else f"gives it mode {mode:06o}"
    raise UnsupportedChange(
        f"{source}: refuses the change to {path}: the diff {what}; {_WRITES}",
        hint="make the submodule or special mode in a build step, not in a patch",
    )


def check_modes(path: str, modes: tuple[int | None, int | None], source: Path) -> None:
    """Refuse setuid/setgid or invalid modes and kinds patchkit never writes (gitlinks,
    directories), and a part that turns a link into a file or back: ``modes`` are the file's
    old and new mode in the diff from ``source``."""
    for mode in modes:
        if mode is not None and mode not in _WRITABLE:
            _refuse(path, source, mode)
    old, new = modes
    if old is not None and new is not None and (old == LINK) != (new == LINK):
        kinds = ("a symbolic link", "a regular file")[:: 1 if old == LINK else -1]
        raise UnsupportedChange(
            f"{source}: refuses the change to {path}: the diff turns it from {kinds[0]} into "
            f"{kinds[1]} in one part, which git never writes",
            hint="patchkit does not change a file's type: make that change in a build step",
        )


def check_link(
    path: str,
    new_path: str | None,
    modes: tuple[int | None, int | None],
    hunks: Sequence[tuple[Sequence[bytes], Sequence[bytes]]],
    source: Path,
) -> None:
    """A link's part (``modes``: old and new, one of them 120000) changes its one line, its
    target, and nothing else (``hunks``: each hunk's old and new lines), and the target it
    gives ``new_path`` passes the policy by its text (:func:`patchkit.workspace.links.
    target_problem`); else UnsupportedChange or UnsafePathError naming ``source``, the link
    and the target."""
    if LINK not in modes:
        return
    if len(hunks) > 1 or any(len(side) > 1 for hunk in hunks for side in hunk):
        raise UnsupportedChange(
            f"{source}: refuses the change to the symbolic link {path}: a link's part "
            "changes its one line, its target, and nothing else",
            hint="regenerate the diff with git",
        )
    new = b"".join(hunks[0][1]) if hunks else None
    if new_path is None or new is None:
        return
    problem = target_problem(new_path, new)
    if problem is not None:
        raise UnsafePathError(
            f"{source}: refuses the symbolic link {new_path} -> {shown_target(new)}: {problem}",
            hint=HINT,
        )
