"""git on bytes and plain directories, outside any repository: a blob's id (computed without
git), a three-way merge with labelled markers (``merge-file``), and the diff of two
directories (``diff --no-index``).
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from patchkit.gitrepo.command import run


def blob_id(content: bytes) -> str:
    """The git blob id (SHA-1) of ``content``, computed without git."""
    h = hashlib.sha1(b"blob %d\0" % len(content))
    h.update(content)
    return h.hexdigest()


@dataclass(frozen=True)
class MergeResult:
    content: bytes
    conflicts: int  # number of conflict blocks; 0 means a clean merge


def merge_file(
    ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
) -> MergeResult:
    """``git merge-file`` in memory: three-way merge with labelled conflict markers."""
    with tempfile.TemporaryDirectory(prefix="patchkit-merge-") as tmp:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_bytes(data)
            names.append(str(p))
        args = ["merge-file", "-p", "--diff3"]
        for label in labels:
            args += ["-L", label]
        proc = run([*args, *names], cwd=Path(tmp), ok_codes=tuple(range(0, 128)))
    return MergeResult(proc.stdout, proc.returncode)


def diff_dirs(workdir: Path, old: str = "a", new: str = "b") -> bytes:
    """``git diff --no-index --full-index`` of two directories under ``workdir``; the paths in
    the diff are relative to them, with git's usual a/ and b/ prefixes."""
    proc = run(
        [
            "diff",
            "--no-index",
            "--full-index",
            "--no-prefix",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            old,
            new,
        ],
        cwd=workdir,
        ok_codes=(0, 1),
    )
    return proc.stdout
