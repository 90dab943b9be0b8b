"""Benchmark following moved code: real edits to Python functions that upstream later moved to
another file, ported by patchkit and by `git apply`, `git apply -3`, `patch --fuzz=2`.

    python scripts/bench_moved.py --repo /work/.mirror/pypa+pip/repo --commits 6000 --save moved.json
    python scripts/bench_moved.py --cases moved.json      # the same cases again, without mining

A move is a commit M that removes ``def NAME(`` from one Python file A and adds it to another B
(the bodies alike). A case is an earlier commit X that edited NAME in A alone (every hunk of X
inside NAME): its diff X^..X, made on A, is ported onto M's tree with X's change taken out of B
again (each of X's added blocks found exactly once in B and put back as it was; else the case is
skipped). The truth is M's own B: the edit, where upstream carried it when it moved the code.
Each tool runs on a fresh full checkout of that target (its git directory borrows the
repository's objects); scored as in bench_port.py: exact, wrong (success with other content)
or failed.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_port_cases import PATCHKIT_ROOT, PLACEMENT, TOOLS, git, tools

DEF = re.compile(r"^([-+])\s*(?:async\s+)?def (\w+)\(", re.M)
HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


@dataclass(frozen=True)
class Move:
    commit: str  # M
    name: str
    old: str  # A
    new: str  # B


@dataclass(frozen=True)
class Case:
    repo: str
    move: Move
    edit: str  # X: the commit whose diff is ported
    target: bytes  # B at M with X's change taken out
    truth: bytes  # B at M


def _per_file(diff: str) -> dict[str, str]:
    parts = HEADER.split(diff)
    return {parts[i + 1]: parts[i + 2] for i in range(1, len(parts) - 2, 3)}


def moves(repo: Path, commits: int) -> Iterator[Move]:
    """Functions a commit removed from one Python file and added to another."""
    log = git(repo, "log", "--first-parent", "--format=%H", f"-n{commits}", "--", "*.py")
    for commit in log.split():
        diff = git(repo, "show", "--format=", "-U0", "--no-renames", commit, "--", "*.py")
        removed: dict[str, str] = {}
        added: dict[str, str] = {}
        for path, body in _per_file(diff).items():
            for sign, name in DEF.findall(body):
                (removed if sign == "-" else added).setdefault(name, path)
        for name, old in removed.items():
            new = added.get(name)
            if not new or new == old or name.startswith("test"):
                continue
            if "/_vendor/" not in old + new:
                yield Move(commit, name, old, new)


def _function(text: str, name: str) -> str | None:
    """The text of ``def name(`` to the next line as little indented (or the end)."""
    match = re.search(rf"^([ \t]*)(?:async\s+)?def {name}\(", text, re.M)
    if not match:
        return None
    indent = len(match.group(1))
    lines = text[match.start() :].splitlines(keepends=True)
    out = [lines[0]]
    for line in lines[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        out.append(line)
    return "".join(out)


def _span(text: str, name: str) -> tuple[int, int] | None:
    """The 1-based first and last line of ``def name(`` in ``text``."""
    body = _function(text, name)
    if body is None:
        return None
    first = text[: text.index(body)].count("\n") + 1
    return first, first + body.count("\n") - 1


def _inside(diff: str, first: int, last: int) -> bool:
    """Every line the diff removes or inserts at lies within lines ``first``..``last``."""
    hunks = re.findall(r"^@@ -(\d+)(?:,\d+)? [^\n]*\n((?:[ +\-\\][^\n]*\n?)*)", diff, re.M)
    for start, body in hunks:
        row = int(start)
        for line in body.splitlines():
            if line[:1] in "-+" and not first <= row <= last + (line[:1] == "+"):
                return False
            row += line[:1] in " -"
    return bool(hunks)


def _show(repo: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True)
    return done.stdout.decode(errors="replace") if done.returncode == 0 else None


def _taken_out(truth: str, diff: str) -> str | None:
    """``truth`` with each hunk's new lines put back as its old lines (exactly once each)."""
    out = truth
    for hunk in re.split(r"^@@[^\n]*\n", diff, flags=re.M)[1:]:
        rows = [r for r in hunk.splitlines(keepends=True) if r[:1] in " +-"]
        new = "".join(r[1:] for r in rows if r[0] != "-")
        old = "".join(r[1:] for r in rows if r[0] != "+")
        if out.count(new) != 1:
            return None
        out = out.replace(new, old)
    return out if out != truth else None


def cases_of(repo: Path, move: Move, per_move: int) -> list[Case]:
    before = _show(repo, f"{move.commit}^", move.old)
    after = _show(repo, move.commit, move.new)
    if before is None or after is None:
        return []
    a, b = _function(before, move.name), _function(after, move.name)
    if a is None or b is None or difflib.SequenceMatcher(None, a, b).ratio() < 0.6:
        return []
    found = []
    log = git(
        repo, "log", "-n80", "--format=%x01%H", "-p", "-U3", f"{move.commit}^", "--", move.old
    )
    for entry in filter(None, log.split("\x01")):
        edit, _, diff = entry.partition("\n")
        target = _taken_out(after, diff) if "\n@@ " in diff else None
        if target is None:
            continue
        span = _span(_show(repo, f"{edit}^", move.old) or "", move.name)
        if span is None or not _inside(diff, *span):
            continue
        found.append(Case(str(repo), move, edit, target.encode(), after.encode()))
        if len(found) >= per_move:
            break
    return found


def rebuilt(repo: Path, move: Move, edit: str) -> Case | None:
    """The case of ``edit`` on ``move`` again (a ``--cases`` file names them)."""
    after = _show(repo, move.commit, move.new)
    diff = git(repo, "show", "--format=", "-U3", edit, "--", move.old)
    target = _taken_out(after, diff) if after is not None else None
    if after is None or target is None:
        return None
    return Case(str(repo), move, edit, target.encode(), after.encode())


def saved(cases: list[Case]) -> str:
    rows = [{"repo": c.repo, "edit": c.edit, **vars(c.move)} for c in cases]
    return json.dumps(rows, indent=1)


def loaded(path: Path) -> list[Case]:
    out = []
    for row in json.loads(path.read_text()):
        move = Move(row["commit"], row["name"], row["old"], row["new"])
        case = rebuilt(Path(row["repo"]), move, row["edit"])
        if case is not None:
            out.append(case)
    return out


def prepare(case: Case, dest: Path) -> None:
    """A full checkout of M's tree with the target B, committed (so B is clean)."""
    git(dest.parent, "init", "-q", dest.name)
    (dest / ".git/objects/info/alternates").write_text(f"{Path(case.repo).resolve()}/objects\n")
    git(dest, "read-tree", case.move.commit)
    git(dest, "checkout-index", "-a", "-f")
    (dest / case.move.new).write_bytes(case.target)
    git(dest, "add", case.move.new)
    env = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    tree = git(dest, "write-tree").strip()
    commit = git(dest, *env, "commit-tree", tree, "-p", case.move.commit, "-m", "target").strip()
    git(dest, "update-ref", "HEAD", commit)


def score(case: Case, work: Path, ok: bool) -> str:
    if not ok:
        return "failed"
    new = (work / case.move.new).read_bytes() if (work / case.move.new).exists() else None
    old_now = (work / case.move.old).read_bytes() if (work / case.move.old).exists() else None
    old_at_m = _show(Path(case.repo), case.move.commit, case.move.old)
    same_old = (old_now is None and old_at_m is None) or (
        old_now is not None and old_at_m is not None and old_now == old_at_m.encode()
    )
    return "exact" if new == case.truth and same_old else "wrong"


@dataclass(frozen=True)
class _Stub:
    original: str


def run(case: Case, scratch: Path, mode: str) -> dict[str, tuple[str, float, str, float]]:
    patch = scratch / "case.patch"
    patch.write_bytes(
        subprocess.run(
            ["git", "-C", case.repo, "diff", "--full-index", f"{case.edit}^", case.edit,
             "--", case.move.old],
            capture_output=True, check=True,
        ).stdout
    )  # fmt: skip
    out = {}
    for i, (name, runner) in enumerate(tools(mode).items()):
        work = scratch / f"m{i}"
        prepare(case, work)
        started = time.perf_counter()
        ok, note = runner(work, patch, _Stub(case.edit))  # type: ignore[arg-type]
        seconds = PLACEMENT[0] if name == "patchkit" and mode == "api" else 0.0
        out[name] = (score(case, work, ok), time.perf_counter() - started, note, seconds)
        subprocess.run(["rm", "-rf", str(work)], check=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, help="mine the moves of this git directory")
    p.add_argument("--cases", type=Path, help="run the cases a --save file names (no mining)")
    p.add_argument("--save", type=Path, help="write the mined cases here")
    p.add_argument("--commits", type=int, default=3000, help="history searched for moves")
    p.add_argument("--max-cases", type=int, default=30)
    p.add_argument("--per-move", type=int, default=2)
    p.add_argument("--patchkit", choices=("api", "cli"), default="api")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    PATCHKIT_ROOT[0] = PATCHKIT_ROOT[0].resolve()
    if args.cases is None and args.repo is None:
        p.error("pass --repo GIT_DIR (to mine) or --cases FILE")
    cases = loaded(args.cases) if args.cases else list(_mined(args))
    if args.save:
        args.save.write_text(saved(cases))
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_moved-") as scratch:
        for case in cases:
            results.append(run(case, Path(scratch), args.patchkit))
            if args.verbose:
                line = " ".join(f"{t}={r[0]}" for t, r in results[-1].items())
                print(f"{case.edit[:10]} {case.move.name} {case.move.old} -> {case.move.new}: "
                      f"{line} [{results[-1]['patchkit'][2][:120]}]", flush=True)  # fmt: skip
    if not results:
        print("no cases: no function moved between files in the history searched")
        return 2
    print(f"moved code: {len(results)} cases")
    print(f"  {'tool':<16}{'exact':>7}{'wrong':>7}{'failed':>8}{'median s':>11}")
    for tool in TOOLS:
        scores = [r[tool][0] for r in results]
        secs = statistics.median(r[tool][1] for r in results)
        print(f"  {tool:<16}" + "".join(f"{scores.count(s):>7}" for s in ("exact", "wrong"))
              + f"{scores.count('failed'):>8}{secs:>11.3f}")  # fmt: skip
    placed = [r["patchkit"][3] for r in results]
    if any(placed):
        print(
            f"patchkit placement in-process (run_patch): median {statistics.median(placed):.3f} s"
            f", p90 {sorted(placed)[round(0.9 * (len(placed) - 1))]:.3f} s"
        )
    return 0


def _mined(args: argparse.Namespace) -> Iterator[Case]:
    count = 0
    for move in moves(args.repo, args.commits):
        for case in cases_of(args.repo, move, args.per_move):
            yield case
            count += 1
            if count >= args.max_cases:
                return


if __name__ == "__main__":
    raise SystemExit(main())
