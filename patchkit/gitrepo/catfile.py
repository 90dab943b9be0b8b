"""One long-lived ``git cat-file --batch`` process: objects by name, read one after another.

A :class:`patchkit.gitrepo.GitRepo` starts it on its first object read and closes it with
itself, so reading many objects costs one process, not one each.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from pathlib import Path

from patchkit.gitrepo.command import clean_env, log

_HEADER = re.compile(rb"([0-9a-f]{40}|[0-9a-f]{64}) (blob|tree|commit|tag) ([0-9]{1,18})\n")


def parse_header(line: bytes) -> tuple[str, str, int] | None:
    """(object id, type, size) of a ``--batch`` header line; None for any other answer
    (``<name> missing``, ``<name> ambiguous``), whatever spaces the name held."""
    match = _HEADER.fullmatch(line)
    if match is None:
        return None
    return match.group(1).decode(), match.group(2).decode(), int(match.group(3))


class CatFile:
    """One ``git cat-file --batch`` process: objects by name, read one after another."""

    def __init__(self, path: Path) -> None:
        log.debug("$ git cat-file --batch (in %s)", path)
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=path,
                env=clean_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (FileNotFoundError, NotADirectoryError):
            self._proc = None  # no git, or no such repository: every object is missing

    def read(self, name: str) -> tuple[bytes, bytes] | None:
        """(type, content) of the object ``name`` names, or None when there is none."""
        found = self.lookup(name)
        return None if found is None else (found[1].encode(), found[2])

    def lookup(self, name: str) -> tuple[str, str, bytes] | None:
        """(object id, type, content) of the object ``name`` names, or None when there is none."""
        proc = self._proc
        if proc is None or "\n" in name or proc.stdin is None or proc.stdout is None:
            return None
        try:
            proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = b""
        if not line:  # git is gone
            self.close()
            return None
        found = parse_header(line)
        if found is None:  # "<name> missing", "<name> ambiguous": the name may hold spaces
            return None
        data = proc.stdout.read(found[2] + 1)
        return found[0], found[1], data[:-1]

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.communicate(timeout=10)
