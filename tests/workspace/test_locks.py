"""The tree lock lives with the tree (in the checkout's own git directory), not in the cache: two
patchkit processes with different caches exclude each other on one checkout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from patchkit.gitrepo import GitRepo
from testing.builders import Scenario

ROOT = str(Path(__file__).resolve().parents[2])
FILES = {"a.txt": "a one\na two\n", "b.txt": "b one\n"}
PATCHED = {"a.txt": "a one\na TWO\n", "b.txt": "b ONE\n"}

HOLD = """
import sys, time
from pathlib import Path
from patchkit.workspace.locks import writing
from patchkit.workspace.tree import checkout_tree
with writing(checkout_tree(Path(sys.argv[1]), "demo"), "apply"):
    print("held", flush=True)
    time.sleep(60)
"""


def _env(cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": ROOT, "PATCHKIT_CACHE": str(cache), **extra}


def _scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p", PATCHED)
    return s


def test_writers_with_different_caches_exclude_each_other(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(s.root)],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(tmp_path / "cache-one"),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        args = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
        proc = subprocess.run(
            [sys.executable, "-m", "patchkit", "apply", *args],
            capture_output=True,
            text=True,
            env=_env(tmp_path / "cache-two", PATCHKIT_LOCK_TIMEOUT="0.3"),
        )
        assert proc.returncode == 9, proc.stdout + proc.stderr
        assert f"process {holder.pid} (`apply`" in proc.stderr
        assert {n: s.read(n).decode() for n in FILES} == FILES  # nothing was written
        status = subprocess.run(
            [sys.executable, "-m", "patchkit", "status", *args],
            capture_output=True,
            text=True,
            env=_env(tmp_path / "cache-three", PATCHKIT_LOCK_TIMEOUT="0.3"),
        )
        assert status.returncode == 9, status.stdout + status.stderr  # a read waits too
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_the_lock_is_in_the_worktrees_own_git_dir_and_nothing_in_the_tree(
    tmp_path: Path,
) -> None:
    s = _scenario(tmp_path)
    linked = tmp_path / "linked"
    GitRepo(s.root).git("worktree", "add", "-q", "--detach", str(linked), "HEAD")
    args = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(linked)]
    proc = subprocess.run(
        [sys.executable, "-m", "patchkit", "apply", *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path / "cache"),
    )
    assert proc.returncode == 0, proc.stderr
    git_dir = Path(GitRepo(linked).text("rev-parse", "--absolute-git-dir").strip())
    assert (git_dir / "patchkit").is_dir()  # the state, and (while a command runs) the lock
    assert not (s.root / ".git" / "patchkit").exists()  # the main worktree's is its own
    assert not (git_dir / "patchkit.lock").exists()  # removed when the command ended
    assert GitRepo(linked).text("status", "--porcelain", "--untracked-files=all").split() == [
        "M",
        "a.txt",
        "M",
        "b.txt",
    ]
    assert not (tmp_path / "cache" / "locks").exists()


IMPORT = """
import sys, time
from pathlib import Path
from patchkit.project.writer import project_lock
with project_lock(Path(sys.argv[1]), command="import"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_imports_with_different_caches_exclude_each_other(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    subprocess.run(["git", "init", "-q", str(s.project.path)], check=True)  # a project is one
    first = subprocess.Popen(
        [sys.executable, "-c", IMPORT, str(s.project.path), "60"],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(tmp_path / "cache-one"),
    )
    second = None
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "held"
        second = subprocess.Popen(
            [sys.executable, "-c", IMPORT, str(s.project.path), "0"],
            stdout=subprocess.PIPE,
            text=True,
            env=_env(tmp_path / "cache-two"),
        )
        with contextlib.suppress(subprocess.TimeoutExpired):
            second.wait(timeout=3)
        assert second.returncode is None, "the second import did not wait for the first"
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert second.stdout is not None and second.stdout.readline().strip() == "held"
        assert second.wait(timeout=30) == 0
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
