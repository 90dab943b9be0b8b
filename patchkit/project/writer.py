"""The one writer of a project's own files: ``upstream.lock``, each set's ``patchset.toml``, the
patches' metadata and patch files. Every command that changes them (record, import, rebase,
retire, upstream-check, export-pr) holds the project's one lock and hands its files over
together, through the journal (:mod:`patchkit.workspace.txn`): all of them are written, or (after
a failure, or a crash and the next writer) none.

The lock and the journal live in the project's git directory, so processes with different caches
exclude each other and the working copy gets no lock file; in the cache for a project that is no
git checkout. A writer that finds the lock held waits, then refuses naming the holder
(:mod:`patchkit.workspace.locks`)::

    with project_writes(root, command="record") as w:
        w.put(patch_file, diff)
        w.put(manifest, appended(w.read(manifest), patch_id))
    # written here, together; nothing if the block raised
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from patchkit.cache import Cache
from patchkit.errors import UnsafePathError
from patchkit.gitrepo import locate_checkout
from patchkit.workspace.journal import Write
from patchkit.workspace.locks import writing
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import ProjectTree, Tree
from patchkit.workspace.txn import KEEP, recover
from patchkit.workspace.txn import commit as txn_commit


def project_tree(root: Path) -> Tree:
    """The project's files as a tree written through the journal, its state (and lock) in the
    project's git directory; in the cache for a project that is no git checkout."""
    root = root.resolve()
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    found = locate_checkout(root)
    state = (
        found[1] / f"patchkit-project-{digest}"
        if found is not None
        else Cache.current().rebase(f"project-{digest}")
    )
    return ProjectTree(root, state, "project")


@contextlib.contextmanager
def project_lock(root: Path, *, command: str) -> Iterator[None]:
    """Hold the project's one lock (``command`` names the holder to a refused writer) for as
    long as a command reads and then writes the project; a write interrupted earlier is rolled
    back first. Re-entrant in one thread: a rebase of pinned targets holds it around each."""
    tree = project_tree(root)
    with writing(tree, command):
        recover(tree, StateStore(tree.state_dir))
        yield


class ProjectWrites:
    """The files one command writes to a project, collected, then written together."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._tree = project_tree(root)
        self._files: dict[str, bytes | None] = {}
        self._then: list[Callable[[], object]] = []

    def put(self, path: Path, content: bytes | None) -> None:
        """Write ``content`` to ``path`` (a file of the project; None removes it)."""
        self._files[self._rel(path)] = content

    def read(self, path: Path) -> bytes | None:
        """``path`` as this write leaves it: what was put, else what is on disk (None: absent)."""
        rel = self._rel(path)
        return self._files[rel] if rel in self._files else self._tree.read(rel)

    def then(self, step: Callable[[], object]) -> None:
        """Run ``step`` once the files are written, before the write counts (``record`` saves the
        checkout's state with them); if it raises, every file is put back as it was."""
        self._then.append(step)

    def commit(self, command: str) -> None:
        """Write every file put so far, together (through the journal), then the steps."""
        writes = [Write(rel, content) for rel, content in self._files.items()]
        steps, self._files, self._then = self._then, {}, []
        if writes or steps:
            store = StateStore(self._tree.state_dir)
            txn_commit(self._tree, store, writes, KEEP, command=command, then=lambda: _run(steps))

    def _rel(self, path: Path) -> str:
        """``path`` relative to the project root; one outside it is refused, never written."""
        rel = os.path.relpath(os.path.abspath(path), self._tree.root)
        if rel == os.curdir or rel.split(os.sep, 1)[0] == os.pardir:
            rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        if rel == os.curdir or rel.split(os.sep, 1)[0] == os.pardir:
            raise UnsafePathError(f"{path}: is not a file of the project at {self.root}")
        return Path(rel).as_posix()


def _run(steps: list[Callable[[], object]]) -> None:
    for step in steps:
        step()


@contextlib.contextmanager
def project_writes(root: Path, *, command: str) -> Iterator[ProjectWrites]:
    """Collect a command's project files under the project's lock; written together when the
    block ends, nothing when it raises."""
    with project_lock(root, command=command):
        writes = ProjectWrites(root)
        yield writes
        writes.commit(command)


def project_files(root: Path) -> dict[Path, bytes]:
    """The project's own files as they are now: the lock and every file of its patch sets."""
    sets = sorted(p for p in (root / "patchsets").rglob("*") if p.is_file())
    files = [root / "upstream.lock", *sets]
    return {path: path.read_bytes() for path in files}


def restore(root: Path, saved: Mapping[Path, bytes], *, command: str) -> None:
    """The project's files back as :func:`project_files` saw them, together."""
    changed = {
        path: content
        for path, content in saved.items()
        if not path.exists() or path.read_bytes() != content
    }
    write_project(root, changed, command=command)


def write_project(root: Path, files: Mapping[Path, bytes | None], *, command: str) -> None:
    """Write ``files`` (project files: lock, manifests, metadata, patch files) together."""
    with project_writes(root, command=command) as writes:
        for path, content in files.items():
            writes.put(path, content)
