"""The project writer: files of the project only (a path outside it, or through a link leading
out, is refused and nothing is written), all of them or none, a step run inside the write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.errors import TreeError, UnsafePathError
from patchkit.project.writer import project_lock, project_writes, write_project


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "patchsets" / "s" / "patches").mkdir(parents=True)
    (root / "upstream.lock").write_text("[targets]\n")
    return root


def test_a_path_outside_the_project_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = project(tmp_path)
    with pytest.raises(UnsafePathError, match="not a file of the project"):
        write_project(
            root,
            {root / "upstream.lock": b"moved\n", tmp_path / "elsewhere.toml": b"x\n"},
            command="import",
        )
    assert (root / "upstream.lock").read_text() == "[targets]\n"
    assert not (tmp_path / "elsewhere.toml").exists()


def test_a_set_linked_out_of_the_project_is_never_written_through(tmp_path: Path) -> None:
    root = project(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "patchsets" / "linked")
    with pytest.raises(UnsafePathError):
        write_project(root, {root / "patchsets" / "linked" / "patchset.toml": b"x\n"}, command="x")
    assert list(outside.iterdir()) == []


def test_a_failing_step_puts_every_file_back(tmp_path: Path) -> None:
    root = project(tmp_path)
    meta = root / "patchsets" / "s" / "patches" / "p.toml"

    def fails() -> None:
        assert meta.read_text() == 'id = "p"\n'  # the files are written when the step runs
        raise TreeError("the state could not be saved")

    with pytest.raises(TreeError, match="state"), project_writes(root, command="record") as w:
        w.put(meta, b'id = "p"\n')
        w.put(root / "upstream.lock", b"moved\n")
        w.then(fails)
    assert not meta.exists() and (root / "upstream.lock").read_text() == "[targets]\n"


def test_reads_see_what_the_write_puts_and_the_lock_nests(tmp_path: Path) -> None:
    root = project(tmp_path)
    lock = root / "upstream.lock"
    with project_lock(root, command="rebase"), project_writes(root, command="rebase") as w:
        assert w.read(lock) == b"[targets]\n" and w.read(root / "none") is None
        w.put(lock, b"moved\n")
        assert w.read(lock) == b"moved\n" and lock.read_text() == "[targets]\n"
    assert lock.read_text() == "moved\n"


def test_a_block_that_raises_writes_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    with pytest.raises(RuntimeError), project_writes(root, command="import") as w:
        w.put(root / "upstream.lock", b"moved\n")
        raise RuntimeError("the import failed before its end")
    assert (root / "upstream.lock").read_text() == "[targets]\n"
