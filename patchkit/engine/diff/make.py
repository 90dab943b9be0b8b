"""Unified diffs people and tools read: full-index, git-style, made from before/after contents.
Rewrites are shown this way, exports commit it, and ``record`` stores it."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from patchkit.gitrepo import diff_dirs
from patchkit.workspace.tree import write_file


@dataclass(frozen=True)
class FileDelta:
    path: str
    before: bytes | None  # None: the file does not exist before
    after: bytes | None  # None: deleted
    before_mode: int | None = None
    after_mode: int | None = None


def unified_diff(deltas: Iterable[FileDelta]) -> bytes:
    """One diff for all the deltas, in path order; empty if nothing differs."""
    with tempfile.TemporaryDirectory(prefix="patchkit-diff-") as tmp:
        work = Path(tmp)
        (work / "a").mkdir()
        (work / "b").mkdir()
        for delta in sorted(deltas, key=lambda d: d.path):
            for side, content, mode in (
                ("a", delta.before, delta.before_mode),
                ("b", delta.after, delta.after_mode),
            ):
                if content is not None:
                    write_file(work / side / delta.path, content, mode)
        raw = diff_dirs(work)
    return _strip_dirs(raw)


def _strip_dirs(raw: bytes) -> bytes:
    """git names each side after the directory it found the file in, so a new or deleted file
    reads ``diff --git b/x b/x``; make every header the usual ``a/x b/x``."""
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        if line.startswith(b"diff --git "):
            rest = line[len(b"diff --git ") :]
            path = rest[2 : (len(rest) - 1) // 2]
            lines[i] = b"diff --git a/" + path + b" b/" + path
    return b"\n".join(lines)
