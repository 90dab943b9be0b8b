#!/usr/bin/env python3
"""Hostile cases for every class of issue 24, each run as a real ``python3 -m patchkit ...``
on a small temporary repository, checking that:

- the exit code is one the case documents (never 70, a crash);
- nothing was written outside the root (a sentinel directory beside it is snapshotted);
- no planted command ran (it would create a marker file);
- it finished within its timeout (no hang).

Prints a table (class, inputs tried, held, failed) and exits 1 when any case failed.
``--fast`` runs the quick cases only (the test suite runs those); ``--only WORD`` the cases
whose class or name holds WORD; ``-v`` says why each failing case failed.

Cases whose fix is another engineer's and not yet on main are listed by name in
``EXPECTED_TO_FAIL_UNTIL_LANDED``: they are run and reported, but do not fail the run. The list
must be empty once every fix has landed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from security_kit import (  # noqa: E402
    Case,
    Run,
    absent,
    edit_diff,
    gh_run,
    home_for_git,
    meta_line,
    new_file_diff,
    plant,
    run_case,
    scenario,
    where,
)
from security_sweep import SWEEP  # noqa: E402

from testing.builders import Project, Upstream, run_git, snapshot  # noqa: E402

EXPECTED_TO_FAIL_UNTIL_LANDED: dict[
    str, str
] = {}  # case name -> the engineer whose fix it waits for


# -- running code via git options, hooks, fsmonitor ----------------------------------------------
def git_fsmonitor_through_symlink(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    os.symlink(".git", s.root / "gitlink")
    run_git(s.root, "add", "gitlink")
    run_git(s.root, "commit", "-q", "-m", "link")
    s.project.add_diff("p1", new_file_diff("gitlink/config2", "x\n"))
    config = s.root / ".git" / "config"
    text = config.read_text()
    diff = edit_diff("gitlink/config", text, text + f"[core]\n\tfsmonitor = {plant(tmp)}\n")
    s.project.add_diff("p2", diff)
    s.lock_to_head()
    before = config.read_bytes()
    unchanged = lambda: None if config.read_bytes() == before else ".git/config was written"  # noqa: E731
    return [
        Run(["apply", *where(s)], (0, 4, 5, 6), check=unchanged),
        Run(["status", *where(s)], (0, 2, 4)),
    ]


def git_hook_through_symlink(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    os.symlink(".git/hooks", s.root / "hooklink")
    run_git(s.root, "add", "hooklink")
    run_git(s.root, "commit", "-q", "-m", "link")
    s.project.add_diff("p1", new_file_diff("hooklink/post-checkout", f"#!/bin/sh\n{plant(tmp)}\n"))
    s.lock_to_head()
    hook = s.root / ".git" / "hooks" / "post-checkout"
    return [Run(["apply", *where(s)], (0, 4, 5, 6), check=absent(hook))]


def lock_url_upload_pack(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    lock = s.lock_path
    text = lock.read_text()
    source = text[text.index("source = ") :].splitlines()[0]
    evil = f'source = {{ kind = "git", url = "--upload-pack={plant(tmp)}" }}'
    lock.write_text(text.replace(source, evil))
    cache = {"PATCHKIT_CACHE": str(tmp / "cache")}
    return [Run(["fetch", "--target", "demo", "--project", str(s.project.path)], (2, 3), cache)]


def import_range_option(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    into = ["--into", "imp", "--project", str(s.project.path)]
    spec = f"{s.root}@--output={tmp / 'sentinel' / 'x'}..HEAD"
    return [Run(["import", spec, "--target", "demo", *into], (0, 2, 3))]


# -- writing outside the root or into .git -------------------------------------------------------
def diff_through_symlink_out(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    os.symlink(str(tmp / "sentinel"), s.root / "out")
    run_git(s.root, "add", "out")
    run_git(s.root, "commit", "-q", "-m", "link")
    s.project.add_diff("p1", new_file_diff("out/planted.txt", "x\n"))
    s.lock_to_head()
    return [Run(["apply", *where(s)], (5, 6))]


def diff_dotdot(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.project.add_diff("p1", new_file_diff("../sentinel/planted.txt", "x\n"))
    return [Run(["apply", *where(s)], (5, 6))]


def meta_file_absolute(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    target = tmp / "sentinel" / "victim.patch"
    meta_line(s, "p1", f'file = "{target}"')
    return [
        Run(["apply", *where(s)], (0, 2, 5)),
        Run(["record", *where(s), "--patch", "p1"], (0, 2, 4, 5)),
    ]


def target_dotdot(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    lock = s.lock_path
    lock.write_text(lock.read_text().replace("[targets.demo]", '[targets."../../sentinel/x"]'))
    cache = {"PATCHKIT_CACHE": str(tmp / "cache")}
    project = ["--project", str(s.project.path)]
    return [Run(["fetch", "--target", "../../sentinel/x", *project], (2,), cache)]


def set_name_dotdot(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    manifest = s.set_root / "patchset.toml"
    manifest.write_text(manifest.read_text().replace('name = "demo"', 'name = "../../sentinel"'))
    return [Run(["verify", *where(s)], (0, 2, 7))]


def import_into_dotdot(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    patch = tmp / "x.diff"
    patch.write_bytes(s.upstream.diff_of({"a.txt": "a one\na TWO\n"}))
    project = ["--project", str(s.project.path)]
    into = "../../sentinel"
    return [Run(["import", str(patch), "--target", "demo", "--into", into, *project], (2,))]


def import_series_escape(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    quilt = tmp / "quilt"
    (quilt / "patches").mkdir(parents=True)
    secret = tmp / "sentinel" / "secret.patch"
    secret.write_bytes(s.upstream.diff_of({"a.txt": "a one\na SECRET\n"}))
    (quilt / "patches" / "series").write_text(f"{secret}\n../../sentinel/secret.patch\n")
    project = ["--project", str(s.project.path)]
    copied = lambda: (  # noqa: E731
        "the set holds the file outside the source"
        if any("SECRET" in p.read_text(errors="replace") for p in s.project.path.rglob("*.patch"))
        else None
    )
    return [
        Run(
            ["import", str(quilt), "--target", "demo", "--into", "imp", *project],
            (0, 2),
            check=copied,
        )
    ]


# -- tool paths from upstream files ---------------------------------------------------------------
def precommit_rev_escape(tmp: Path) -> list[Run]:
    up = Upstream(tmp / "work" / "vllm")
    files = {
        "pkg/mod.py": "x = 1\n",
        ".pre-commit-config.yaml": _precommit("0.1/../../../../../sentinel"),
    }
    base = up.commit(files, "base")
    project = Project(tmp / "work" / "project", up, base, target="vllm")
    project.add_diff("p1", up.diff_of({"pkg/mod.py": "x = 2\n"}))
    tool = tmp / "sentinel" / "bin" / "ruff"  # where the rev points: it must never run
    tool.parent.mkdir(parents=True)
    tool.write_text(f"#!/bin/sh\n{plant(tmp)}\necho 0.1\n")
    tool.chmod(0o755)
    argv = ["export-pr", "p1", "--project", str(project.path), "--checkout", str(up.path)]
    identity = ["--identity", "A Person <a@example.com>", "--no-test-run"]
    return [Run([*argv, *identity], (0, 2, 10))]


def _precommit(rev: str) -> str:
    return (
        "repos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n"
        f"  rev: {rev}\n  hooks:\n  - id: ruff-format\n"
    )


# -- untrusted cache ------------------------------------------------------------------------------
def cache_writable_by_others(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    cache = tmp / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    return [Run(["apply", *where(s)], (2,), {"PATCHKIT_CACHE": str(cache)})]


def cache_poisoned_toml(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    cache = tmp / "cache"
    cache.mkdir(mode=0o700)
    for version in ("3.10", "3.11", "3.12", "3.13"):
        (cache / f"toml-{version}.marshal").write_bytes(b"\xe3" + os.urandom(64))
    return [Run(["apply", *where(s)], (0, 2), {"PATCHKIT_CACHE": str(cache)})]


# -- forged trailers ------------------------------------------------------------------------------
def forged_trailer(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    mail = tmp / "0001-x.patch"
    diff = s.upstream.diff_of({"a.txt": "a one\na TWO\n"}).decode()
    mail.write_text(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: =?utf-8?q?Eve=0ASigned-off-by=3A_Linus_=3Clinus=40example=2Ecom=3E?= "
        "<eve@example.com>\nDate: Mon, 1 Jan 2026 00:00:00 +0000\nSubject: [PATCH] x\n\n"
        f"why\n---\n{diff}"
    )
    project = ["--project", str(s.project.path)]

    def no_forged_line() -> str | None:
        import tomllib

        for meta in (s.project.path / "patchsets").rglob("*.toml"):
            data = tomllib.loads(meta.read_text())
            author = data.get("author", "")  # what export writes ([imported] is never exported)
            if "\n" in author or "Signed-off-by" in author:
                return f"{meta}: its author would forge a Signed-off-by line"
        return None

    run = ["import", str(mail), "--target", "demo", "--into", "imp", *project]
    return [Run(run, (0, 2), check=no_forged_line)]


# -- the tree lock between processes --------------------------------------------------------------
def two_caches_one_tree(tmp: Path) -> list[Run]:
    s = scenario(tmp, {f"f{i}.txt": f"{i}\n" for i in range(200)})
    s.add("p1", {f"f{i}.txt": f"{i} patched\n" for i in range(200)})
    env_b = {**os.environ, "PYTHONPATH": str(ROOT), "PATCHKIT_CACHE": str(tmp / "cache-b")}
    argv = [sys.executable, "-m", "patchkit", "apply", *where(s)]
    other: list[subprocess.Popen[bytes]] = []

    def start_other() -> None:
        other.append(
            subprocess.Popen(argv, env=env_b, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )

    def consistent() -> str | None:
        code = other[0].wait(timeout=60)
        if code not in (0, 9):
            return f"the other process exited {code}"
        state = s.root / ".git" / "patchkit" / "state.json"
        patched = sum("patched" in (s.root / f"f{i}.txt").read_text() for i in range(200))
        applied = state.exists() and json.loads(state.read_text()).get("patches")
        if patched and not applied:
            return f"{patched} files patched but the state says nothing is applied"
        return None

    start_other()
    env_a = {"PATCHKIT_CACHE": str(tmp / "cache-a")}
    return [Run(["apply", *where(s)], (0, 9), env_a, check=consistent)]


# -- Ray never waits ------------------------------------------------------------------------------
def ray_unreachable(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    argv = ["verify", *where(s), "--ray", "10.255.255.1:6379"]
    return [Run(argv, (0, 2, 3, 7), timeout=90.0)]


# -- bounded work on any input (exit 70 and hangs) -------------------------------------------------
def space_missing_at_base(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.upstream.commit({"x y.txt": "one\ntwo\n"}, "a file the base lacks")
    patch = s.add("p1", {"x y.txt": "one\nTWO\n"})
    return [Run(["port", str(patch), "--base", s.base, "--checkout", str(s.root)], (0, 2, 6))]


def space_missing_at_base_rebase(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"x y.txt": "new\n"})  # a file the base lacks, its name one space
    new = s.upstream.commit({"a.txt": "a one\na two\nmore\n"}, "next")
    argv = ["rebase", "--target", "demo", "--project", str(s.project.path), "--onto", new]
    return [Run(argv, (0, 8))]


def _toml_case(line: str) -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.add("p1", {"a.txt": "a one\na TWO\n"})
        meta_line(s, "p1", line)
        return [Run(["status", *where(s)], (2,)), Run(["apply", *where(s)], (2,))]

    return build


def markup_names(tmp: Path) -> list[Run]:
    names = ("[/x].txt", "[bold]b[/].txt")
    s = scenario(tmp, dict.fromkeys(names, "one\n"))
    s.add("p1", dict.fromkeys(names, "two\n"))
    return [Run(["apply", *where(s)], (0,), env={"PATCHKIT_TEST_PTY": "1"})]


def journal_efbig(tmp: Path) -> list[Run]:
    files = {f"d/f{i:03}.txt": f"line {i}\n" for i in range(300)}
    s = scenario(tmp, files)
    s.add("p1", {k: v.upper() for k, v in files.items()})
    before = snapshot(s.root)
    same = lambda: None if snapshot(s.root) == before else "the tree changed"  # noqa: E731
    return [Run(["apply", *where(s)], (4,), limit_file_size=16_000, check=same)]


def _state_case(text: str) -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.add("p1", {"a.txt": "a one\na TWO\n"})
        state = s.root / ".git" / "patchkit" / "state.json"
        state.parent.mkdir(parents=True)
        state.write_text(text)
        return [Run([verb, *where(s)], (4,)) for verb in ("status", "apply", "reset")]

    return build


def _flood() -> str:
    return json.dumps([{"number": n, "files": [{"path": "a.txt"}]} for n in range(1, 100_001)])


def _gh_case(
    answer: str | Callable[[], str], codes: tuple[int, ...] = (3,)
) -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        out = tmp / "gh-answer.json"
        out.write_text(answer if isinstance(answer, str) else answer())
        return gh_run(tmp, f"cat {out}", codes)

    return build


def _import_case(files: dict[str, bytes], source: str = "src") -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp, {"vllm/model.py": "x = 1\n"})
        for name, data in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        project = ["--project", str(s.project.path)]
        argv = ["import", str(tmp / source), "--target", "demo", "--into", "imp", *project]
        return [Run(argv, (0, 2), timeout=120.0)]

    return build


# -- issue 24, second pass (helper hostile): code in a rewrite, FIFOs, numbers, terminal text --
def rewrite_runs_code(tmp: Path) -> list[Run]:
    s = scenario(tmp, {"m.py": "def f():\n    return 1\n"})
    body = f"import os\nos.system({plant(tmp)!r})\n__import__('os').system({plant(tmp)!r})\n"
    s.project.add_rewrite("r1", body)
    return [Run(["apply", *where(s)], (2, 6)), Run(["status", *where(s)], (0, 2, 6))]


def _rewrite_never_ends(body: str) -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp, {"m.py": "def f():\n    return 1\n# " + "a" * 40 + "!\n"})
        s.project.add_rewrite("r1", "from patchkit.engine.rewrite import Rewrite\n" + body)
        env = {"PATCHKIT_REWRITE_TIMEOUT": "2"}
        return [Run(["apply", *where(s)], (6,), env=env, timeout=40.0)]

    return build


def _fifo_case(place: str) -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.add("p1", {"a.txt": "a one\na TWO\n"})
        path = {
            "meta": s.set_root / "patches" / "p1.toml",
            "state": s.root / ".git" / "patchkit" / "state.json",
            "tree": s.root / "a.txt",
            "key": tmp / "cache" / "key",
        }[place]
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.unlink(missing_ok=True)
        os.mkfifo(path, 0o600)
        extra = ["--allow-dirty"] if place == "tree" else []
        return [
            Run([verb, *where(s), *extra], (0, 2, 4, 6), timeout=30.0)
            for verb in ("status", "apply")
        ]

    return build


def cache_dir_link_out(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    cache = tmp / "cache"
    cache.mkdir(mode=0o700)
    for name in ("toml", "rewrites", "records"):
        os.symlink(tmp / "sentinel", cache / name)
    return [Run(["status", *where(s)], (0, 2)), Run(["apply", *where(s)], (0, 2))]


def hunk_header_digits(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1," + "9" * 5000 + " +1,2 @@\n a one\n-a two\n+a TWO\n"
    s.project.add_diff("p1", diff.encode())
    return [Run(["apply", *where(s)], (6,))]


def _env_case(name: str, value: str) -> Callable[[Path], list[Run]]:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.add("p1", {"a.txt": "a one\na TWO\n"})
        verb = (
            ["verify", *where(s), "--ray", "127.0.0.1:1"] if "RAY" in name else ["apply", *where(s)]
        )
        return [Run(verb, (2,), env={name: value}, timeout=30.0)]

    return build


def control_names(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    names = ("x\x1b]0;owned\x07.txt", "a\rb.txt", "evil\u202etxt.py")
    s.project.add_diff("p1", b"".join(new_file_diff(n, "x\n") for n in names))
    return [Run(["apply", *where(s)], (0,)), Run(["status", *where(s)], (0,))]


MOD = "/usr/local/lib/python3.12/dist-packages/vllm/model.py"
SCRIPT = f"P = '{MOD}'\ncode = open(P).read()\n"
NESTED = "x = " + "(" * 2000 + "1" + ")" * 2000 + "\n"
DOUBLING = SCRIPT + "s = 'ab'\nfor i in [" + "1," * 200 + "]:\n    s = s + s\n"
MAIL = (
    "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
    "From: A <a@example.com>\nSubject: [PATCH] x\nMIME-Version: 1.0\n"
    "Content-Type: text/plain; charset=x-no-such-charset\n\nwhy\n---\n"
    "--- a/vllm/model.py\n+++ b/vllm/model.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
)

CASES = [
    Case(
        "run code via git",
        "fsmonitor planted through a symlink to .git",
        git_fsmonitor_through_symlink,
    ),
    Case(
        "run code via git", "hook planted through a symlink to .git/hooks", git_hook_through_symlink
    ),
    Case("run code via git", "upstream.lock url --upload-pack=", lock_url_upload_pack, fast=True),
    Case("run code via git", "import DIR@--output=..HEAD", import_range_option),
    Case(
        "write outside root",
        "diff through a symlink out of the tree",
        diff_through_symlink_out,
        fast=True,
    ),
    Case("write outside root", "diff naming ../", diff_dotdot),
    Case(
        "write outside root",
        "patch file = absolute path, then record",
        meta_file_absolute,
        fast=True,
    ),
    Case("write outside root", "quilt series naming ../ and absolute", import_series_escape),
    Case("names as paths", "target named ../../x", target_dotdot, fast=True),
    Case("names as paths", "set name ../../sentinel", set_name_dotdot),
    Case("names as paths", "import --into ../..", import_into_dotdot, fast=True),
    Case(
        "tool paths from upstream", "pre-commit rev with /../..", precommit_rev_escape, fast=False
    ),
    Case("untrusted cache", "cache writable by others", cache_writable_by_others, fast=True),
    Case("untrusted cache", "poisoned parsed-TOML cache", cache_poisoned_toml),
    Case("forged trailers", "multi-line imported author", forged_trailer, fast=True),
    Case("lock between processes", "two caches, one checkout", two_caches_one_tree),
    Case("ray waits", "unreachable address", ray_unreachable),
    Case(
        "bounded input", "path with one space missing at the base", space_missing_at_base, fast=True
    ),
    Case(
        "bounded input",
        "rebase: a path with one space missing at the base",
        space_missing_at_base_rebase,
    ),
    Case("bounded input", "tests = 5", _toml_case("tests = 5"), fast=True),
    Case("bounded input", 'pr = "x"', _toml_case('pr = "x"')),
    Case("bounded input", 'history = "x"', _toml_case('history = "x"')),
    Case("bounded input", "bench = [5]", _toml_case("bench = [5]")),
    Case("bounded input", "deep TOML nesting", _toml_case("x = " + "[" * 5000 + "]" * 5000)),
    Case("bounded input", "TOML integer of 5000 digits", _toml_case("x = " + "9" * 5000)),
    Case("bounded input", "file names with rich markup on a terminal", markup_names, fast=True),
    Case("bounded input", "EFBIG while saving the journal", journal_efbig, fast=True),
    Case("bounded input", "state.json is a list", _state_case("[]"), fast=True),
    Case(
        "bounded input", "state.json with wrong types", _state_case('{"version": 1, "target": 5}')
    ),
    Case("bounded input", "state.json nested 100000 deep", _state_case("[" * 100_000)),
    Case(
        "bounded input",
        "gh JSON nested 100000 deep",
        _gh_case("[" * 100_000 + "]" * 100_000),
        fast=True,
    ),
    Case(
        "bounded input",
        "gh JSON integer of 5000 digits",
        _gh_case('[{"number": ' + "9" * 5000 + "}]"),
    ),
    Case("bounded input", "gh JSON wrong types", _gh_case('[{"number": "x", "files": 5}]')),
    Case(
        "bounded input",
        "gh JSON 100000 PRs",
        _gh_case(_flood, (0,)),
    ),
    Case("bounded input", "import: bare sudo line", _import_case({"src/run.sh": b"sudo\n"})),
    Case(
        "bounded input",
        "import: replace count >= 2^63",
        _import_case(
            {
                "src.py": (
                    SCRIPT
                    + "code = code.replace('x = 1', 'x = 2', 9223372036854775808)\nopen(P, 'w').write(code)\n"
                ).encode()
            },
            "src.py",
        ),
    ),
    Case(
        "bounded input",
        "import: unknown mail charset",
        _import_case({"0001-x.patch": MAIL.encode()}, "0001-x.patch"),
    ),
    Case(
        "bounded input",
        "import: 2000 nested parentheses",
        _import_case({"src.py": (SCRIPT + NESTED).encode()}, "src.py"),
        fast=True,
    ),
    Case(
        "bounded input",
        "import: a literal loop doubling a string",
        _import_case({"src.py": DOUBLING.encode()}, "src.py"),
        fast=True,
    ),
    Case(
        "bounded input",
        "import: a 1 MB run.sh line",
        _import_case({"src/run.sh": b"echo " + b"x" * 1_000_000 + b"\n"}),
    ),
    Case(
        "bounded input",
        "import: a set without patches/",
        _import_case(
            {"src/patchset.toml": b"[patchset]\nname = 'x'\n", "src/series": b"a.patch\n"}
        ),
    ),
    Case(
        "run code via rewrite",
        "rewrite module imports os / __import__",
        rewrite_runs_code,
        fast=True,
    ),
    Case(
        "run code via rewrite",
        "rewrite loops for ever at import",
        _rewrite_never_ends("while True:\n    pass\n"),
    ),
    Case(
        "run code via rewrite",
        "rewrite needle (a+)+$ backtracks",
        _rewrite_never_ends(
            "class R(Rewrite):\n    path = 'x.py'\n    search = ('*.py',)\n"
            "    needles = ('(a+)+$',)\n    anchors = {'f': 1}\n"
        ),
    ),
    Case("hang on a FIFO", "patch metadata is a FIFO", _fifo_case("meta"), fast=True),
    Case("hang on a FIFO", "state.json is a FIFO", _fifo_case("state")),
    Case("hang on a FIFO", "a tree file is a FIFO", _fifo_case("tree")),
    Case("hang on a FIFO", "the cache key is a FIFO", _fifo_case("key")),
    Case(
        "untrusted cache",
        "cache directories linked out of the cache",
        cache_dir_link_out,
        fast=True,
    ),
    Case("bounded input", "hunk header of 5000 digits", hunk_header_digits, fast=True),
    Case(
        "bounded input",
        "[pr] hardware of 5000 digits",
        _toml_case('pr = {hardware = ["' + "9" * 5000 + '.0"]}'),
    ),
    Case(
        "bounded input",
        "PATCHKIT_LOCK_TIMEOUT=nan",
        _env_case("PATCHKIT_LOCK_TIMEOUT", "nan"),
        fast=True,
    ),
    Case(
        "bounded input",
        "PATCHKIT_RAY_CONNECT_TIMEOUT=abc",
        _env_case("PATCHKIT_RAY_CONNECT_TIMEOUT", "abc"),
    ),
    Case("terminal text", "ESC, CR and bidi in file names", control_names, fast=True),
    *SWEEP,  # the second sweep: scripts/security_sweep.py
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="the quick cases only")
    parser.add_argument("--only", default="", help="cases whose class or name holds this")
    parser.add_argument("-v", "--verbose", action="store_true", help="say why each case failed")
    args = parser.parse_args(argv)
    chosen = [
        c
        for c in CASES
        if (c.fast or not args.fast) and args.only.lower() in f"{c.kind} {c.name}".lower()
    ]
    home = Path(tempfile.mkdtemp(prefix="patchkit-security-home-"))
    home_for_git(home)
    workers = max(1, min(8, os.cpu_count() or 1))
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            problems = list(pool.map(run_case, chosen))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    table: dict[str, list[int]] = {}
    failed_names, waiting = [], []
    for case, problem in zip(chosen, problems, strict=True):
        counts = table.setdefault(case.kind, [0, 0, 0])
        counts[0] += 1
        expected = case.name in EXPECTED_TO_FAIL_UNTIL_LANDED
        if problem is None:
            counts[1] += 1
        elif expected:
            waiting.append((case, problem))
        else:
            counts[2] += 1
            failed_names.append((case, problem))
        if args.verbose:
            mark = "held" if problem is None else "WAITS" if expected else "FAILED"
            print(f"  {mark:6} {case.kind}: {case.name}")
    width = max([len("class"), *map(len, table)])
    print(f"{'class':<{width}}  {'inputs tried':>12}  {'held':>4}  {'failed':>6}")
    for kind, (tried, held, failed) in table.items():
        print(f"{kind:<{width}}  {tried:>12}  {held:>4}  {failed:>6}")
    for case, problem in waiting:
        print(
            f"expected to fail until {EXPECTED_TO_FAIL_UNTIL_LANDED[case.name]} lands: {case.name}: {problem}"
        )
    for case, problem in failed_names:
        print(f"FAILED {case.kind}: {case.name}: {problem}")
    return 1 if failed_names else 0


if __name__ == "__main__":
    raise SystemExit(main())
