"""The cache's root, the check that it is ours alone, and its sealing key (see ``cache.py``,
whose :class:`~patchkit.cache.Cache` owns the layout under the root).

Apart because a replayed ``apply`` or ``status`` (``ops/warm.py``) reads one sealed record from
the cache and must cost little more than the interpreter's start: this module imports only the
standard library's ``os``, ``stat``, ``sys``, ``hashlib`` and ``hmac``, and paths are strings.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import sys

from patchkit.errors import CacheUntrusted, ConfigError

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from os import PathLike

    Place = str | PathLike[str]

MODE = 0o755  # directories patchkit makes: never group- or other-writable, whatever the umask
KEY = "key"  # the cache's sealing key: 32 random bytes, mode 0600
_KEY_BYTES = 32


def root() -> str:
    """The cache ``PATCHKIT_CACHE`` names, else the user's cache directory as platformdirs
    says (on Linux, the XDG rule, without importing it on every command)."""
    env = os.environ.get("PATCHKIT_CACHE")
    if env:
        return os.path.expanduser(env)
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(base, "patchkit")
    import platformdirs  # (elsewhere than Linux: its rules, at the cost of the import)

    return str(platformdirs.user_cache_dir("patchkit"))


def made(path: Place) -> None:
    try:
        os.mkdir(path, MODE)
    except FileExistsError:
        return


def trusted(path: Place, top: Place) -> None:
    """Refuse ``path`` (a directory of the cache at ``top``) unless it is ours alone to
    write. The root may be a link (``~/.cache`` on another disk); a directory inside it may
    not: a link there would send what patchkit writes outside the cache."""
    inner = os.fspath(path) != os.fspath(top)
    st = os.lstat(path) if inner else os.stat(path)
    if stat.S_ISLNK(st.st_mode):
        raise CacheUntrusted(
            f"the cache {top}: {path} is a symbolic link (to {os.readlink(path)}); patchkit "
            "writes only inside its cache",
            hint=f"remove the link {path} (patchkit makes the directory again)",
        )
    if not stat.S_ISDIR(st.st_mode):
        raise CacheUntrusted(
            f"the cache {top}: {path} is not a directory",
            hint=f"remove {path}, or point PATCHKIT_CACHE at a directory of your own",
        )
    if st.st_uid != os.geteuid():
        raise CacheUntrusted(
            f"the cache {top}: {path} belongs to user {st.st_uid}, not to you "
            f"({os.geteuid()}); patchkit does not trust a cache another user can change",
            hint=f"use a cache of your own: PATCHKIT_CACHE=DIR (or `chown -R` {top} to you)",
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheUntrusted(
            f"the cache {top}: {path} is writable by other users "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); patchkit does not trust a cache others "
            "can change",
            hint=f"`chmod go-w {path}`, or use a cache of your own: PATCHKIT_CACHE=DIR",
        )


def sealing_key(top: Place) -> bytes:
    """The sealing key of the cache at ``top``, made on first use; refused unless ours alone."""
    path = os.path.join(top, KEY)
    key = read_key(path)
    if key is None:
        make_key(path)
        key = read_key(path)
    if key is None:  # pragma: no cover (removed between making and reading)
        raise ConfigError(f"cannot make the cache's key {path}")
    return key


def read_key(path: str) -> bytes | None:
    """The key at ``path``; None when there is none; refused unless it is ours alone."""
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheUntrusted(
            f"the cache's key {path} cannot be read: {exc.strerror or exc}",
            hint=f"remove {path} (patchkit makes a new one and recomputes what it sealed)",
        ) from None
    with open(fd, "rb") as handle:  # (O_NONBLOCK: a FIFO planted as the key never waits)
        st = os.fstat(fd)
        data = handle.read(_KEY_BYTES + 1) if stat.S_ISREG(st.st_mode) else b""
    private = stat.S_IMODE(st.st_mode) & 0o077 == 0 and st.st_uid == os.geteuid()
    if not stat.S_ISREG(st.st_mode) or not private or len(data) != _KEY_BYTES:
        raise CacheUntrusted(
            f"the cache's key {path} is not yours alone (it must be a file of "
            f"{_KEY_BYTES} bytes, yours, mode 0600)",
            hint=f"remove {path} (patchkit makes a new one and recomputes what it sealed)",
        )
    return data


def make_key(path: str) -> None:
    """A new random key, whole or not at all (another process may make one at the same time:
    the first link wins)."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with open(fd, "wb") as handle:
            os.fchmod(fd, 0o600)
            handle.write(os.urandom(_KEY_BYTES))
        try:
            os.link(tmp, path)
        except FileExistsError:  # (another process made one first)
            return
    finally:
        try:  # noqa: SIM105 (no contextlib: a warm run does without it)
            os.unlink(tmp)
        except OSError:
            pass


def seal(key: bytes, payload: bytes) -> str:
    """The keyed digest that shows ``payload`` was written under ``key``."""
    return hashlib.blake2b(payload, key=key, digest_size=32).hexdigest()


def sealed(key: bytes, payload: bytes, given: str | bytes) -> bool:
    """Whether ``given`` is :func:`seal` of ``payload`` (compared in constant time)."""
    given = given if isinstance(given, bytes) else given.encode("utf-8", "surrogateescape")
    return hmac.compare_digest(seal(key, payload).encode(), given)
