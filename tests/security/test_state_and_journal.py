"""A disk that refuses the journal (ENOSPC, EFBIG) and a state file patchkit cannot read end in a
clear error (exit 4) with the tree as it was and no half-written file, never a crash (70)."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario, snapshot

FILES = {f"d/f{i:03}.txt": f"line {i}\n" for i in range(300)}


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {k: v.upper() for k, v in FILES.items()})
    return s


def run(s: Scenario, verb: str, *more: str) -> int:
    where = ["--project", str(s.project.path), "--checkout", str(s.root)]
    return main([verb, "--target", "demo", *where, *more])


def test_a_full_disk_while_saving_the_journal_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    before = snapshot(s.root)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert run(s, "apply") == 4
    err = capsys.readouterr().err
    assert "saving the journal" in err and "nothing was written" in err and "free disk" in err
    assert snapshot(s.root) == before
    state_dir = s.root / ".git" / "patchkit"
    assert not list(state_dir.glob("*.tmp")) and not (state_dir / "journal.json").exists()
    monkeypatch.undo()
    assert run(s, "apply") == 0  # once there is room again


def test_a_file_size_limit_while_saving_the_journal_is_exit_4_in_a_real_process(
    tmp_path: Path,
) -> None:
    s = scenario(tmp_path)
    before = snapshot(s.root)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    where = ["--project", str(s.project.path), "--checkout", str(s.root)]

    def limit() -> None:  # EFBIG past 16 kB: the originals fit, the journal does not
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))

    proc = subprocess.run(
        [sys.executable, "-m", "patchkit", "apply", "--target", "demo", *where],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit,
        timeout=120,
    )
    assert proc.returncode == 4, proc.stderr
    assert "File too large" in proc.stderr
    assert snapshot(s.root) == before


GOOD = {"version": 1, "target": "demo", "commit": None, "lock_version": "1.0"}


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "{not json",
        '"x"',
        json.dumps({**GOOD, "patches": 5, "files": {}}),
        json.dumps({**GOOD, "target": 5, "patches": [], "files": {}}),
        json.dumps({**GOOD, "patches": [{"id": 1}], "files": {}}),
        json.dumps({**GOOD, "patches": [], "files": {"a": {"path": "a"}}}),
        "[" * 100_000 + "]" * 100_000,
        '{"version": 1, "target": ' + "9" * 5000 + "}",
        b"\xff\xfe".decode("latin-1"),
    ],
    ids=lambda text: f"{len(text)}-{sum(map(ord, text)) % 9973}",
)
def test_a_malformed_state_file_names_itself_and_the_way_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    s = scenario(tmp_path)
    state = s.root / ".git" / "patchkit" / "state.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(text, encoding="latin-1")
    before = snapshot(s.root)
    for verb in ("status", "apply", "reset"):
        assert run(s, verb) == 4, verb
        err = capsys.readouterr().err
        assert str(state) in err and "move" in err and "aside" in err
    assert snapshot(s.root) == before


def test_a_saved_original_named_by_a_path_is_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    assert run(s, "apply") == 0
    state = s.root / ".git" / "patchkit" / "state.json"
    data = json.loads(state.read_text())
    outside = tmp_path / "outside"
    outside.write_text("not yours\n")
    for record in data["files"].values():
        record["original"] = "../../../../outside"
    state.write_text(json.dumps(data))
    assert run(s, "reset") == 4
    assert "names no saved original (not a sha256)" in capsys.readouterr().err
    assert s.read("d/f000.txt") == b"LINE 0\n"
