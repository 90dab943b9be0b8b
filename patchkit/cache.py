"""Where patchkit keeps what it fetches and computes: outside any project tree, in one cache
directory whose layout and keys only :class:`Cache` knows (every other module asks it for its
paths).

``PATCHKIT_CACHE`` overrides the default, the user's cache directory (platformdirs).

The cache is not trusted blindly. Its directory (and each directory in it, the first time a
process uses it) must belong to the user running patchkit and must not be writable by group or
others, else :class:`~patchkit.errors.CacheUntrusted` (exit 2) names it and the fix. What
patchkit reads back as a result it would otherwise compute (parsed TOML, rewrite results) is
sealed: a keyed digest (BLAKE2b) under the cache's own ``key`` file (the user's alone, mode
0600), so an entry that was not written by this cache's patchkit, or changed since, is ignored
and recomputed. Nothing read from the cache is ever executed or imported.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from patchkit import cacheroot
from patchkit.errors import ConfigError, shown
from patchkit.trust.names import name_problem

_SEALED = b"patchkit-sealed-1"  # the first line of a sealed entry: this mark and its seal
_checked: dict[str, Cache] = {}  # root -> its Cache, trusted (one ownership check per process)


@dataclass
class Cache:
    """One cache directory: its layout (a method per kind of thing kept) and its sealing key."""

    root: Path
    # half-made files of interrupted runs (``cache prune`` removes them)
    LEFTOVERS = (
        "downloads/*.part",
        "repos/.*.git.*",
        "*.tmp",
        "locks/*.tmp",
        "rebase/**/*.tmp",
        "rewrites/*.tmp",
        "toml/*.tmp",
        "toml-*.marshal",  # parsed TOML as code objects could hold: no longer read
    )
    _dirs: dict[tuple[str, ...], Path] = field(default_factory=dict, init=False, repr=False)
    _key: bytes | None = field(default=None, init=False, repr=False)

    @staticmethod
    def current() -> Cache:
        """The cache ``PATCHKIT_CACHE`` (or the user's cache directory) names, checked."""
        root = Path(cacheroot.root())
        found = _checked.get(str(root))
        if found is None:
            found = Cache(root)
            found.check()
            _checked[str(root)] = found
        return found

    def check(self) -> None:
        """Make the root when missing; refuse it unless it is ours and only ours to write."""
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=cacheroot.MODE)
            cacheroot.trusted(self.root, self.root)
        except OSError as exc:
            raise ConfigError(
                f"cannot use the cache {self.root}: {exc.strerror or exc}",
                hint="point PATCHKIT_CACHE at a local directory of your own",
            ) from None

    # -- layout -----------------------------------------------------------------------------
    def dir(self, *parts: str) -> Path:
        """The directory ``parts`` under the root, made and checked (once per process)."""
        path = self._dirs.get(parts)
        if path is None:
            path = self.root.joinpath(*(_segment(p) for p in parts))
            try:
                for depth in range(1, len(parts) + 1):
                    cacheroot.made(self.root.joinpath(*parts[:depth]))
                    cacheroot.trusted(self.root.joinpath(*parts[:depth]), self.root)
            except OSError as exc:
                raise ConfigError(
                    f"cannot use {path} in the cache: {exc.strerror or exc}",
                    hint="point PATCHKIT_CACHE at a local, writable directory of your own",
                ) from None
            self._dirs[parts] = path
        return path

    def existing(self, *parts: str) -> Path | None:
        """The directory ``parts`` under the root when it is there (``cache prune`` looks)."""
        path = self.root.joinpath(*(_segment(p) for p in parts))
        return path if path.is_dir() else None

    def repo(self, target: str) -> Path:
        """A target's bare repository of upstream releases (made by its owner, not here)."""
        return self.dir("repos") / f"{_segment(target)}.git"

    def tree(self, target: str) -> Path:
        """A target's shared tree: a worktree of :meth:`repo` at the locked commit."""
        return self.dir("trees") / _segment(target)

    def downloads(self) -> Path:
        return self.dir("downloads")

    def records(self, set_name: str, key: str) -> Path:
        """This machine's verification records of a patch set (made when written)."""
        return self.dir("records") / f"{_segment(set_name)}-{_segment(key)}.json"

    def rebase(self, name: str) -> Path:
        """A stopped rebase's state and worktree (``<target>-<digest>``)."""
        return self.dir("rebase") / _segment(name)

    def rewrites(self, name: str) -> Path:
        """A file of the rewrite engine's cache (results, selectors, verdicts)."""
        return self.dir("rewrites") / _segment(name)

    def export(self, target: str, patch_id: str) -> Path:
        return self.dir("exports", target, patch_id)

    def tools(self) -> Path:
        """Where the formatters upstream pins get their virtual environments (``export.tools``
        names each ``<tool>-<version>`` and keeps it inside)."""
        return self.dir("tools")

    def lock(self, name: str) -> Path:
        """A lock file of something that lives in the cache itself."""
        return self.dir("locks") / _segment(name)

    def matrix(self) -> Path:
        return self.dir("matrix") / "cells.sqlite"

    def toml(self, name: str) -> Path:
        """A parsed TOML text, sealed (see ``tomlread``)."""
        return self.dir("toml") / _segment(name)

    def crash_log(self) -> Path:
        return self.root / "crash.log"

    # -- sealing ----------------------------------------------------------------------------
    def seal(self, payload: bytes) -> str:
        """The keyed digest that shows ``payload`` was written by this cache's patchkit."""
        return cacheroot.seal(self._sealing_key(), payload)

    def sealed(self, payload: bytes, seal: str | bytes) -> bool:
        """Whether ``seal`` is :meth:`seal` of ``payload`` (compared in constant time)."""
        return cacheroot.sealed(self._sealing_key(), payload, seal)

    def write_sealed(self, path: Path, payload: bytes) -> None:
        """Write ``payload`` to ``path`` (in the cache) with its seal, atomically; silently not
        at all where the cache cannot be written (a cache is only ever faster)."""
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(b"%s %s\n" % (_SEALED, self.seal(payload).encode()) + payload)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def read_sealed(self, path: Path) -> bytes | None:
        """The payload :meth:`write_sealed` wrote at ``path``; None when there is none, or it
        was not sealed under this cache's key (written by anyone else, or changed since)."""
        try:  # O_NONBLOCK, regular files only: a FIFO or device in its place is never waited on
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks = [os.read(fd, 1 << 16)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 20))
        except OSError:
            return None
        finally:
            os.close(fd)
        data = b"".join(chunks)
        head, _, payload = data.partition(b"\n")
        mark, _, seal = head.partition(b" ")
        if mark != _SEALED or not self.sealed(payload, seal):
            return None
        return payload

    def _sealing_key(self) -> bytes:
        if self._key is None:
            self._key = cacheroot.sealing_key(self.root)
        return self._key


def _segment(name: str) -> str:
    """``name`` as one path segment of the cache (it may come from a config file)."""
    problem = name_problem(name)
    if problem is not None:
        raise ConfigError(f"{shown(name)} cannot name a file in patchkit's cache: {problem}")
    return name
