"""How fast patchkit is where people feel it, each figure beside its yardstick measured in the
same run: a bare Python start, and git apply of the same diffs.

    python scripts/bench_apply.py [--repeat 5] [--sizes 10,50,200,1000] [--venv DIR]

Every Python process runs in one fresh virtual environment made for the run (patchkit installed
into it from this checkout, with its dependencies, from the index pip is configured with), so
the bare start it is measured against pays for no ``.pth`` file of another installation
(``--venv DIR`` makes it there once and reuses it; it is refreshed from this checkout each run).

Every figure is a new process, as a shell or a container build runs it (output to a pipe, so no
terminal rendering), timed from start to exit: the median of --repeat runs of wall time, and of
CPU time (user + system, the process and its children), which a machine shared with others
disturbs far less. Peak memory is the largest resident set of the process or any child it waited
for (the rewrite workers).

Rows, on vLLM 0.19.0 (the locked release, fetched into a throwaway worktree of the cache):

- python -c pass: the interpreter alone.
- git apply: the diffs the shipped vllm-spark series makes (``patchkit show`` of each patch).
- warm apply: ``patchkit apply`` after ``reset``, replayed from the run recorded by an earlier
  apply (``ops/warm.py``).
- apply, no record: the same with no recorded run (the full path), the rewrite cache filled.
- cold apply: the full path with an empty rewrite cache: every rewritten file parsed by libcst.
- libcst floor: a process that imports libcst and parses and prints the largest file the series
  rewrites, as the cold apply must once: what no number of cores shortens.
- no-op status: ``patchkit status`` of the applied tree (replayed: an earlier status recorded).
- status, no record: the same on the full path.
- N diffs: ``patchkit apply`` after ``reset`` of a set of N synthetic one-line diffs, each on
  its own file of the tree, against one ``git apply`` of the same N files; "N diffs, no record"
  is the full path (the first apply of a series).
- port: ``patchkit port`` of one of those diffs against ``git apply -3`` of it.

The run uses a cache of its own (the releases linked from the real one) and bytecode files as an
installed package has them (PYTHONDONTWRITEBYTECODE is dropped for the timed processes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Run:
    wall_ms: float
    cpu_ms: float
    rss_mb: float


def run(cmd: Sequence[str], *, cwd: Path | None = None, env: dict[str, str]) -> Run:
    """One process, timed to its exit; its rusage (and its waited-for children's)."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - started) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.read().decode()}")
    return Run(wall, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024)


def repeat(n: int, timed: Callable[[], Run], after: Callable[[], object] = lambda: None) -> Run:
    runs = []
    for _ in range(n):
        runs.append(timed())
        after()
    return Run(
        statistics.median(r.wall_ms for r in runs),
        statistics.median(r.cpu_ms for r in runs),
        max(r.rss_mb for r in runs),
    )


@dataclass(frozen=True)
class Row:
    name: str
    figure: Run
    base_name: str
    base: Run
    target: str
    met: Callable[[Run, Run], bool]


class Bench:
    def __init__(self, work: Path, repeat_n: int, venv: Path | None) -> None:
        self.work, self.n = work, repeat_n
        real = Path(os.environ.get("PATCHKIT_CACHE") or _user_cache())
        self.cache = work / "cache"
        self.cache.mkdir()
        for shared in ("repos", "downloads"):  # releases are not downloaded again
            (real / shared).mkdir(parents=True, exist_ok=True)
            (self.cache / shared).symlink_to(real / shared)
        os.environ["PATCHKIT_CACHE"] = str(self.cache)
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env.pop("PYTHONPATH", None)
        self.py = fresh_venv(venv or work / "venv", self.work)

    def patchkit(self, *args: str, project: Path = ROOT) -> list[str]:
        return [self.py, "-m", "patchkit", *args, "--project", str(project)]

    def call(self, cmd: Sequence[str], cwd: Path | None = None) -> bytes:
        return subprocess.run(
            cmd, cwd=cwd or self.work, env=self.env, check=True, capture_output=True
        ).stdout

    def tree(self, name: str) -> Path:
        from patchkit.project.load import load_project
        from patchkit.upstream.sources import fetch

        return fetch(load_project(ROOT).entry("vllm"), into=self.work / name).path

    def timed(self, cmd: Sequence[str], cwd: Path | None = None) -> Callable[[], Run]:
        """``cmd`` timed; run in the work directory unless ``cwd`` says otherwise (never in
        this checkout: ``-m patchkit`` would import its sources, not the installed copy)."""
        return lambda: run(cmd, cwd=cwd or self.work, env=self.env)

    def forget(self) -> None:
        """Drop the recorded runs: the next apply or status takes the full path."""
        shutil.rmtree(self.cache / "warm", ignore_errors=True)


def settle() -> None:
    """Wait until the files just written are two seconds old: a run whose inputs changed more
    recently records nothing for a warm run (git's racily-clean rule)."""
    time.sleep(2.1)


def fresh_venv(path: Path, work: Path) -> str:
    """A virtual environment with patchkit installed from this checkout (a copy of its sources,
    so no build files land here), made once; patchkit refreshed in it on every run."""
    python = path / "bin" / "python"
    made = python.exists()
    if not made:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "patchkit", source / "patchkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    again = ["--no-deps", "--force-reinstall"] if made else []
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *again, str(source)], capture_output=True
    )
    if pip.returncode != 0:
        raise SystemExit(f"pip could not install patchkit into {path}:\n{pip.stderr.decode()}")
    return str(python)


def _user_cache() -> str:
    import platformdirs

    return platformdirs.user_cache_dir("patchkit")


def series_rows(b: Bench, tree: Path, bare: Run) -> list[Row]:
    from patchkit.project.load import load_project

    at = ["--target", "vllm", "--checkout", str(tree)]
    ids = [p.id for p in load_project(ROOT).patches("vllm")]
    diff = b"".join(b.call(b.patchkit("show", pid, "--checkout", str(tree))) for pid in ids)
    diff_file = b.work / "series.diff"
    diff_file.write_bytes(diff)
    restore = lambda: b.call(["git", "checkout", "-q", "--", "."], cwd=tree)  # noqa: E731
    git = repeat(b.n, b.timed(["git", "apply", str(diff_file)], cwd=tree), restore)
    reset = lambda: b.call(b.patchkit("reset", *at))  # noqa: E731
    settle()
    b.call(b.patchkit("apply", *at))  # fills the caches and records the run
    reset()
    warm = repeat(b.n, b.timed(b.patchkit("apply", *at)), reset)
    full = repeat(b.n, _full(b, b.timed(b.patchkit("apply", *at))), reset)

    def cold() -> Run:
        shutil.rmtree(b.cache / "rewrites", ignore_errors=True)
        b.forget()
        return run(b.patchkit("apply", *at), cwd=b.work, env=b.env)

    cold_run = repeat(b.n, cold, reset)
    b.call(b.patchkit("apply", *at))
    largest = max(
        (tree / name for name in b.call(["git", "diff", "--name-only"], cwd=tree).decode().split()),
        key=lambda path: path.stat().st_size,
    )
    parse = "import libcst, sys; libcst.parse_module(open(sys.argv[1], 'rb').read()).bytes"
    floor = repeat(b.n, b.timed([b.py, "-c", parse, str(largest)]))
    settle()  # the files apply wrote, then a status recorded for the no-op ones
    b.call(b.patchkit("status", *at))
    status = repeat(b.n, b.timed(b.patchkit("status", *at)))
    status_full = repeat(b.n, _full(b, b.timed(b.patchkit("status", *at))))
    reset()
    files = diff.count(b"\ndiff --git ") + diff.startswith(b"diff --git ")
    return [
        Row(
            "git apply (series)", git, "python -c pass", bare, f"({files} files)", lambda r, _: True
        ),
        Row("warm apply", warm, "python -c pass", bare, "<=3x", _ratio(3)),
        Row("apply, no record", full, "python -c pass", bare, "", lambda r, _: True),
        Row("cold apply", cold_run, "git apply", git, "<=1000 ms", lambda r, _: r.wall_ms <= 1000),
        Row(
            "libcst floor",
            floor,
            "cold apply",
            cold_run,
            f"({largest.name})",
            lambda r, _: True,
        ),
        Row("no-op status", status, "python -c pass", bare, "<=2.5x", _ratio(2.5)),
        Row("status, no record", status_full, "python -c pass", bare, "", lambda r, _: True),
    ]


def _full(b: Bench, timed: Callable[[], Run]) -> Callable[[], Run]:
    """``timed`` on the full path: no recorded run to replay."""

    def full() -> Run:
        b.forget()
        return timed()

    return full


def synthetic_diffs(tree: Path, n: int, into: Path) -> list[Path]:
    """One diff per file: a comment line after the first line of each of ``n`` Python files."""
    from patchkit.gitrepo import blob_id

    paths = sorted(p for p in tree.rglob("*.py") if ".git" not in p.parts)
    made: list[Path] = []
    for path in paths:
        if len(made) == n:
            break
        old = path.read_bytes()
        lines = old.splitlines(keepends=True)
        if len(lines) < 3 or not all(line.endswith(b"\n") for line in lines[:3]):
            continue
        new = b"".join([lines[0], b"# patchkit bench\n", *lines[1:]])
        rel = path.relative_to(tree).as_posix()
        body = b"".join([b" " + lines[0], b"+# patchkit bench\n", b" " + lines[1], b" " + lines[2]])
        mode = "100755" if path.stat().st_mode & 0o100 else "100644"  # as the tree has it
        text = (
            f"diff --git a/{rel} b/{rel}\nindex {blob_id(old)}..{blob_id(new)} {mode}\n"
            f"--- a/{rel}\n+++ b/{rel}\n@@ -1,3 +1,4 @@\n"
        ).encode() + body
        made.append(into / f"d{len(made):04d}.patch")
        made[-1].write_bytes(text)
    return made


def diff_project(diffs: Sequence[Path], into: Path) -> Path:
    """A patch repository with one set holding these diffs, locked like the real one."""
    patches = into / "patchsets" / "bench" / "patches"
    patches.mkdir(parents=True)
    shutil.copy(ROOT / "upstream.lock", into / "upstream.lock")
    ids = [d.stem for d in diffs]
    for d in diffs:
        shutil.copy(d, patches / d.name)
        (patches / f"{d.stem}.toml").write_text(
            f'id = "{d.stem}"\ntarget = "vllm"\ntitle = "bench"\nwhy = "a benchmark"\n'
        )
    series = ", ".join(f'"{i}"' for i in ids)
    (into / "patchsets" / "bench" / "patchset.toml").write_text(
        f'[patchset]\nname = "bench"\nversion = "1"\ntargets = ["vllm"]\nseries = [{series}]\n'
    )
    return into


def scaling_rows(b: Bench, tree: Path, sizes: Sequence[int]) -> list[Row]:
    (b.work / "diffs").mkdir()
    all_diffs = synthetic_diffs(tree, max(sizes), b.work / "diffs")
    rows = []
    restore = lambda: b.call(["git", "checkout", "-q", "--", "."], cwd=tree)  # noqa: E731
    at = ["--target", "vllm", "--checkout", str(tree)]
    for n in sizes:
        diffs = all_diffs[:n]
        project = diff_project(diffs, b.work / f"project-{n}")
        git = repeat(b.n, b.timed(["git", "apply", *map(str, diffs)], cwd=tree), restore)
        reset = lambda p=project: b.call(b.patchkit("reset", *at, project=p))  # noqa: E731
        apply = b.timed(b.patchkit("apply", *at, project=project))
        settle()  # the new project's files, and git's index after the checkouts
        full = repeat(b.n, _full(b, apply), reset)  # the last one records its run
        ours = repeat(b.n, apply, reset)
        rows.append(Row(f"{n} diffs", ours, "git apply", git, "<=3x", _ratio(3)))
        rows.append(Row(f"{n} diffs, no record", full, "git apply", git, "", lambda r, _: True))
    base = b.call(["git", "rev-parse", "HEAD"], cwd=tree).decode().strip()
    one = str(all_diffs[0])
    _undo(b, tree)()
    port_cmd = [b.py, "-m", "patchkit", "port", one, "--base", base, "--checkout", str(tree)]
    git3 = repeat(b.n, b.timed(["git", "apply", "-3", one], cwd=tree), _undo(b, tree))
    port = repeat(b.n, b.timed(port_cmd), _undo(b, tree))
    rows.append(Row("port of one diff", port, "git apply -3", git3, "<=100 ms", _ms(100)))
    return rows


def _undo(b: Bench, tree: Path) -> Callable[[], object]:
    def undo() -> None:
        b.call(["git", "reset", "-q"], cwd=tree)
        b.call(["git", "checkout", "-q", "--", "."], cwd=tree)
        b.call(["git", "update-index", "-q", "--refresh"], cwd=tree)
        state = Path(b.call(["git", "rev-parse", "--absolute-git-dir"], cwd=tree).decode().strip())
        shutil.rmtree(state / "patchkit", ignore_errors=True)

    return undo


def _ratio(times: float) -> Callable[[Run, Run], bool]:
    return lambda r, base: r.wall_ms <= times * base.wall_ms


def _cpu_ratio(r: Row) -> bool:
    """The row's target met by CPU time too (a ratio target: what a shared machine disturbs
    least); rows with a target in milliseconds say it by wall time alone."""
    if "x" not in r.target:
        return r.met(r.figure, r.base)
    times = float(r.target.removeprefix("<=").removesuffix("x"))
    return r.figure.cpu_ms <= times * max(r.base.cpu_ms, 1)


def _ms(limit: float) -> Callable[[Run, Run], bool]:
    return lambda r, base: r.wall_ms <= limit


def render(rows: Sequence[Row], bare: Run, n: int) -> str:
    head = (
        f"{'row':<22}{'wall ms':>9}{'cpu ms':>8}{'peak MB':>9}  {'vs':<15}"
        f"{'its ms':>8}{'x wall':>8}{'x cpu':>7}  {'target':<11}met  met (cpu)"
    )
    lines = [
        f"median of {n} runs, each a new process, in one fresh venv; bare start "
        f"{bare.wall_ms:.0f} ms wall, {bare.cpu_ms:.0f} ms CPU",
        head,
    ]
    for r in rows:
        lines.append(
            f"{r.name:<22}{r.figure.wall_ms:>9.0f}{r.figure.cpu_ms:>8.0f}{r.figure.rss_mb:>9.0f}"
            f"  {r.base_name:<15}{r.base.wall_ms:>8.0f}"
            f"{r.figure.wall_ms / r.base.wall_ms:>8.1f}{r.figure.cpu_ms / max(r.base.cpu_ms, 1):>7.1f}"
            f"  {r.target:<11}{'yes' if r.met(r.figure, r.base) else 'NO':<5}"
            f"{'yes' if _cpu_ratio(r) else 'NO'}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="10,50,200,1000", help="N of the N-diff rows")
    parser.add_argument("--venv", type=Path, help="the virtual environment to make and reuse")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="patchkit-bench-") as tmp:
        b = Bench(Path(tmp), args.repeat, args.venv)
        bare = repeat(b.n, b.timed([b.py, "-c", "pass"]))
        tree = b.tree("vllm")
        try:
            rows = series_rows(b, tree, bare)
            rows += scaling_rows(b, tree, [int(s) for s in args.sizes.split(",")])
        finally:
            from patchkit.upstream.sources import UpstreamRepo

            with UpstreamRepo("vllm") as repo:
                repo.remove_tree(tree)
    print(
        render(
            [Row("python -c pass", bare, "python -c pass", bare, "", _ms(1e9)), *rows],
            bare,
            args.repeat,
        )
    )
    print(f"load average (1, 5, 15 min) before: {_load(load_before)}; after: {_load()}")
    return 0


def _load(found: tuple[float, float, float] | None = None) -> str:
    """The machine's load: figures taken while others run are slower, CPU time least so."""
    return " ".join(f"{x:.1f}" for x in found or os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
