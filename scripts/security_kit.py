#!/usr/bin/env python3
"""What the hostile cases of ``scripts/security.py`` (and ``security_sweep.py``) share: a case
and its runs, the small scenario they are built on, and running each as a real
``python3 -m patchkit ...`` process that must not crash, hang, run a planted command or write
outside its root."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testing.builders import Scenario  # noqa: E402
from testing.terminal import on_a_terminal  # noqa: E402

CRASH = 70


@dataclass
class Run:
    """One command of a case: its argv after ``python3 -m patchkit`` and what may come back."""

    argv: list[str]
    codes: tuple[int, ...]  # the exit codes the README documents for this input
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    limit_file_size: int | None = None  # RLIMIT_FSIZE in bytes: a disk that refuses to grow
    check: Callable[[], str | None] | None = None  # a further check: None, or what went wrong


@dataclass
class Case:
    kind: str  # the class of issue 24
    name: str
    build: Callable[[Path], list[Run]]  # makes the inputs under a fresh directory
    fast: bool = False  # one of the quick cases the test suite runs (--fast)


# -- helpers -------------------------------------------------------------------------------------
def scenario(tmp: Path, files: dict[str, str | bytes] | None = None) -> Scenario:
    return Scenario(tmp / "work", files or {"a.txt": "a one\na two\n"})


def where(s: Scenario) -> list[str]:
    return ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]


def marker(tmp: Path) -> Path:
    return tmp / "PLANTED-COMMAND-RAN"


def plant(tmp: Path) -> str:
    """A shell command that, if anything runs it, leaves the marker."""
    return f"touch {marker(tmp)}"


def meta_line(s: Scenario, patch_id: str, line: str) -> None:
    meta = s.set_root / "patches" / f"{patch_id}.toml"
    meta.write_text(line + "\n" + meta.read_text())


def gh_run(
    tmp: Path, script: str, codes: tuple[int, ...] = (3,), timeout: float = 60.0
) -> list[Run]:
    """``upstream-check`` of a patch naming a GitHub issue, with a ``gh`` on ``PATH`` whose
    ``pr`` commands run the shell ``script`` (``gh auth`` answers logged in)."""
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    meta_line(s, "p1", 'issues = ["https://github.com/o/r/issues/1"]')
    lock = s.lock_path
    lock.write_text(lock.read_text().replace("https://example.com/demo", "https://github.com/o/r"))
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\ncase "$1" in auth) exit 0;; pr) {script};; esac\n')
    gh.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PATCHKIT_GH_TIMEOUT": "3"}
    argv = ["upstream-check", "--project", str(s.project.path), "--dry-run"]
    return [Run(argv, codes, env, timeout=timeout)]


def absent(path: Path) -> Callable[[], str | None]:
    return lambda: f"{path} was written" if path.exists() or path.is_symlink() else None


# -- running --------------------------------------------------------------------------------------
def _env(tmp: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        PYTHONPATH=str(ROOT),
        PATCHKIT_CACHE=str(tmp / "cache"),
        GIT_CONFIG_NOSYSTEM="1",
        PATCHKIT_LOCK_TIMEOUT="5",
    )
    env.update(extra)
    return env


def _execute(run: Run, tmp: Path) -> tuple[int | None, str]:
    argv = [sys.executable, "-m", "patchkit", *run.argv]
    env = _env(tmp, run.env)
    if env.pop("PATCHKIT_TEST_PTY", None):
        code, out = on_a_terminal(argv, env, run.timeout)
        return code, out[-400:] if code is not None else "no answer"

    def limit() -> None:
        if run.limit_file_size is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_FSIZE, (run.limit_file_size, run.limit_file_size))

    try:
        proc = subprocess.run(
            argv,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=run.timeout,
            preexec_fn=limit,
            cwd=tmp,
        )
    except subprocess.TimeoutExpired:
        return None, f"no answer after {run.timeout:.0f} s"
    return proc.returncode, (proc.stderr or proc.stdout)[-400:]


def home_for_git(tmp: Path) -> None:
    """One HOME for every case (a git identity), set before any case runs: cases run in
    threads, and git reads HOME from this process's environment."""
    home = tmp / "home"
    home.mkdir()
    os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1")
    for key in [k for k in os.environ if k.startswith("GIT_") and k != "GIT_CONFIG_NOSYSTEM"]:
        del os.environ[key]
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Person\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
    )


def _sentinel(tmp: Path) -> dict[str, tuple[bytes, int]]:
    found = {}
    for path in sorted((tmp / "sentinel").rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(st.st_mode) else b""
        found[str(path)] = (data, st.st_mode)
    return found


def run_case(case: Case) -> str | None:
    """None when the case held, else what went wrong."""
    tmp = Path(tempfile.mkdtemp(prefix="patchkit-security-"))
    try:
        (tmp / "sentinel").mkdir()
        (tmp / "sentinel" / "keep.txt").write_text("nothing may change me\n")
        runs = case.build(tmp)
        before = _sentinel(tmp)
        for run in runs:
            start = time.monotonic()
            code, said = _execute(run, tmp)
            name = f"`patchkit {run.argv[0]}`"
            if code is None:
                return f"{name}: hung ({said})"
            if code == CRASH or code not in run.codes:
                return f"{name}: exit {code}, documented {run.codes}: {said.strip()[-300:]}"
            if "PATCHKIT_TEST_PTY" not in run.env and any(c in said for c in "\x1b\x07\r"):
                return f"{name}: printed raw control characters: {said.strip()[-200:]!r}"
            if marker(tmp).exists():
                return f"{name}: a planted command ran"
            if _sentinel(tmp) != before:
                return f"{name}: wrote outside the root (the sentinel directory changed)"
            problem = run.check() if run.check else None
            if problem:
                return f"{name}: {problem}"
            if time.monotonic() - start > run.timeout:
                return f"{name}: took over {run.timeout:.0f} s"
        return None
    except Exception as exc:  # a case that cannot even be built counts as failed
        return f"building the case failed: {type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def new_file_diff(path: str, content: str) -> bytes:
    lines = content.splitlines(keepends=True)
    body = "".join(f"+{line}" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    ).encode()


def edit_diff(path: str, old: str, new: str) -> bytes:
    import difflib

    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return (f"diff --git a/{path} b/{path}\n" + "".join(lines)).encode()
