"""Symbolic links in a tree: the one policy for a link a patch creates, retargets or deletes,
and for reading one the tree holds.

A link is what git keeps of it: its target is its content (the bytes, no newline at the end)
and its mode is 120000. patchkit writes a link only when its target

- is a relative path: no NUL, no newline or carriage return, at most 4095 bytes and 255 in one
  name (what file systems take);
- climbs with ``..`` only at its start (``../../lib/x``), so where it leads never depends on a
  link met on the way (after a link, ``..`` is the parent of where that link leads);
- resolved from the link's directory, lands strictly inside the root and in no ``.git``
  directory (checked on the text alone, when the diff is read: :func:`target_problem`);
- resolved on disk as far as it exists, every link on the way followed, stays inside the root
  and out of its git directories and patchkit's state (checked before anything is written:
  :func:`check_target`).

And a file's content is never written through a link: no directory above a file or link a
write changes may be a link (``git apply`` refuses "beyond a symbolic link" too), a regular file
is never written where a link is, and a link never replaces a directory or a regular file (a
type change is refused). A link the tree holds is read with ``readlink``, never followed, so
reading a tree with links (status, verify, rebase) never leaves the root through one; a link the
policy would not write is refused when read (UnsafePathError), as every link was before.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from pathlib import Path

from patchkit.errors import UnsafePathError, shown
from patchkit.trust.paths import Fence, names_git_dir

LINK = 0o120000  # git's mode of a symbolic link
TARGET_MAX = 4095  # bytes a link's target may hold (PATH_MAX less its NUL)
NAME_MAX = 255
_ENCODING = ("utf-8", "surrogateescape")
HINT = (
    "nothing was written; a link a patch makes must point, by a relative path, at a place "
    "inside the tree (`../x` climbs only at the start); fix the link in the patch"
)


def target_problem(link: str, target: bytes) -> str | None:
    """Why the link at ``link`` (a path under the root) may not point at ``target``, from the
    text alone; None when it may."""
    if not target:
        return "its target is empty"
    if len(target) > TARGET_MAX:
        return f"its target is {len(target)} bytes, longer than file systems allow ({TARGET_MAX})"
    for byte, name in ((b"\0", "a NUL byte"), (b"\n", "a newline"), (b"\r", "a carriage return")):
        if byte in target:
            return f"its target holds {name}"
    if target.startswith(b"/"):
        return "its target is an absolute path"
    names = [n for n in target.split(b"/") if n not in (b"", b".")]
    if any(len(n) > NAME_MAX for n in names):
        return f"a name in its target is longer than file systems allow ({NAME_MAX} bytes)"
    climb = next((i for i, n in enumerate(names) if n != b".."), len(names))
    if b".." in names[climb:]:
        return "its target has `..` after a name (where that leads depends on links on the way)"
    return _landing_problem(link, climb, names[climb:])


def _landing_problem(link: str, climb: int, rest: list[bytes]) -> str | None:
    directory = [p for p in posixpath.dirname(link).split("/") if p]
    if climb > len(directory):
        return "its target leads out of the tree (`..` above the root)"
    if not rest:
        return "its target is the root or a directory above the link"
    landing = "/".join([*directory[: len(directory) - climb], *(_text(n) for n in rest)])
    if names_git_dir(landing):
        return "its target is inside .git"
    return None


def shown_target(target: bytes) -> str:
    """A target as a message shows it: quoted, control bytes named, a long one cut."""
    return shown(target[:100]) + (f"... ({len(target)} bytes)" if len(target) > 100 else "")


def _text(raw: bytes) -> str:
    return raw.decode(*_ENCODING)


def check_target(fence: Fence, link: str, target: bytes) -> None:
    """Refuse (UnsafePathError naming the link and its target) a link at ``link`` (its path
    under the fence's root, with no link above it) pointing at ``target``: by the text
    (:func:`target_problem`), then on disk as far as the target exists."""
    problem = _trouble(fence, link, target)
    if problem is not None:
        raise UnsafePathError(
            f"{link}: refused: a symbolic link to {shown_target(target)}: {problem}", hint=HINT
        )


def _trouble(fence: Fence, link: str, target: bytes) -> str | None:
    problem = target_problem(link, target)
    if problem is None:
        joined = os.path.join(fence.root, posixpath.dirname(link), _text(target))
        problem = fence.problem(os.path.realpath(joined))
    return problem


def read_target(fence: Fence, place: str, shown_as: str) -> bytes:
    """The target of the link at ``place`` (a path under the fence's root), read and never
    followed; UnsafePathError when it is one patchkit would not write (it leads out of the
    tree, into a git directory, ...)."""
    target = os.readlink(os.fsencode(place))
    problem = _trouble(fence, os.path.relpath(place, fence.root).replace(os.sep, "/"), target)
    if problem is not None:
        raise UnsafePathError(
            f"{shown_as}: is a symlink to {shown_target(target)}, which patchkit neither "
            f"follows nor writes: {problem}",
            hint="nothing was written; remove the link or restore what upstream has "
            "(`git checkout -- PATH`), then run again",
        )
    return target


def write_link(path: Path, target: bytes) -> None:
    """Make ``path`` a link to ``target`` atomically: a link beside it, renamed over it (over a
    link or nothing: callers checked); its directory is made when missing."""
    tmp = os.path.join(os.path.dirname(path), f".{path.name}.patchkit-tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # left by an interrupted write (or put there): replaced, never followed
    try:
        os.symlink(target, os.fsencode(tmp))
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, os.fsencode(tmp))
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
