"""The cases and tools of scripts/bench_port.py: backports mined from a repository's history,
and each tool run on a fresh copy of a case's target files, scored against the shipped backport.

A case is a commit C whose message says ``(cherry picked from commit X)``: the diff X^..X is
ported onto C^, and the truth is C's content of every path the diff touches. The repository is
read, never written: each tool runs in a fresh directory whose git directory borrows the
repository's objects (alternates) and holds only the touched files in its work tree.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PATCHKIT_ROOT = [ROOT]  # the tree whose patchkit is measured (--patchkit-root)
TRAILER = re.compile(r"cherry[- ]picked from commit ([0-9a-f]{7,40})")
TOOLS = ("patchkit", "git apply", "git apply -3", "patch --fuzz=2")
BASELINES = TOOLS[1:]


@dataclass(frozen=True)
class Case:
    repo: str  # the repository's git directory
    backport: str  # C: the shipped backport commit on the release branch
    original: str  # X: the commit C was cherry-picked from
    paths: tuple[str, ...]  # every path X touches (both sides of a rename)
    subject: str = ""

    @property
    def name(self) -> str:
        return f"{Path(self.repo).parent.name}:{self.backport[:10]}"


@dataclass(frozen=True)
class Run:
    tool: str
    score: str  # exact | wrong | failed
    seconds: float
    note: str = ""  # the tool's outcome or first line of its complaint
    placement: float = 0.0  # patchkit (api): seconds in the engine alone (run_patch), in-process


@dataclass
class Result:
    case: Case
    runs: dict[str, Run] = field(default_factory=dict)


# -- git ---------------------------------------------------------------------------------------
def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return env | {"GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def git(repo: Path | str, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, env=_env(), check=False
    )
    if check and done.returncode:
        raise RuntimeError(f"git {' '.join(args)} in {repo}: {done.stderr.decode().strip()}")
    return done.stdout.decode(errors="replace")


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def blobs_at(repo: Path | str, commit: str, paths: tuple[str, ...]) -> dict[str, str | None]:
    """path -> "MODE BLOB" at ``commit`` (None: absent), so a type or mode change counts."""
    found: dict[str, str | None] = dict.fromkeys(paths)
    out = git(repo, "ls-tree", "-r", "-z", commit, "--", *paths)
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        if path in found:
            mode, _kind, blob = meta.split()
            found[path] = f"{mode} {blob}"
    return found


# -- mining ------------------------------------------------------------------------------------
def mine(repo: Path, *, branches: list[str], limit: int, max_files: int = 20) -> list[Case]:
    """Up to ``limit`` backport cases, newest first, from ``branches`` (default: every branch)."""
    refs = branches or ["--branches"]
    log = git(repo, "log", "--no-merges", "--format=%H %P%x00%s%x00%B%x1e", "-E",
              "--grep=cherry[- ]picked from commit", *refs)  # fmt: skip
    cases: list[Case] = []
    seen: set[str] = set()
    for record in filter(None, (r.strip("\n") for r in log.split("\x1e"))):
        case = _candidate(repo, record, seen, max_files)
        if case is not None:
            cases.append(case)
            if len(cases) >= limit:
                break
    return cases


def _candidate(repo: Path, record: str, seen: set[str], max_files: int) -> Case | None:
    heads, subject, body = record.split("\0", 2)
    commit, *parents = heads.split()
    picks = TRAILER.findall(body)
    if len(parents) != 1 or not picks:
        return None
    original = git(repo, "rev-parse", "-q", "--verify", f"{picks[-1]}^{{commit}}", check=False)
    original = original.strip()
    if not original or original in seen or original == commit:
        return None
    if len(git(repo, "rev-list", "--parents", "-n1", original).split()) != 2:
        return None  # a merge or a root commit: no single base
    paths = _touched(repo, original, max_files)
    if paths is None or _touched(repo, commit, max_files) != paths:
        return None
    if blobs_at(repo, f"{original}^", paths) == blobs_at(repo, parents[0], paths):
        return None  # the release branch had the same files: every tool is trivially right
    seen.add(original)
    return Case(str(repo), commit, original, paths, subject)


def _touched(repo: Path, commit: str, max_files: int) -> tuple[str, ...] | None:
    """The paths ``commit`` touches, sorted; None when binary or over ``max_files``."""
    out = git(repo, "diff", "--numstat", "--no-renames", "-z", f"{commit}^", commit)
    paths: list[str] = []
    for entry in filter(None, out.split("\0")):
        added, _deleted, path = entry.split("\t", 2)
        if added == "-":
            return None
        paths.append(path)
    return tuple(sorted(paths)) if 0 < len(paths) <= max_files else None


# -- one tool on one case ----------------------------------------------------------------------
def prepare(case: Case, dest: Path) -> None:
    """A fresh git repository at ``dest`` at the case's target commit, borrowing the case
    repository's objects, with only the touched files in its work tree."""
    git(dest.parent, "init", "-q", dest.name)
    objects = Path(case.repo) / "objects"
    if not objects.is_dir():
        objects = Path(case.repo) / ".git" / "objects"
    (dest / ".git/objects/info/alternates").write_text(f"{objects.resolve()}\n")
    target = f"{case.backport}^"
    git(dest, "read-tree", target)
    git(dest, "update-ref", "--no-deref", "HEAD", git(dest, "rev-parse", target).strip())
    present = [p for p, b in blobs_at(dest, target, case.paths).items() if b]
    if present:
        git(dest, "checkout-index", "-u", "--", *present)


def score(case: Case, work: Path, truth: dict[str, str | None], ok: bool) -> str:
    if not ok:
        return "failed"
    same = all(_disk_blob(work / path) == want for path, want in truth.items())
    return "exact" if same else "wrong"


def _disk_blob(path: Path) -> str | None:
    """ "MODE BLOB" as git would store ``path`` (a symlink: its target, not what it points to)."""
    if path.is_symlink():
        return f"120000 {blob_id(os.readlink(path).encode())}"
    if not path.is_file():
        return None
    mode = "100755" if path.stat().st_mode & 0o100 else "100644"
    return f"{mode} {blob_id(path.read_bytes())}"


def _process(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            args, cwd=cwd, capture_output=True, env=_env() | (env or {}), check=False
        )
    except FileNotFoundError:
        return False, f"{args[0]} is not installed"
    lines = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
    return done.returncode == 0, (lines[0] if lines else "")[:200]


def run_git_apply(work: Path, patch: Path, case: Case) -> tuple[bool, str]:
    return _process(["git", "apply", str(patch)], work)


def run_git_apply_3(work: Path, patch: Path, case: Case) -> tuple[bool, str]:
    return _process(["git", "apply", "-3", str(patch)], work)


def run_gnu_patch(work: Path, patch: Path, case: Case) -> tuple[bool, str]:
    args = ["patch", "-p1", "--fuzz=2", "-f", "-N", "--no-backup-if-mismatch", "-i", str(patch)]
    return _process(args, work)


def run_patchkit_cli(work: Path, patch: Path, case: Case) -> tuple[bool, str]:
    base = f"{case.original}^"
    args = [sys.executable, "-m", "patchkit", "port", str(patch), "--base", base]
    return _process(args, work, {"PYTHONPATH": str(PATCHKIT_ROOT[0])})


PLACEMENT = [0.0]  # seconds the last patchkit (api) run spent in the engine's run_patch


def _timed(run_patch: Callable) -> Callable:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return run_patch(*args, **kwargs)
        finally:
            PLACEMENT[0] += time.perf_counter() - started

    return timed


def run_patchkit_api(work: Path, patch: Path, case: Case) -> tuple[bool, str]:
    port, error = _patchkit_port()
    module = sys.modules[port.__module__]
    plain = getattr(module, "run_patch", None)
    PLACEMENT[0] = 0.0
    if plain is not None:
        module.run_patch = _timed(plain)  # type: ignore[attr-defined]
    try:
        return _port_api(port, error, work, patch, case)
    finally:
        if plain is not None:
            module.run_patch = plain  # type: ignore[attr-defined]


def _port_api(
    port: Callable, error: type[Exception], work: Path, patch: Path, case: Case
) -> tuple[bool, str]:
    try:
        report = port(patch_file=patch, base_commit=f"{case.original}^", checkout=work)
    except error as exc:
        return False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    except Exception as exc:  # a crash is a failure of the tool, and the table says so
        return False, f"crash {type(exc).__name__}: {exc}"[:200]
    return succeeded(report), why(report) + unplaced(report)


def succeeded(report: Any) -> bool:
    """What the command line's exit 0 means: the port wrote the change (``partly-upstreamed``
    included: the rest applied over what upstream had); ``outcome.ok`` alone would score a
    partly upstreamed port failed. Trees before PortReport.succeeded: ``outcome.ok``."""
    return bool(getattr(report, "succeeded", report.outcome.ok))


UNPLACED = " [SUCCESS WITH A CONFLICTED OR UNPLACED HUNK]"


def unplaced(report: Any) -> str:
    """A mark on a success that leaves a hunk in conflict, unplaced or conflicted in a file
    (issue 27: a hunk that conflicts is never part of a success); empty otherwise."""
    result = report.result
    marks = getattr(result, "placements", ())
    bad = getattr(result, "details", ()) or getattr(result, "conflicted", ())
    bad = bad or any(str(getattr(m.rule, "value", m.rule)) == "none" for m in marks)
    return UNPLACED if succeeded(report) and bad else ""


def why(report: Any) -> str:
    """The outcome, and for a refusal where and why (the first detail patchkit gives)."""
    outcome = report.outcome
    details = getattr(report.result, "details", ()) if not succeeded(report) else ()
    if not details:
        return str(outcome.value)
    first = details[0]
    return f"{outcome.value}: {first.path} {first.hunk.split(' @@')[0]}: {first.reason}"[:300]


def _patchkit_port() -> tuple[Callable, type[Exception]]:
    if str(PATCHKIT_ROOT[0]) not in sys.path:
        sys.path.insert(0, str(PATCHKIT_ROOT[0]))
    errors = importlib.import_module("patchkit.errors")
    try:
        module = importlib.import_module("patchkit.ops.port")  # the layered layout
    except ImportError:
        module = importlib.import_module("patchkit.port")  # before the layout (--patchkit-root)
    return module.port, errors.PatchkitError


Tool = Callable[[Path, Path, Case], tuple[bool, str]]


def tools(patchkit_mode: str) -> dict[str, Tool]:
    pk = run_patchkit_api if patchkit_mode == "api" else run_patchkit_cli
    return {"patchkit": pk, "git apply": run_git_apply, "git apply -3": run_git_apply_3,
            "patch --fuzz=2": run_gnu_patch}  # fmt: skip


def run_case(case: Case, scratch: Path, runners: dict[str, Tool]) -> Result:
    repo = Path(case.repo)
    patch = scratch / "case.patch"
    patch.write_bytes(
        subprocess.run(
            ["git", "-C", str(repo), "diff", "--full-index", "-M", f"{case.original}^",
             case.original], capture_output=True, env=_env(), check=True,
        ).stdout
    )  # fmt: skip
    truth = blobs_at(repo, case.backport, case.paths)
    result = Result(case)
    for i, (name, runner) in enumerate(runners.items()):
        work = scratch / f"t{i}"
        prepare(case, work)
        started = time.perf_counter()
        ok, note = runner(work, patch, case)
        seconds = time.perf_counter() - started
        placed = PLACEMENT[0] if runner is run_patchkit_api else 0.0
        result.runs[name] = Run(name, score(case, work, truth, ok), seconds, note, placed)
        shutil.rmtree(work)
    return result
