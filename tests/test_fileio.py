"""A whole file in few system calls, and all of it even when the kernel returns less per read
than asked (Linux returns at most 2 GiB minus a page per read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import patchkit.fileio as fileio


def test_short_reads_are_read_on_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(range(256)) * 40)
    real = os.read
    monkeypatch.setattr(fileio.os, "read", lambda fd, n: real(fd, min(n, 1000)))
    assert fileio.read_file(path) == path.read_bytes()


def test_a_whole_file_and_an_empty_one(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"abc\n")
    (tmp_path / "e").write_bytes(b"")
    assert fileio.read_file(tmp_path / "a") == b"abc\n"
    assert fileio.read_file(tmp_path / "e") == b""
