"""Stress patchkit on a real vLLM 0.19.0 tree: writers killed (SIGKILL) at random moments,
writers racing on one checkout, and fuzzed diffs; print ``trials / corrupt / crashed / silent``.

    python scripts/stress.py [--trials 60] [--seed 1] [--keep] [--two-caches]

The release is fetched through patchkit into its cache (once); each run works on a worktree
of its own in a temporary directory, never on the cache's shared tree. Three kinds of trial,
in turn:

- kill: ``patchkit apply`` (the shipped vllm-spark set), ``reset`` or ``port`` (a diff that
  touches a few hundred files) is killed after a random delay, or (half the time) as it is
  about to write a randomly chosen file of its transaction; then ``status --json`` must print one JSON document and ``reset`` must bring
  the tree back to the release exactly.
- race: two applies, a reset and a port at once on the checkout; each must end 0 or with a
  documented refusal, and ``reset`` must then bring the tree back exactly.
- fuzz: a diff made on the tree, mutated (truncated, lines dropped or doubled, counts, modes,
  paths, bytes), is ported: it must be refused with the tree untouched, or leave exactly what
  ``git apply`` (or GNU ``patch``, for a form git refuses) makes of it.

With ``--two-caches`` the writers use two different caches (``PATCHKIT_CACHE``) on the one
checkout: a killed writer with one, its recovery with the other; racing writers alternate. The
tree's lock and journal live in its git directory, so they must exclude each other all the same.

corrupt: the tree (or status's JSON) is wrong after recovery. crashed: exit 70 or a
traceback. silent: a command said it succeeded, but its result is not what it claims.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DOCUMENTED = {0, 2, 3, 4, 5, 6, 9}
# patchkit in a child that SIGKILLs itself as it is about to write file number N of a write
KILL_AT_WRITE = """
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
PORT_FILES = 300


@dataclass
class Tally:
    trials: int = 0
    corrupt: int = 0
    crashed: int = 0
    silent: int = 0
    notes: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)  # trials of each kind (kill apply, ...)

    def count(self, kind: str) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def bad(self, kind: str, what: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        self.notes.append(f"{kind}: {what}")


@dataclass
class Bench:
    tree: Path
    work: Path
    base: str
    diff: Path  # a diff touching many files (for kills among the writes)
    small: bytes  # a diff of a few real edits (the fuzzing's starting point)
    env: dict[str, str]
    envs: list[dict[str, str]] = field(default_factory=list)  # writers' environments (caches)
    ported: dict[str, bytes | None] = field(default_factory=dict)  # the tree after `diff`

    def patchkit(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "patchkit", *args]

    def tree_args(self) -> list[str]:
        return ["--target", "vllm", "--project", str(ROOT), "--checkout", str(self.tree)]


def git(tree: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, check=check)
    return out.stdout.decode(errors="replace")


def dirty(tree: Path) -> str:
    return git(tree, "status", "--porcelain", "--untracked-files=all")


def pristine(bench: Bench) -> None:
    """The worktree back at the release, by git alone (between trials)."""
    git(bench.tree, "checkout", "-q", "-f", bench.base)
    git(bench.tree, "clean", "-qfdx")
    state = Path(git(bench.tree, "rev-parse", "--absolute-git-dir").strip()) / "patchkit"
    shutil.rmtree(state, ignore_errors=True)


def snapshot(tree: Path) -> dict[str, bytes | None]:
    """Every changed or new file (by git status), with its bytes and mode bit."""
    out = git(tree, "status", "--porcelain", "-z", "--untracked-files=all")
    files: dict[str, bytes | None] = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        path = tree / entry[3:]
        if path.is_file():
            files[entry[3:]] = path.read_bytes() + (b"+x" if os.access(path, os.X_OK) else b"")
        else:
            files[entry[3:]] = None
    return files


# -- setting up -------------------------------------------------------------------------------
def make_bench(work: Path) -> Bench:
    from patchkit.project.load import load_project
    from patchkit.upstream.sources import fetch

    entry = load_project(ROOT).entry("vllm")
    tree = fetch(entry, into=work / "vllm").path  # the release from patchkit's cache
    base = git(tree, "rev-parse", "HEAD").strip()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATCHKIT_LOCK_TIMEOUT": "2"}
    patched = _patched_paths()
    py = sorted(
        p
        for p in tree.rglob("*.py")
        if ".git" not in p.parts and p.relative_to(tree).as_posix() not in patched
    )[:PORT_FILES]
    for path in py:
        path.write_bytes(path.read_bytes() + b"# stress: a line at the end\n")
    diff = work / "many.diff"
    diff.write_bytes(
        subprocess.run(
            ["git", "-C", str(tree), "diff", "--full-index"], capture_output=True, check=True
        ).stdout
    )
    git(tree, "checkout", "-q", "-f", base)
    small = _small_diff(tree, base)
    return Bench(tree, work, base, diff, small, env)


def _patched_paths() -> set[str]:
    """The files the shipped vLLM set changes: the many-file diff keeps clear of them, so a port
    and an apply that both succeed in a race are both undone exactly by reset and git."""
    from patchkit.engine.series import touched_paths
    from patchkit.project.load import load_project

    project = load_project(ROOT)
    return {path for meta in project.listed("vllm") for path in touched_paths(meta)}


def _small_diff(tree: Path, base: str) -> bytes:
    edits = {
        "vllm/envs.py": lambda t: t.replace("import os\n", "import os\nimport sys\n", 1),
        "vllm/version.py": lambda t: t + "# stress\n",
        "setup.py": lambda t: t.replace("\n\n", "\n\n# stress\n", 1),
    }
    for name, edit in edits.items():
        path = tree / name
        if path.is_file():
            path.write_text(edit(path.read_text()))
    (tree / "vllm" / "stress_new.py").write_text("STRESS = 1\n")
    git(tree, "add", "-N", "vllm/stress_new.py")
    out = subprocess.run(["git", "-C", str(tree), "diff", "--full-index"], capture_output=True)
    git(tree, "reset", "-q")
    git(tree, "checkout", "-q", "-f", base)
    git(tree, "clean", "-qfd")
    return out.stdout


# -- the trials -------------------------------------------------------------------------------
def run(
    bench: Bench, args: list[str], tally: Tally, what: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        bench.patchkit(*args), capture_output=True, env=env or bench.env, cwd=ROOT
    )
    err = proc.stderr.decode(errors="replace")
    if proc.returncode == 70 or "Traceback" in err:
        tally.bad("crashed", f"{what}: exit {proc.returncode}: {err[-300:]}")
    elif proc.returncode not in DOCUMENTED:
        tally.bad("crashed", f"{what}: undocumented exit {proc.returncode}: {err[-300:]}")
    return proc


def killed(bench: Bench, args: list[str], delay: float) -> None:
    proc = subprocess.Popen(
        bench.patchkit(*args),
        env=bench.envs[0],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def recovered(bench: Bench, tally: Tally, what: str) -> None:
    """After a kill or a race: status prints JSON; reset brings the release back exactly (run
    with the last cache: with --two-caches, another than the killed writer's)."""
    env = bench.envs[-1]
    status = run(bench, ["status", *bench.tree_args(), "--json"], tally, f"{what}: status", env)
    try:
        if json.loads(status.stdout).get("pending"):
            tally.count("killed mid-write (journal left)")
    except ValueError:
        tally.bad("corrupt", f"{what}: status --json printed no JSON: {status.stdout[:200]!r}")
    reset = run(bench, ["reset", *bench.tree_args()], tally, f"{what}: reset", env)
    left = snapshot(bench.tree)  # nothing, or the whole port (reset undoes apply, not port)
    if reset.returncode != 0 or left not in ({}, bench.ported):
        names = sorted(set(left) ^ set(bench.ported)) if left else []
        tally.bad(
            "corrupt",
            f"{what}: after reset (exit {reset.returncode}): {len(left)} files changed, "
            f"{len(bench.ported)} if the port was whole; differing: {names[:5]}",
        )


def kill_trial(bench: Bench, rng: random.Random, tally: Tally, timing: dict[str, float]) -> None:
    verb = rng.choice(["apply", "reset", "port"])
    if verb == "reset":  # a reset has something to do only on a patched tree
        run(bench, ["apply", *bench.tree_args()], tally, "kill: apply before reset")
    args = (
        ["port", str(bench.diff), "--base", bench.base, "--checkout", str(bench.tree)]
        if verb == "port"
        else [verb, *bench.tree_args()]
    )
    if rng.random() < 0.5:  # a random moment: mostly before or after the writes
        delay = rng.uniform(0.2, timing[verb])
        tally.count(f"kill {verb}")
        killed(bench, args, delay)
        recovered(bench, tally, f"kill {verb} after {delay:.2f}s")
        return
    nth = rng.randrange(PORT_FILES if verb == "port" else 4)  # a random point among the writes
    tally.count(f"kill {verb} at a write")
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AT_WRITE, str(nth), *args],
        env=bench.envs[0],
        cwd=ROOT,
        capture_output=True,
    )
    if proc.returncode not in (-signal.SIGKILL, 0):
        tally.bad("crashed", f"kill {verb} at write {nth}: exit {proc.returncode}")
    recovered(bench, tally, f"kill {verb} at write {nth}")


def race_trial(bench: Bench, rng: random.Random, tally: Tally) -> None:
    verbs = ["apply", "apply", "reset", "port"]
    rng.shuffle(verbs)
    tally.count("race")
    procs = []
    for n, verb in enumerate(verbs):
        args = (
            ["port", str(bench.diff), "--base", bench.base, "--checkout", str(bench.tree)]
            if verb == "port"
            else [verb, *bench.tree_args()]
        )
        procs.append(
            (
                verb,
                subprocess.Popen(
                    bench.patchkit(*args),
                    env=bench.envs[n % len(bench.envs)],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                ),
            )
        )
    for verb, proc in procs:
        err = proc.communicate()[1].decode(errors="replace")
        if proc.returncode == 70 or "Traceback" in err or proc.returncode not in DOCUMENTED:
            tally.bad("crashed", f"race {verb}: exit {proc.returncode}: {err[-300:]}")
    status = run(bench, ["status", *bench.tree_args(), "--json"], tally, "race: status")
    states = {p["state"] for p in json.loads(status.stdout or b"{}").get("patches", [])}
    if "applied" in states and "modified since apply" in states:
        tally.bad("silent", f"race: status mixes applied and modified: {states}")
    changed = snapshot(bench.tree)
    if not states & {"applied", "modified since apply"} and changed not in ({}, bench.ported):
        tally.bad("silent", f"race: status says nothing applied, {len(changed)} files changed")
    if "modified since apply" in states:  # the port wrote over applied files: reset refuses
        run(bench, ["reset", *bench.tree_args(), "--force"], tally, "race: reset --force")
    recovered(bench, tally, f"race {verbs}")


def fuzz_trial(bench: Bench, rng: random.Random, tally: Tally) -> None:
    tally.count("fuzz")
    data = bench.small
    for _ in range(rng.randint(1, 3)):
        data = _mutate(rng, data)
    patch = bench.work / "fuzzed.diff"
    patch.write_bytes(data)
    args = ["port", str(patch), "--base", bench.base, "--checkout", str(bench.tree)]
    proc = run(bench, args, tally, "fuzz: port")
    got = snapshot(bench.tree)
    pristine(bench)
    if proc.returncode != 0:
        if got:
            tally.bad("corrupt", f"fuzz: refused (exit {proc.returncode}) but changed {list(got)}")
        return
    expected = _expected(bench, patch)
    pristine(bench)
    if got != expected:
        tally.bad("silent", f"fuzz: port said done, tree differs from git apply: {list(got)}")


def _mutate(rng: random.Random, data: bytes) -> bytes:
    """One mutation of the fuzz tests' own kinds (tests/ops/test_fuzz_diffs.py)."""
    from tests.ops import test_fuzz_diffs as fz

    makers = [
        lambda: fz.truncate(rng.randrange(10_000)),
        lambda: fz.drop_line(rng.randrange(500)),
        lambda: fz.double_line(rng.randrange(500)),
        lambda: fz.hunk_op(rng.randrange(50), rng.random() < 0.5),
        lambda: fz.count(rng.randrange(200), rng.randrange(99_999)),
        lambda: fz.mode(rng.choice(["999999", "100644", "120000", "160000", "4755"])),
        lambda: fz.path(rng.randrange(50), rng.choice(["vllm/envs.py", "setup.py"])),
        lambda: fz.encode(rng.randrange(20)),
    ]
    return rng.choice(makers)()(data)


def _expected(bench: Bench, patch: Path) -> dict[str, bytes | None] | None:
    for command in (
        ["git", "apply", str(patch)],
        ["patch", "-p1", "-F0", "-s", "-f", "--no-backup-if-mismatch", "-i", str(patch)],
    ):
        if shutil.which(command[0]) is None:
            continue
        if subprocess.run(command, cwd=bench.tree, capture_output=True).returncode == 0:
            return snapshot(bench.tree)
        pristine(bench)
    return None


def timings(bench: Bench, tally: Tally) -> dict[str, float]:
    """How long each writer runs uninterrupted: the range the kills are drawn from."""
    found = {}
    for verb, args in (
        ("apply", ["apply", *bench.tree_args()]),
        ("reset", ["reset", *bench.tree_args()]),
        ("port", ["port", str(bench.diff), "--base", bench.base, "--checkout", str(bench.tree)]),
    ):
        started = time.perf_counter()
        proc = run(bench, args, tally, f"timing {verb}")
        found[verb] = max(time.perf_counter() - started, 0.5)
        if proc.returncode != 0:
            sys.exit(f"{verb} failed on a clean tree: {proc.stderr.decode()[-800:]}")
        if verb == "port":
            bench.ported = snapshot(bench.tree)
    pristine(bench)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--two-caches", action="store_true", help="writers use two different caches"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="patchkit-stress-"))
    tally = Tally()
    bench = make_bench(work)
    bench.envs = [bench.env]
    if args.two_caches:
        bench.envs.append({**bench.env, "PATCHKIT_CACHE": str(work / "second-cache")})
    try:
        timing = timings(bench, tally)
        print("uninterrupted: " + ", ".join(f"{k} {v:.1f}s" for k, v in timing.items()))
        kinds = ["kill", "kill", "race", "fuzz"]
        for trial in range(args.trials):
            kind = kinds[trial % len(kinds)]
            pristine(bench)
            before = len(tally.notes)
            if kind == "kill":
                kill_trial(bench, rng, tally, timing)
            elif kind == "race":
                race_trial(bench, rng, tally)
            else:
                fuzz_trial(bench, rng, tally)
            tally.trials += 1
            for note in tally.notes[before:]:
                print(f"  trial {trial} ({kind}): {note}", flush=True)
    finally:
        _cleanup(bench, work, args.keep)
    print("by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.kinds.items())))
    print(
        f"trials / corrupt / crashed / silent: "
        f"{tally.trials} / {tally.corrupt} / {tally.crashed} / {tally.silent}"
    )
    return 0 if tally.corrupt == tally.crashed == tally.silent == 0 else 1


def _cleanup(bench: Bench, work: Path, keep: bool) -> None:
    if keep:
        print(f"kept {work}")
        return
    from patchkit.upstream.sources import UpstreamRepo

    with UpstreamRepo("vllm") as repo:
        repo.remove_tree(bench.tree)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
