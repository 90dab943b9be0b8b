"""Where a checkout is: the work tree and git directory holding a path.

The plain case (a ``.git`` directory, or a ``gitdir:`` file of a linked worktree) is read from
the file system as git reads it, with no git process; anything unusual is asked of git.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from pathlib import Path

from patchkit.errors import GitError
from patchkit.gitrepo.command import clean_env, run


def locate_checkout(path: Path) -> tuple[Path, Path] | None:
    """(top of the work tree, git directory) of the checkout holding ``path``; None when
    ``path`` is in no work tree (or git is missing). An ordinary checkout or linked worktree is
    found by reading ``.git`` as git does; anything unusual is left to git itself."""
    found = _read_checkout(path)
    return found if found is not None else _ask_git_for_checkout(path)


def _ask_git_for_checkout(path: Path) -> tuple[Path, Path] | None:
    try:
        proc = run(
            ["rev-parse", "--show-toplevel", "--absolute-git-dir"], cwd=path, ok_codes=(0, 128)
        )
    except GitError:
        return None
    lines = proc.stdout.decode(errors="surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        return None
    return Path(lines[0]), Path(lines[1]).resolve()


def _read_checkout(path: Path) -> tuple[Path, Path] | None:
    """Git's discovery without a git process, for the plain case: walking up from ``path`` to
    the first ``.git`` (a directory, or a ``gitdir:`` file), on one file system, owned by us,
    not configured with another work tree, not bare. None: not the plain case (ask git)."""
    try:
        here = path.resolve(strict=True)
        device = os.stat(here).st_dev
    except OSError:
        return None
    if ".git" in here.parts:
        return None
    for top in (here, *here.parents):
        try:
            top_stat = os.stat(top)
        except OSError:
            return None
        try:
            dot_git: os.stat_result | None = os.lstat(top / ".git")
        except FileNotFoundError:
            dot_git = None
        except OSError:
            return None
        if top_stat.st_dev != device:
            return None  # git stops at a file system boundary; let it say so
        if dot_git is None:
            continue
        try:
            git_dir = _git_dir_of(top, dot_git)
        except OSError:
            return None
        if git_dir is None or top_stat.st_uid != os.geteuid():
            return None
        return top, git_dir
    return None


def _git_dir_of(top: Path, dot_git: os.stat_result) -> Path | None:
    """The git directory ``top/.git`` names, when it is a plain one."""
    if stat.S_ISDIR(dot_git.st_mode):
        git_dir = top / ".git"
    elif stat.S_ISREG(dot_git.st_mode):
        text = (top / ".git").read_bytes().decode(errors="replace")
        if not text.startswith("gitdir: "):
            return None
        git_dir = (top / text[len("gitdir: ") :].strip()).resolve()
    else:
        return None
    configs = [git_dir / "config"]
    with contextlib.suppress(OSError):
        common = (git_dir / "commondir").read_text().strip()
        configs.append((git_dir / common / "config").resolve())
    if not (git_dir / "HEAD").is_file():
        return None
    for config in configs:
        with contextlib.suppress(FileNotFoundError):  # a linked worktree may have none
            if _configured_elsewhere(config.read_bytes()):
                return None
    if os.stat(git_dir).st_uid != os.geteuid():
        return None  # git refuses a repository another user owns ("dubious ownership")
    return git_dir.resolve()


_PLAIN_BARE = (b"false", b"no", b"off", b"0")


def _configured_elsewhere(config: bytes) -> bool:
    """The config names a work tree elsewhere (``core.worktree``), may be bare (``core.bare``
    anything but false), or keeps per-worktree settings (``extensions.worktreeConfig``)."""
    for raw in config.lower().splitlines():
        line = raw.split(b"#")[0].split(b";")[0].replace(b" ", b"").replace(b"\t", b"")
        key, _, value = line.partition(b"=")
        if key in (b"worktree", b"worktreeconfig") or (key == b"bare" and value not in _PLAIN_BARE):
            return True
    return False


def git_dirs(git_dir: Path) -> tuple[Path, ...]:
    """Every git directory a checkout writes through: its own and, for a linked worktree, the
    common one (which holds the config, the hooks and every submodule's under ``modules/``)."""
    found = [git_dir.resolve()]
    with contextlib.suppress(OSError):
        common = (git_dir / "commondir").read_text().strip()
        found.append((git_dir / common).resolve())
    return tuple(dict.fromkeys(found))


def is_repo(path: Path) -> bool:
    """``path`` is in a git repository (a missing directory, or no git, is in none)."""
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=path, env=clean_env(), capture_output=True
        )
    except OSError:
        return False
    return proc.returncode == 0
