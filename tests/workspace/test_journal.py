"""One writer per tree, and one journal for every writer: a command killed (SIGKILL) half-way
through its writes is rolled back by the next writer; a reader sees the tree as that roll-back
will leave it and says so; what a person changed after the crash (content or mode) is kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.errors import TreeBusy
from patchkit.gitrepo import GitRepo
from patchkit.project.lock import move_lock
from patchkit.project.writer import project_lock, project_tree
from patchkit.workspace.journal import journal_path
from patchkit.workspace.state import StateStore
from testing.builders import Scenario

ROOT = str(Path(__file__).resolve().parents[2])


def child_env(**extra: str) -> dict[str, str]:
    """The environment as the test set it up (its cache, its HOME), for a child patchkit."""
    return {**os.environ, "PYTHONPATH": ROOT, **extra}


FILES = {"a.txt": "a one\na two\n", "b.txt": "b one\nb two\n", "c.txt": "c one\n"}
PATCHED = {"a.txt": "a one\na TWO\n", "b.txt": "b one\nb TWO\n", "c.txt": "c ONE\n"}

# Runs a patchkit command in a child that SIGKILLs itself when it is about to write file
# number N (0-based) of a transaction: a crash at a chosen point, no test hook in patchkit.
KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from patchkit.workspace import txn
    limit, calls, real = int(sys.argv[1]), [0], txn._put_back
    def put_back(*args, **kw):
        if calls[0] == limit:
            os.kill(os.getpid(), signal.SIGKILL)
        calls[0] += 1
        return real(*args, **kw)
    txn._put_back = put_back
    from patchkit.cli import main
    sys.exit(main(sys.argv[2:]))
    """
)


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p", PATCHED)
    return s


def tree_args(s: Scenario) -> list[str]:
    return ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]


def killed(*args: str, after: int) -> None:
    """Run ``patchkit ARGS`` in a child killed as it writes file number ``after``."""
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(after), *args],
        capture_output=True,
        text=True,
        env=child_env(),
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    out = capsys.readouterr().out
    return dict(json.loads(out))  # the whole of stdout is one JSON document


def contents(s: Scenario) -> dict[str, str]:
    return {name: s.read(name).decode() for name in FILES}


# -- one writer at a time -----------------------------------------------------------------------
def test_a_second_writer_waits_then_refuses_naming_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = scenario(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from patchkit.workspace.locks import writing\n"
            "from patchkit.workspace.tree import checkout_tree\n"
            f"with writing(checkout_tree(__import__('pathlib').Path({str(s.root)!r}), 'demo'),"
            " 'apply'):\n"
            "    print('held', flush=True); time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("PATCHKIT_LOCK_TIMEOUT", "0.3")
        with pytest.raises(TreeBusy, match=rf"process {holder.pid} \(`apply`"):
            s.apply()
        assert contents(s) == FILES  # nothing was written
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert s.apply().written  # the kernel dropped the dead holder's lock


def test_two_applies_and_a_reset_at_once_leave_a_consistent_tree(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    env = child_env(PATCHKIT_LOCK_TIMEOUT="60")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "patchkit", verb, *tree_args(s)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for verb in ("apply", "apply", "reset", "apply")
    ]
    codes = [p.wait() for p in procs]
    assert codes == [0, 0, 0, 0], [p.stderr.read() for p in procs if p.stderr]
    assert contents(s) in (FILES, PATCHED)  # whichever ran last, never a mix
    assert s.apply() is not None and contents(s) == PATCHED
    s.reset()
    assert contents(s) == FILES


def test_git_status_in_a_read_never_writes_the_index(tmp_path: Path) -> None:
    """A reader's `git status` takes no optional lock (it would hold `index.lock` and make a
    concurrent fetch's checkout fail): the index is not rewritten by a read."""
    s = scenario(tmp_path)
    index = s.root / ".git" / "index"
    (s.root / "a.txt").touch()  # stale stat data: a plain `git status` would refresh the index
    time.sleep(1.1)
    before = index.stat().st_mtime_ns
    with GitRepo(s.root) as repo:
        repo.dirty_paths(["a.txt"])
    assert index.stat().st_mtime_ns == before


# -- a crash, and the next command --------------------------------------------------------------
@pytest.mark.parametrize("after", [1, 2])
def test_a_port_killed_mid_write_is_rolled_back_by_the_next_writer(
    tmp_path: Path, after: int
) -> None:
    s = scenario(tmp_path)
    diff = tmp_path / "port.diff"
    diff.write_bytes(s.upstream.diff_of(PATCHED))
    args = ["port", str(diff), "--base", s.base, "--checkout", str(s.root)]
    killed(*args, after=after)
    assert contents(s) != FILES  # the crash left a half-written tree
    assert main(["reset", *tree_args(s)]) == 0  # a writer with nothing of its own to do
    assert contents(s) == FILES  # the port was rolled back whole
    assert main(args) == 0
    assert contents(s) == PATCHED


def test_after_a_crash_status_says_what_is_pending_and_json_stays_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    killed("apply", *tree_args(s), after=2)
    status = cli_json(capsys, "status", *tree_args(s))
    assert "interrupted `patchkit apply`" in str(status["pending"])
    assert "next command that writes" in str(status["pending"])
    assert {p["state"] for p in status["patches"]} == {"not applied"}  # type: ignore[attr-defined]
    assert journal_path(StateStore(s.tree().state_dir)).exists()  # a reader changed nothing
    applied = cli_json(capsys, "apply", *tree_args(s))
    assert applied["recovered"]["command"] == "apply"  # type: ignore[index]
    assert contents(s) == PATCHED
    assert cli_json(capsys, "status", *tree_args(s))["pending"] is None


def test_an_edit_made_after_the_crash_is_kept_not_replaced(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    killed("apply", *tree_args(s), after=2)
    assert s.read("a.txt") == PATCHED["a.txt"].encode()  # written before the crash
    (s.root / "a.txt").write_text("my own edit\n")
    report = s.reset()
    assert s.read("a.txt") == b"my own edit\n"
    assert s.read("b.txt") == FILES["b.txt"].encode()
    assert report.recovered is not None and report.recovered.kept == ("a.txt",)


def test_a_mode_given_after_the_crash_is_kept(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    killed("apply", *tree_args(s), after=2)
    (s.root / "a.txt").chmod(0o755)
    report = s.reset()
    assert s.read("a.txt") == FILES["a.txt"].encode()
    assert os.access(s.root / "a.txt", os.X_OK)
    assert report.recovered is not None and report.recovered.modes_kept == ("a.txt",)


def test_reset_keeps_a_mode_the_user_gave_a_patched_file(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    s.apply()
    (s.root / "b.txt").chmod(0o755)
    report = s.reset()
    assert contents(s) == FILES
    assert os.access(s.root / "b.txt", os.X_OK) and report.modes_kept == ("b.txt",)


def test_a_rebase_killed_while_publishing_is_rolled_back_by_the_next_rebase(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "upstream.lock").write_text(
        '[targets.demo]\nrepository = "x"\nversion = "1.0"\ncommit = "' + "a" * 40 + '"\n'
    )
    (project / "one.patch").write_text("old one\n")
    (project / "two.patch").write_text("old two\n")
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    script = KILLER.replace("from patchkit.cli import main\nsys.exit(main(sys.argv[2:]))", "")
    script += textwrap.dedent(
        f"""
        from pathlib import Path
        from patchkit.project.lock import move_lock
        root = Path({str(project)!r})
        move_lock(root / "upstream.lock", "demo", version="1.1", commit="{"b" * 40}",
                  files={{root / "one.patch": b"new one\\n", root / "two.patch": b"new two\\n"}})
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "1"], capture_output=True, text=True, env=child_env()
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (project / "one.patch").read_bytes() == b"new one\n"  # half published
    with project_lock(project, command="rebase"):
        pass
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before
    assert not journal_path(StateStore(project_tree(project).state_dir)).exists()
    files = {project / "one.patch": b"new\n"}
    move_lock(project / "upstream.lock", "demo", version="1.1", commit="b" * 40, files=files)
    assert "1.1" in (project / "upstream.lock").read_text()


def test_a_damaged_saved_original_is_refused_not_restored(tmp_path: Path) -> None:
    from patchkit.errors import TreeError
    from patchkit.workspace.state import StateStore

    store = StateStore(tmp_path / "state")
    name = store.put(b"the original\n")
    assert store.get(name) == b"the original\n"
    (store.objects / name).write_bytes(b"the orig")  # cut short
    with pytest.raises(TreeError, match="damaged"):
        store.get(name)
