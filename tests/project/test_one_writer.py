"""record, import and rebase write a project through one writer: they exclude each other (one
holding the project's lock makes the others wait, then refuse naming it), and a failure half-way
through leaves every project file as it was."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchkit.errors import PatchkitError, TreeBusy
from patchkit.workspace.state import StateStore
from testing.builders import snapshot
from tests.project.verbs import READY, ready_record, scenario, watching

ROOT = str(Path(__file__).resolve().parents[2])
HOLD = """\
import sys
from pathlib import Path
from patchkit.project.writer import project_lock
with project_lock(Path(sys.argv[1]), command=sys.argv[2]):
    print("held", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def held_by(project: Path, command: str) -> Iterator[None]:
    """Another patchkit process holds the project's lock as ``command`` until the block ends."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(project), command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline() == b"held\n"
        yield
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.mark.parametrize(
    ("verb", "holder"),
    [
        ("record", "rebase"),
        ("record", "import"),
        ("import", "record"),
        ("import", "rebase"),
        ("rebase", "record"),
        ("rebase", "import"),
    ],
)
def test_record_import_and_rebase_exclude_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verb: str, holder: str
) -> None:
    s = scenario(tmp_path)
    run = READY[verb](s)
    monkeypatch.setenv("PATCHKIT_LOCK_TIMEOUT", "0.3")
    before = snapshot(s.project.path)
    with held_by(s.project.path, holder), pytest.raises(TreeBusy, match=f"`{holder}`"):
        run()
    assert snapshot(s.project.path) == before
    run()  # once the other command is done, this one goes through
    assert snapshot(s.project.path) != before


@pytest.mark.parametrize("verb", sorted(READY))
def test_a_write_failing_half_way_leaves_every_project_file_as_it_was(
    tmp_path: Path, verb: str
) -> None:
    s = scenario(tmp_path)
    run = READY[verb](s)
    before = snapshot(s.project.path)
    with watching(s.project.path, fail_at=2) as watch, pytest.raises((PatchkitError, OSError)):
        run()  # the second file's write fails
    assert len(watch.seen) > 2  # a file was written before the one that failed
    assert snapshot(s.project.path) == before
    run()  # nothing was left half-done: the command runs again and completes
    assert snapshot(s.project.path) != before


def test_record_whose_state_cannot_be_saved_writes_no_project_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = scenario(tmp_path)
    run = ready_record(s)
    before, state = snapshot(s.project.path), StateStore(s.tree().state_dir).file.read_bytes()

    def full_disk(self: StateStore, state: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(StateStore, "save", full_disk)
    with pytest.raises(OSError, match="No space"):
        run()
    assert snapshot(s.project.path) == before
    assert StateStore(s.tree().state_dir).file.read_bytes() == state
