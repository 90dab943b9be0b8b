"""What the second hostile sweep found, each as the command a person runs:

- git configuration planted in a checkout (``core.fsmonitor``, ``core.hooksPath`` hooks,
  filter drivers for every path) ran its programs on patchkit's ``git status``, or failed the
  command (exit 3): every git command now runs with those settings overridden;
- a ``gh`` that never answers held ``upstream-check`` for 120 s whatever one asked:
  ``PATCHKIT_GH_TIMEOUT`` bounds each call, and an answer over ``MAX_OUTPUT_BYTES`` is cut off
  as it comes, never read whole into memory;
- a FIFO planted as a warm run's record in the cache hung ``apply`` for ever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.upstream import github
from testing.builders import Scenario, run_git, snapshot
from testing.fake_gh import fake_gh
from tests.hostile.common import run, scenario
from tests.ops.test_upstream_check import case

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    """A longer deadline than the other hostile tests' (a few ``patchkit`` processes each):
    every wait here has its own limit, which the test checks."""
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)


def _plant(tmp_path: Path, root: Path) -> Path:
    """Programs a checkout's git configuration names, each leaving ``marker`` when run."""
    marker = tmp_path / "PLANTED-COMMAND-RAN"
    program = f"touch {marker}"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-index-change", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\n{program}\n")
        (hooks / name).chmod(0o755)
    for key, value in (
        ("core.fsmonitor", program),
        ("core.hooksPath", str(hooks)),
        ("filter.evil.clean", program),
        ("filter.evil.smudge", program),
        ("filter.evil.process", program),
        ("filter.evil.required", "true"),
    ):
        run_git(root, "config", key, value)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    return marker


def test_git_configuration_planted_in_a_checkout_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    marker = _plant(tmp_path, s.root)
    for verb in ("status", "apply", "status", "reset"):
        assert run(s, verb) == 0, (verb, capsys.readouterr().err)
        assert not marker.exists(), f"`patchkit {verb}` ran a program git's configuration names"
    assert (s.root / "a.txt").read_text() == "a one\na two\n"


def test_a_gh_that_never_answers_is_stopped_after_its_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    c = case(tmp_path / "p")
    fake_gh(tmp_path, monkeypatch)
    never = tmp_path / "never-bin"
    never.mkdir()
    (never / "gh").write_text('#!/bin/sh\ncase "$1" in auth) exit 0;; esac\nsleep 600\n')
    (never / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{never}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PATCHKIT_GH_TIMEOUT", "1")
    started = time.monotonic()

    argv = ["upstream-check", "--target", "vllm", "--project", str(c.project.path), "--dry-run"]
    assert main(argv) == 3
    assert time.monotonic() - started < 10
    said = capsys.readouterr().err
    assert "gave no answer in time; stopped" in said and "PATCHKIT_GH_TIMEOUT" in said


def test_a_gh_answer_over_the_limit_is_cut_off_as_it_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(github, "MAX_OUTPUT_BYTES", 1_000_000)
    flood = tmp_path / "gh"
    flood.write_text("#!/bin/sh\nexec yes flood\n")  # ends only when nobody reads
    flood.chmod(0o755)
    with pytest.raises(github.SourceError, match=r"printed more than 1000000 bytes"):
        github.Gh(str(flood)).text("pr", "list")


def _patchkit(*argv: str) -> int:
    """``python3 -m patchkit`` as a person runs it: the entry replays a recorded run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "patchkit", *argv], env=env, capture_output=True, timeout=15
    )
    return done.returncode


def test_a_fifo_planted_as_a_warm_record_is_never_waited_for(tmp_path: Path) -> None:
    s = Scenario(tmp_path / "work", {"a.txt": "a one\na two\n"})
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    time.sleep(2.1)  # (a file changed in the two seconds before a run makes no record)
    assert _patchkit("apply", *where) == 0 and _patchkit("reset", *where) == 0
    records = list((Path(os.environ["PATCHKIT_CACHE"]) / "warm").iterdir())
    assert records  # the apply was recorded: the next one replays it
    for record in records:
        record.unlink()
        os.mkfifo(record, 0o600)

    assert _patchkit("apply", *where) == 0  # (it waited for a writer for ever: TimeoutExpired)
    assert (s.root / "a.txt").read_text() == "a one\na TWO\n"


@pytest.mark.parametrize(
    ("source", "link"), [("sub/s.txt", False), ("sub/up", True)], ids=["file", "link"]
)
def test_a_copy_is_refused_never_applied_as_a_rename(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, link: bool
) -> None:
    """``copy from X`` / ``copy to Y`` was read as a rename: Y written, X deleted, and the
    patch reported applied. A copy of a link moves where its ``../`` leads, too."""
    s = Scenario(tmp_path / "work", {"a.txt": "a one\n", "sub/s.txt": "s\n"})
    os.symlink("../a.txt", s.root / "sub" / "up")
    run_git(s.root, "add", "-A")
    run_git(s.root, "commit", "-qm", "a link")
    s.lock_to_head()
    copy = f"diff --git a/{source} b/sub/deeper/c\nsimilarity index 100%\n"
    s.project.add_diff("p1", f"{copy}copy from {source}\ncopy to sub/deeper/c\n".encode())
    before = snapshot(s.root)

    assert run(s, "apply") == 6
    assert "p1.patch: refuses a copy (line 3)" in capsys.readouterr().out
    assert snapshot(s.root) == before
    assert (s.root / source).is_symlink() is link
