"""The three verbs that write a project (record, import, rebase) set up on one small project, and
a watch on every file write under a directory (Python's audit hooks: ``open`` for writing,
rename, remove), which can also make one of those writes fail."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchkit.ops.import_ import import_patches
from patchkit.ops.rebase import rebase
from patchkit.ops.record import record_target
from patchkit.project.load import load_project
from testing.builders import Scenario, run_git

FILES = {"a.txt": "a one\na two\n", "b.txt": "b one\nb two\n"}
PACKAGE = str(Path(__file__).resolve().parents[2] / "patchkit")
OWNER = os.path.join(PACKAGE, "project") + os.sep  # the one package allowed to write them
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def scenario(tmp_path: Path) -> Scenario:
    """A checkout of ``demo`` locked at its tag v1.0, with one patch ``p1`` in set ``demo``."""
    s = Scenario(tmp_path, FILES)
    run_git(s.upstream.path, "tag", "v1.0")
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    return s


def ready_record(s: Scenario) -> Callable[[], object]:
    """The series applied and an edit made: ``record`` makes patch p2 of it."""
    s.apply()
    (s.root / "b.txt").write_text("b one\nb TWO\n")
    project = load_project(s.project.path)
    return lambda: record_target(
        project=project, target="demo", patch_id="p2", checkout=s.root, title="B", why="b"
    )


def ready_import(s: Scenario) -> Callable[[], object]:
    """A diff made at the lock: ``import`` adds it to set ``demo``."""
    source = s.project.path.parent / "fix.diff"
    source.write_bytes(s.upstream.diff_of({"b.txt": "b one\nb TWO\n"}))
    project = load_project(s.project.path)
    return lambda: import_patches(
        project=project, target="demo", sources=[str(source)], into="demo"
    )


def ready_rebase(s: Scenario) -> Callable[[], object]:
    """A release v1.1: ``rebase`` moves the lock there and notes p1's history."""
    s.upstream.commit({"c.txt": "c\n"}, "release 1.1")
    run_git(s.upstream.path, "tag", "v1.1")
    project = load_project(s.project.path)
    return lambda: rebase(project=project, target="demo", onto="v1.1")


READY = {"record": ready_record, "import": ready_import, "rebase": ready_rebase}


@dataclass
class Watch:
    """Writes under ``root`` seen while armed: each path, and whether code of ``patchkit/project/``
    was on the stack; ``fail_at`` makes that write (counted from 0) fail once with EIO."""

    root: str
    fail_at: int | None = None
    seen: list[tuple[str, bool]] = field(default_factory=list)

    def outside_owner(self) -> list[str]:
        return [path for path, owned in self.seen if not owned]


_armed: list[Watch] = []


def _written_path(event: str, args: tuple[Any, ...]) -> Any:
    if event == "open" and isinstance(args[2], int) and args[2] & _WRITING:
        return args[0]
    if event in ("os.rename", "os.remove"):
        return args[1] if event == "os.rename" else args[0]
    return None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _armed:
        return
    path = _written_path(event, args)
    if not isinstance(path, (str, bytes, os.PathLike)):
        return
    watch = _armed[-1]
    full = os.path.realpath(os.fsdecode(path))
    if not full.startswith(watch.root + os.sep):
        return
    frame = sys._getframe(1)
    owned = False
    while frame is not None and not owned:
        owned = frame.f_code.co_filename.startswith(OWNER)
        frame = frame.f_back
    watch.seen.append((os.path.relpath(full, watch.root), owned))
    if watch.fail_at == len(watch.seen) - 1:
        watch.fail_at = None
        raise OSError(errno.EIO, "injected failure", full)


sys.addaudithook(_hook)  # hooks cannot be removed: it does nothing unless a watch is armed


@contextlib.contextmanager
def watching(root: Path, fail_at: int | None = None) -> Iterator[Watch]:
    watch = Watch(os.path.realpath(root), fail_at)
    _armed.append(watch)
    try:
        yield watch
    finally:
        _armed.remove(watch)
