"""A tree patchkit may change: a git checkout, or an installed distribution whose files sit under
site-packages. Patches speak in repository paths; a tree maps them to files on disk and refuses
any path that would leave it (``..``, absolute paths, symlinks pointing outside)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from patchkit.errors import TreeError, UnsafePathError, shown
from patchkit.fileio import OPEN_FLAGS, read_fd
from patchkit.trust.paths import Fence, names_git_dir
from patchkit.workspace.links import LINK, read_target, write_link
from patchkit.workspace.mounts import stat_is_fresh

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # an open that refuses a symlink as its last part
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Tree:
    """Where repository paths live on disk, and where patchkit keeps its state for them: a git
    checkout (an installed distribution is an ``installed.InstalledTree``, the patch repository's
    own files a ``ProjectTree``)."""

    kind: ClassVar[str] = "checkout"  # what messages call it

    root: Path  # the directory repository paths are mapped under
    state_dir: Path
    target: str
    # repository path -> path under root; None: the tree does not hold that path
    mapper: Callable[[str], str | None] = field(default=lambda p: p)
    # git directories this tree's files may never resolve into (a checkout's own and common
    # one: a link in the tree to them would otherwise let a diff plant hooks or config)
    fenced: tuple[str, ...] = ()
    # directory -> its real path: resolved once per tree, not once per file (a series of a
    # thousand diffs asks thousands of times; each resolve is a system call per path part)
    _real: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    # repository path -> its place on disk, checked (``place``): once per tree, not per read
    _places: dict[str, Path] = field(default_factory=dict, init=False, repr=False, compare=False)
    _fenced_root: Fence | None = field(default=None, init=False, repr=False, compare=False)

    def written(self, paths: Sequence[str]) -> None:
        """Called once files were written or restored through the journal (a checkout: nothing
        to do; an installed tree drops stale bytecode)."""

    def real(self, directory: Path) -> Path:
        return Path(self._real_text(str(directory)))

    def _real_text(self, directory: str) -> str:
        found = self._real.get(directory)
        if found is None:
            found = self._real[directory] = os.path.realpath(directory)
        return found

    def disk_path(self, repo_path: str) -> Path:
        """The file on disk for ``repo_path``, refused if it is not this tree's to write or is a
        symlink (looked at now, on every call: a link can be swapped in at any time)."""
        candidate = self.place(repo_path)
        try:
            is_link = candidate.is_symlink()
        except OSError as exc:  # a name too long: no file there can be used
            raise self._unusable(repo_path, exc) from None
        if is_link:
            raise UnsafePathError(
                f"{repo_path}: is a symlink; patchkit does not write through links"
            )
        return candidate

    def place(self, repo_path: str) -> Path:
        """Where ``repo_path`` lives, checked once per tree (mapped, not in ``.git`` or the state,
        not outside the tree through a linked directory; directories resolve once, see ``real``).
        Not whether the file itself is a symlink: callers look at that as they read or write."""
        found = self._places.get(repo_path)
        if found is None:
            if "\0" in repo_path:
                raise UnsafePathError(
                    f"{shown(repo_path)}: holds a NUL byte, which no file name can"
                )
            try:
                found = self._checked(repo_path)
            except OSError as exc:  # a name too long, a loop of links: no file there can be used
                raise self._unusable(repo_path, exc) from None
            self._places[repo_path] = found
        return found

    def _unusable(self, repo_path: str, exc: OSError) -> UnsafePathError:
        return UnsafePathError(
            f"{repo_path[:80]}: cannot be a file in {self.root}: {exc.strerror or exc}"
        )

    def _checked(self, repo_path: str) -> Path:
        mapped = self.mapper(repo_path)
        if mapped is None:
            raise UnsafePathError(f"{repo_path} is not part of the {self.kind} tree at {self.root}")
        if names_git_dir(mapped):
            raise UnsafePathError(f"{repo_path}: is inside .git; patches never touch it")
        return Path(self.fence().place(mapped, shown_as=repo_path))

    def fence(self) -> Fence:
        """The root and what its files never resolve into: its git directories and patchkit's
        state (made once per tree; each directory resolved once)."""
        if self._fenced_root is None:
            self._fenced_root = Fence.of(self.root, (*self.fenced, self.state_dir))
        return self._fenced_root

    def fingerprint(self, repo_path: str) -> tuple[int, ...] | None:
        """What changes whenever the file changes, from one ``lstat``: type and mode, device,
        inode, size, modification and change times (the last two, in ns, last). ``()`` when no
        file is there; None when the path is not a plain file of this tree (a read says why).
        Writers replace files (a new inode) and set the change time; nobody can set it back.
        None on a network file system, whose ``lstat`` may show an old answer (``mounts``)."""
        mapped = self.mapper(repo_path)
        if mapped is None or "\0" in repo_path or not stat_is_fresh(str(self.root)):
            return None
        try:
            st = os.lstat(os.path.join(self.root, mapped))
        except (FileNotFoundError, NotADirectoryError):
            return ()
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def holds(self, repo_path: str) -> bool:
        return self.mapper(repo_path) is not None

    def read(self, repo_path: str) -> bytes | None:
        """The file's bytes (None: no file there); a symlink's target, as git keeps it (read,
        never followed; one that leads out of the tree is refused: ``links``)."""
        if not _NOFOLLOW:  # pragma: no cover (no O_NOFOLLOW: look first)
            self.disk_path(repo_path)
        path = self.place(repo_path)
        try:
            fd = os.open(path, OPEN_FLAGS | _NOFOLLOW)  # (a FIFO never makes it wait)
        except (FileNotFoundError, NotADirectoryError):
            return None  # (a parent that is a file: nothing lives here; writing it is refused)
        except OSError as exc:
            if os.path.islink(path):  # (ELOOP: the open refused to follow it)
                return self.link_target(repo_path)
            self.disk_path(repo_path)  # a name too long: refused as unsafe
            raise TreeError(f"{path}: cannot be read: {exc.strerror or exc}") from None
        try:
            return read_fd(fd)
        except IsADirectoryError:
            raise TreeError(f"{path} is a directory; a patch expects a file there") from None
        except OSError as exc:
            raise TreeError(f"{path}: cannot be read: {exc.strerror or exc}") from None

    def link_target(self, repo_path: str) -> bytes:
        """The target of the symlink at ``repo_path`` (its content, as git keeps it), refused
        when it is one patchkit would not write (``links``)."""
        try:
            return read_target(self.fence(), str(self.place(repo_path)), repo_path)
        except OSError as exc:  # no longer a link (swapped meanwhile), or unreadable
            raise TreeError(f"{repo_path}: cannot be read: {exc.strerror or exc}") from None

    def files_under(self, directory: str) -> list[str]:
        """Repository paths of the regular files under ``directory`` ("" for the whole tree),
        assuming the tree maps a directory's files beside it (checkouts, installed packages).
        Nothing inside ``.git`` or patchkit's state; symlinks are not followed."""
        mapped = self.mapper(directory) if directory else ""
        if mapped is None:
            return []
        base = self.root / mapped
        state = self.state_dir.resolve()
        found = []
        for dirpath, dirnames, filenames in os.walk(base):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d for d in dirnames if d != ".git" and (here / d).resolve() != state
            )
            rel = here.relative_to(base).as_posix()
            prefix = "/".join(p for p in (directory, "" if rel == "." else rel) if p)
            found += [f"{prefix}/{f}" if prefix else f for f in sorted(filenames)]
        return [p for p in found if self.holds(p)]

    def mode(self, repo_path: str) -> int | None:
        path = self.place(repo_path)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            st = self.disk_path(repo_path).stat()  # refuses what cannot be a file, or says why
        if stat.S_ISLNK(st.st_mode):
            self.link_target(repo_path)  # refused when it leads out of the tree
            return LINK
        return 0o100755 if st.st_mode & stat.S_IXUSR else 0o100644


@dataclass
class ProjectTree(Tree):
    """The patch repository's own files, as a tree written through the journal."""

    kind: ClassVar[str] = "project"


def checkout_tree(path: Path, target: str) -> Tree:
    """A git checkout; state lives in its git directory, so it never dirties the tree."""
    if not path.is_dir():
        raise TreeError(
            f"{path} is not a directory", hint="pass --checkout DIR of a target checkout"
        )
    from patchkit.gitrepo import git_dirs, locate_checkout  # (git's: not for a warm run's tree)

    found = locate_checkout(path)
    if found is None:
        raise TreeError(
            f"{path} is not a git checkout",
            hint="use `patchkit fetch` for a checkout, or --installed for an installed package",
        )
    top, git_dir = found
    fenced = tuple(str(d) for d in git_dirs(git_dir))
    return Tree(root=top, state_dir=git_dir / "patchkit", target=target, fenced=fenced)


def write_file(path: Path, content: bytes, mode: int | None) -> None:
    """Write atomically: a sibling temporary file, then rename over the target. ``mode`` None
    keeps the mode of the file replaced (a new file gets the default the umask leaves); mode
    120000 makes a symlink to ``content`` (its target: callers check it, ``links``)."""
    if mode == LINK:
        write_link(path, content)
        return
    tmp = os.path.join(os.path.dirname(path), f".{path.name}.patchkit-tmp")
    fd = _create(tmp, path)
    try:
        with open(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(fd, 0o755 if mode & 0o111 else 0o644)
            else:
                _keep_mode(fd, path)
            handle.write(content)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create(tmp: str, path: Path) -> int:
    """A new, empty temporary file, never one a link points at (a stale one is replaced); its
    directory is made when missing."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # left by an interrupted write (or put there): never written through
        os.unlink(tmp)
    return os.open(tmp, flags, 0o666)


def _keep_mode(fd: int, path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):  # a new file: the default mode
        os.fchmod(fd, stat.S_IMODE(os.stat(path).st_mode))


def remove_file(path: Path, root: Path) -> None:
    """Remove a file, and the directories it leaves empty, up to (not including) ``root``."""
    path.unlink(missing_ok=True)
    parent = path.parent
    while parent != root and root in parent.parents and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent
