"""What a write may replace, checked for every file of a write before any is touched (``txn``):
a file is never written under a file, nor under a symbolic link (the tree's, or one the same
write makes: nothing is written through a link), a regular file never where a link is, and a
link only over nothing or a link, pointing inside the tree (the policy is ``links``'). Only a
write marked ``retype`` (reset's, over what a person put aside) replaces a link by a file or a
file by a link: the link itself is replaced, never written through."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence

from patchkit.errors import TreeError, UnsafePathError, shown
from patchkit.workspace.journal import Write
from patchkit.workspace.links import LINK, check_target, shown_target
from patchkit.workspace.tree import Tree


def check_places(tree: Tree, writes: Sequence[Write]) -> None:
    """Refuse, before anything is written, a write that cannot be made or would go through a
    link (TreeError or UnsafePathError naming the file, and the link with its target)."""
    links = {w.path for w in writes if w.content is not None and w.mode == LINK}
    plain: set[str] = set()  # directories found to be no link
    for w in writes:
        tree.place(w.path)  # mapped, not in .git, not out of the tree: or refused here
        _no_link_above(tree, w.path, links, plain)
    _no_file_above(tree, writes)
    for w in writes:
        if w.content is not None:
            _replaceable(tree, w)


def _no_file_above(tree: Tree, writes: Sequence[Write]) -> None:
    """Refuse a file whose directory would have to be a file."""
    targets = {w.path: str(tree.place(w.path)) for w in writes if w.content is not None}
    created = set(targets.values())
    root = str(tree.real(tree.root))
    checked: set[str] = set()  # directories looked at, and so every one above them
    for path, target in targets.items():
        parent = os.path.dirname(target)
        while parent not in checked and parent.startswith(root + os.sep):
            checked.add(parent)
            if parent in created or _not_a_directory(parent):
                raise TreeError(
                    f"{path}: cannot be written in {tree.root}, because "
                    f"{os.path.relpath(parent, root)} is a file",
                    hint="the patch adds a file under the path of an existing file; fix the patch",
                )
            parent = os.path.dirname(parent)


def _not_a_directory(path: str) -> bool:
    """Something that is not a directory is there (a missing one is made when written)."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return False
        raise


def _no_link_above(tree: Tree, path: str, links: set[str], plain: set[str]) -> None:
    """Refuse a write under a directory that is a link (in the tree, or one of ``links``, the
    links the same write makes); ``plain``: directories already found to be none."""
    mapped = tree.mapper(path) or path
    root = str(tree.real(tree.root))
    parts = mapped.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        above = "/".join(parts[:depth])
        place = os.path.join(root, above)
        if above in plain:
            continue
        if above in links or os.path.islink(place):
            target = shown(os.readlink(place)) if os.path.islink(place) else "what it makes"
            raise UnsafePathError(
                f"{path}: refused: {above} is a symbolic link (to {target}); patchkit never "
                "writes through a link",
                hint="nothing was written; patch the file at the path the link leads to",
            )
        plain.add(above)


def _replaceable(tree: Tree, write: Write) -> None:
    """A link replaces nothing or a link, and points inside the tree; a file never replaces a
    link (its content would be written where the link is, which git never does either)."""
    place = tree.place(write.path)
    try:
        st = os.lstat(place)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    kind = None if st is None else stat.S_IFMT(st.st_mode)
    if write.mode == LINK:
        if kind not in (None, stat.S_IFLNK) and not (write.retype and kind == stat.S_IFREG):
            what = "a directory" if kind == stat.S_IFDIR else "a regular file"
            raise TreeError(
                f"{write.path}: refused: it would become a symbolic link to "
                f"{shown_target(write.content or b'')}, but it is {what} in {tree.root}; "
                "patchkit does not change a file's type",
                hint="nothing was written; remove it first, or make the link in a build step",
            )
        check_target(tree.fence(), tree.mapper(write.path) or write.path, write.content or b"")
    elif kind == stat.S_IFLNK and not write.retype:  # (retype: the link itself is replaced)
        raise UnsafePathError(
            f"{write.path}: refused: it is a symlink (to {shown(os.readlink(place))}); patchkit "
            "does not write through links",
            hint="nothing was written; patch the file the link leads to, not the link",
        )
