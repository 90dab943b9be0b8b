"""Paths on behalf of input: a relative path resolved under a root, symlinks included, that
must stay inside the root and out of every git directory the root has.

:func:`inside` is the string test every check shares; :func:`under` is the one gate for a
path named by input (a patch, a series file, a cache key); :class:`Fence` is a root with the
directories that are never written (its git directories, patchkit's state), resolved once so a
command checks many paths for the cost of one ``realpath`` per directory."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from patchkit.errors import PatchkitError, UnsafePathError, shown


def inside(path: str, directory: str) -> bool:
    """``path`` lies strictly under ``directory`` (both absolute and resolved), compared as
    strings."""
    return path.startswith(directory if directory.endswith(os.sep) else directory + os.sep)


def at_or_inside(path: str, directory: str) -> bool:
    return path == directory or inside(path, directory)


def names_git_dir(relative: str) -> bool:
    """A part of ``relative`` is ``.git`` (any case: case-insensitive file systems)."""
    lowered = relative.lower()
    if ".git" not in lowered:  # the common case, without splitting
        return False
    return any(part == ".git" for part in lowered.replace(os.sep, "/").split("/"))


def relative_problem(raw: str) -> str | None:
    """Why ``raw`` cannot name a place under a root as written: NUL, absolute, ``..``, or a
    ``.`` or empty part (a name file systems give no file)."""
    if "\0" in raw:
        return "it holds a NUL byte"
    if raw.startswith("/"):
        return "it is absolute"
    parts = raw.split("/")
    if ".." in parts:
        return "it leaves its directory (`..`)"
    if not raw or parts[-1] in ("", "."):
        return "it names no file (empty, or ending in `/` or `.`)"
    return None


@dataclass(frozen=True)
class Fence:
    """A root directory (resolved) and the directories under or beside it that are never
    entered: its git directories (the checkout's, the common one of linked worktrees, the
    modules of submodules) and patchkit's state."""

    root: str
    fenced: tuple[str, ...] = ()
    _real: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, root: Path | str, fenced: Iterable[Path | str] = ()) -> Fence:
        return cls(os.path.realpath(root), tuple(os.path.realpath(f) for f in fenced))

    def real_dir(self, directory: str) -> str:
        """``realpath`` of a directory, once per fence."""
        found = self._real.get(directory)
        if found is None:
            found = self._real[directory] = os.path.realpath(directory)
        return found

    def problem(self, resolved: str) -> str | None:
        """Why the resolved absolute path ``resolved`` is not the root's to touch."""
        if not inside(resolved, self.root):
            return f"it resolves to {resolved}, outside {self.root} (through a symlink)"
        if names_git_dir(resolved[len(self.root) :]):
            return f"it resolves to {resolved}, inside a git directory (through a symlink)"
        for fenced in self.fenced:
            if at_or_inside(resolved, fenced):
                return (
                    f"it resolves to {resolved}, inside {fenced} (a git directory or patchkit's "
                    "state), which patchkit never writes"
                )
        return None

    def place(self, relative: str, *, shown_as: str | None = None) -> str:
        """``relative`` under the root with every directory resolved (the last part is not
        followed: callers open it without following links); UnsafePathError names why not
        (naming the path as ``shown_as``, when the caller knows it by another name)."""
        problem = relative_problem(relative)
        if problem is None:
            joined = os.path.join(self.root, relative)
            if (
                "/." in joined or "//" in joined
            ):  # no ``..`` is left: folding ``.``, ``//`` is exact
                joined = os.path.normpath(joined)
            parent, name = os.path.split(joined)
            resolved = os.path.join(self.real_dir(parent), name)
            problem = self.problem(resolved)
            if problem is None:
                return resolved
        hint = None
        if problem is not None and "(through a symlink)" in problem:  # the tree, not the patch
            hint = (
                f"nothing was written; a symbolic link in the tree at {self.root} leads there: "
                "remove it or restore what upstream has (`git checkout -- PATH`), then run again"
            )
        raise UnsafePathError(f"{shown(shown_as or relative)}: refused: {problem}", hint=hint)


def under(
    root: Path,
    relative: str,
    *,
    what: str,
    fenced: Iterable[Path | str] = (),
    error: type[PatchkitError] = UnsafePathError,
    follow: bool = True,
    hint: str | None = None,
) -> Path:
    """``root/relative`` resolved (every symlink followed, the last one too unless ``follow``
    is False), refused with ``error`` naming ``what`` (the file and key it came from) when it
    is absolute, leaves ``root``, or lands in a git directory or one of ``fenced``."""
    fence = Fence.of(root, fenced)
    problem = relative_problem(relative)
    if problem is None:
        joined = os.path.normpath(os.path.join(fence.root, relative))  # no `..` is left
        if follow:
            resolved = os.path.realpath(joined)
        else:
            parent, name = os.path.split(joined)
            resolved = os.path.join(os.path.realpath(parent), name)
        problem = fence.problem(resolved)
        if problem is None:
            return Path(resolved)
    raise error(f"{what}: {shown(relative)} is refused: {problem}", hint=hint)
