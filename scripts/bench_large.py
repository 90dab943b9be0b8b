"""Time `patchkit port` of a large diff (about 30 MB) against `git apply` of the same diff, in one
run; print both figures and the ratio.

    python scripts/bench_large.py [--mb 30] [--shape files|onefile]

A synthetic git repository is made in a temporary directory (``files``: many files of ~1,500
lines; ``onefile``: one file of as many lines as it takes), every tenth line is changed, and
``git diff --full-index`` of that is the diff. Both tools then apply it to a clean checkout at
the base commit, each as a process (start-up included), each checked to leave the same tree.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINES_PER_FILE = 1500


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return out.stdout.decode()


def _content(seed: int, lines: int, edited: bool) -> bytes:
    rows = []
    for i in range(lines):
        text = f"    value_{seed}_{i} = compute({i}, {seed})  # line {i} of file {seed}\n"
        if edited and i % 10 == 5:
            text = f"    value_{seed}_{i} = compute({i}, {seed}, fast=True)  # changed\n"
        rows.append(text)
    return "".join(rows).encode()


def make_repo(where: Path, megabytes: float, shape: str) -> tuple[Path, Path, str, str]:
    """A repository at its base commit, the diff, the base commit id and the edited tree id."""
    repo = where / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    # one file's diff is about 40% of its size (a hunk of 7 lines for every 10 lines)
    per_file = len(_content(0, LINES_PER_FILE, False)) * 0.75
    if shape == "onefile":
        names, lines = ["big/module.py"], int(LINES_PER_FILE * megabytes * 1e6 / per_file)
    else:
        count = max(1, int(megabytes * 1e6 / per_file))
        names, lines = [f"pkg{i // 100}/mod{i}.py" for i in range(count)], LINES_PER_FILE
    for seed, name in enumerate(names):
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_content(seed, lines, False))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    for seed, name in enumerate(names):
        (repo / name).write_bytes(_content(seed, lines, True))
    diff = where / "large.diff"
    out = subprocess.run(["git", "-C", str(repo), "diff", "--full-index"], capture_output=True)
    diff.write_bytes(out.stdout)
    expected = snapshot(repo)
    return repo, diff, base, expected


def snapshot(repo: Path) -> str:
    """The tree id of the working tree as it is; then back to the base commit."""
    git(repo, "add", "-A")
    tree = git(repo, "write-tree").strip()
    git(repo, "reset", "-q", "--hard")
    return tree


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} failed ({out.returncode}):\n{out.stderr.decode()[-2000:]}")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=30.0, help="size of the diff, in MB")
    parser.add_argument("--shape", choices=("files", "onefile"), default="files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="patchkit-bench-large-") as tmp:
        repo, diff, base, expected = make_repo(Path(tmp), args.mb, args.shape)
        size = diff.stat().st_size / 1e6
        git_s, git_cpu = timed(["git", "apply", str(diff)], repo)
        same_git = snapshot(repo) == expected
        cmd = [sys.executable, "-m", "patchkit", "port", str(diff), "--base", base]
        patchkit_s, patchkit_cpu = timed([*cmd, "--checkout", str(repo)], ROOT)
        same = snapshot(repo) == expected and same_git
    print(f"diff: {size:.1f} MB ({args.shape})")
    print(f"git apply:     {git_s:8.2f} s wall {git_cpu:8.2f} s cpu")
    print(f"patchkit port: {patchkit_s:8.2f} s wall {patchkit_cpu:8.2f} s cpu")
    print(
        f"ratio:         {patchkit_s / git_s:8.1f}x git apply (wall), "
        f"{patchkit_cpu / max(git_cpu, 1e-9):.1f}x (cpu)"
    )
    print(f"same tree as git apply: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
