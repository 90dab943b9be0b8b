"""One writer at a time per tree (a checkout, an installed package, the cache's shared trees,
a project's files): an exclusive file lock (``filelock``) per tree, kept under the cache
(``<cache>/locks/``, named after the tree's state directory) so it leaves no trace in a tree.

A writer waits a little (``PATCHKIT_LOCK_TIMEOUT`` seconds, default 10) and then refuses,
naming the process that holds the lock and its command, which it wrote beside the lock. A
reader takes the same lock for the moment it reads, so it never sees a half-written tree. The
lock is the kernel's (``flock``): a process that dies, even by SIGKILL, releases it. Within one
process the lock is re-entrant, so a command that reads its own tree after writing it is fine.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from patchkit.cache import cache_dir
from patchkit.errors import TreeBusy
from patchkit.workspace.tree import Tree

LOCK = ".lock"
HOLDER = ".holder.json"
DEFAULT_TIMEOUT = 10.0


def timeout() -> float:
    try:
        return float(os.environ.get("PATCHKIT_LOCK_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def _base(directory: Path) -> Path:
    """Where the lock of the tree whose state lives in ``directory`` is kept."""
    digest = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:24]
    return cache_dir("locks") / digest


def _lock(directory: Path) -> FileLock:
    # one instance per path in this process: acquiring it again nests instead of deadlocking
    return FileLock(_base(directory).with_suffix(LOCK), is_singleton=True)


def holder(directory: Path) -> dict[str, object] | None:
    """What the process holding (or that last held) the lock wrote about itself."""
    try:
        found = json.loads(_base(directory).with_suffix(HOLDER).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _describe(info: dict[str, object] | None) -> str:
    if not info:
        return "another patchkit process"
    return (
        f"patchkit process {info.get('pid')} (`{info.get('command')}`, since {info.get('since')})"
    )


@contextlib.contextmanager
def exclusive(directory: Path, what: str, command: str) -> Iterator[None]:
    """Hold the lock of the tree whose state lives in ``directory`` (``what`` names the tree
    in messages); refuse with :class:`TreeBusy` if another process keeps it too long."""
    lock = _lock(directory)
    try:
        lock.acquire(timeout=timeout())
    except Timeout:
        raise TreeBusy(
            f"{what} is being changed by {_describe(holder(directory))}; refusing to touch it "
            "at the same time",
            hint="wait for that command to finish and run this one again",
        ) from None
    outermost = lock.lock_counter == 1
    try:
        if outermost:
            _write_holder(directory, command)
        yield
    finally:
        if outermost:
            with contextlib.suppress(OSError):
                _base(directory).with_suffix(HOLDER).unlink()
        lock.release()


def _write_holder(directory: Path, command: str) -> None:
    info = {
        "pid": os.getpid(),
        "command": command,
        "argv": ["patchkit", *sys.argv[1:]],
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = _base(directory).with_suffix(HOLDER)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info))
    tmp.replace(path)


def writing(tree: Tree, command: str) -> contextlib.AbstractContextManager[None]:
    """The one writer of ``tree`` (apply, reset, record, port, rebase, fetch)."""
    return exclusive(tree.state_dir, f"the {tree.kind} at {tree.root}", command)


def reading(tree: Tree, command: str = "status") -> contextlib.AbstractContextManager[None]:
    """Read ``tree`` whole: no writer is half-way through it meanwhile."""
    return exclusive(tree.state_dir, f"the {tree.kind} at {tree.root}", command)
