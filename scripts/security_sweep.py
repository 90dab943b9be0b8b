#!/usr/bin/env python3
"""Hostile cases of the second sweep (helper trustleft), run by ``scripts/security.py`` beside
the first 54: TOML that lies (duplicate keys and tables, bytes that are no UTF-8), diffs whose
counts lie or that copy from outside the tree, paths that are twins once normalised or
case-folded, a lock whose path source is ``/``, ``gh`` that never answers or answers bytes,
cache entries replaced by FIFOs, links and directories, and git configuration planted in a
checkout (fsmonitor, hooks, filters) that no git command patchkit runs may obey."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from security_kit import (
    Case,
    Run,
    absent,
    edit_diff,
    gh_run,
    marker,
    new_file_diff,
    plant,
    scenario,
    where,
)

from testing.builders import run_git
from testing.fake_index import COMMITS, FakeIndex, make_tarball, sdist_files

Build = Callable[[Path], list[Run]]


# -- TOML that lies ------------------------------------------------------------------------------
def _meta_text(text: bytes) -> Build:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.add("p1", {"a.txt": "a one\na TWO\n"})
        (s.set_root / "patches" / "p1.toml").write_bytes(text)
        return [Run(["status", *where(s)], (2,)), Run(["apply", *where(s)], (2,))]

    return build


def series_twice(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    s.set_series(["p1", "p1"])
    return [Run(["apply", *where(s)], (2,)), Run(["status", *where(s)], (2,))]


def series_escape(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    s.set_series(["../../../sentinel/keep"])
    return [Run(["apply", *where(s)], (2,)), Run(["status", *where(s)], (2,))]


# -- diffs that lie --------------------------------------------------------------------------
def _diff_case(diff: bytes, codes: tuple[int, ...] = (6,), timeout: float = 60.0) -> Build:
    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.project.add_diff("p1", diff)
        unchanged = _unchanged(s.root)
        return [Run(["apply", *where(s)], codes, timeout=timeout, check=unchanged)]

    return build


def _unchanged(root: Path) -> Callable[[], str | None]:
    before = (root / "a.txt").read_bytes()
    return lambda: None if (root / "a.txt").read_bytes() == before else "a.txt was written"


HEAD = b"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n"
COUNTS_TOO_BIG = HEAD + b"@@ -1,100 +1,100 @@\n a one\n-a two\n+a TWO\n"
COUNTS_TOO_SMALL = HEAD + b"@@ -1,1 +1,1 @@\n a one\n-a two\n+a TWO\n a three\n-a four\n"
COUNTS_ZERO = HEAD + b"@@ -0,0 +0,0 @@\n a one\n-a two\n+a TWO\n"
MANY_HUNKS = HEAD + b"".join(b"@@ -1,2 +1,2 @@\n a one\n-a two\n+a TWO\n" for _ in range(20_000))
BINARY_LIES = (
    b"diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\nGIT binary patch\n"
    b"literal 999999999999\nzcmV?d00001\n\nliteral 0\nHcmV?d00001\n\n"
)
COPY_FROM_OUTSIDE = (
    b"diff --git a/../../sentinel/keep.txt b/stolen.txt\nsimilarity index 100%\n"
    b"copy from ../../sentinel/keep.txt\ncopy to stolen.txt\n"
)
RENAME_TO_ABSOLUTE = (
    b"diff --git a/a.txt b/tmp/x.txt\nsimilarity index 100%\n"
    b"rename from a.txt\nrename to /tmp/x.txt\n"
)
NEWLINE_PATH = (
    b'diff --git "a/x\\ny.txt" "b/x\\ny.txt"\nnew file mode 100644\n--- /dev/null\n'
    b'+++ "b/x\\ny.txt"\n@@ -0,0 +1 @@\n+x\n'
)
NUL_PATH = (
    b'diff --git "a/x\\000y.txt" "b/x\\000y.txt"\nnew file mode 100644\n--- /dev/null\n'
    b'+++ "b/x\\000y.txt"\n@@ -0,0 +1 @@\n+x\n'
)


def copy_from_outside(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.project.add_diff("p1", COPY_FROM_OUTSIDE)
    return [Run(["apply", *where(s)], (5, 6), check=absent(s.root / "stolen.txt"))]


def _twins(first: str, second: str) -> Build:
    """Two patches of one set creating names that are one file on some file systems."""

    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        s.project.add_diff("p1", new_file_diff(first, "one\n"))
        s.project.add_diff("p2", new_file_diff(second, "two\n"))
        s.set_series(["p1", "p2"])
        return [
            Run(["apply", *where(s)], (0, 5, 6)),
            Run(["status", *where(s)], (0,)),
            Run(["reset", *where(s)], (0,)),
        ]

    return build


def copy_in_the_tree(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.project.add_diff("p1", b"diff --git a/a.txt b/b.txt\ncopy from a.txt\ncopy to b.txt\n")
    kept = lambda: None if (s.root / "a.txt").is_file() else "a.txt was deleted"  # noqa: E731
    return [Run(["apply", *where(s)], (6,), check=kept)]


def _link(path: str, target: bytes) -> bytes:
    head = f"diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n"
    return head.encode() + b"@@ -0,0 +1 @@\n+" + target + b"\n\\ No newline at end of file\n"


def _links(*parts: bytes, codes: tuple[int, ...] = (6,)) -> Build:
    """Links a series makes, one patch each: refused (or, ``codes`` (0,), made and undone)."""

    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp)
        for i, part in enumerate(parts):
            s.project.add_diff(f"p{i}", part)
        s.set_series([f"p{i}" for i in range(len(parts))])
        return [Run([verb, *where(s)], codes if verb == "apply" else (0,)) for verb in VERBS]

    return build


VERBS = ("apply", "status", "apply", "reset", "status")
BINARY_LINK = (
    b"diff --git a/bl b/bl\nnew file mode 120000\nindex 0000000..1111111\nGIT binary patch\n"
    b"literal 11\nScmZ?b1_A*Mhpd2HB>(^b\n\nliteral 0\nHcmV?d00001\n\n"
)


# -- a lock's path source ----------------------------------------------------------------------
def lock_path_root(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    lock = s.lock_path
    lock.write_text(lock.read_text().replace(f'path = "{s.root}"', 'path = "/"'))
    project = ["--target", "demo", "--project", str(s.project.path)]
    return [Run(["fetch", *project], (2,)), Run(["apply", *project], (2,))]


# -- gh answers ------------------------------------------------------------------------------
def _gh(script: str, codes: tuple[int, ...] = (3,), timeout: float = 60.0) -> Build:
    return lambda tmp: gh_run(tmp, script, codes, timeout)


# -- the cache -------------------------------------------------------------------------------
def _cache_entry(kind: str) -> Build:
    """Every file of a warm cache replaced by a FIFO, a directory or a link out of it."""

    def build(tmp: Path) -> list[Run]:
        s = scenario(tmp, {"m.py": "def f():\n    return 1\n", "a.txt": "a one\na two\n"})
        s.add("p1", {"a.txt": "a one\na TWO\n"})
        rewrite = (
            "from patchkit.engine.rewrite import Rewrite\nimport libcst as cst\n"
            "class R(Rewrite):\n    path = 'm.py'\n    anchors = {'f': 1}\n"
            "    def leave_Integer(self, o, u):\n        if not self.in_anchor:\n            return u\n"
            "        if u.value == '2':\n            return self.present(u)\n"
            "        return self.changed(u.with_changes(value='2'))\n"
        )
        s.project.add_rewrite("r1", rewrite)
        s.set_series(["p1", "r1"])
        settle = lambda: time.sleep(2.1)  # noqa: E731 (files of the last 2 s make no record)
        return [
            Run(["status", *where(s)], (0,), check=settle),  # fills the cache
            # (the check spoils the cache the runs before filled, for the runs after)
            Run(["apply", *where(s)], (0,), check=lambda: _spoil(tmp / "cache", kind)),
            Run(["reset", *where(s)], (0, 2)),
            Run(["apply", *where(s)], (0, 2), timeout=30.0),
            Run(["status", *where(s)], (0, 2), timeout=30.0),
        ]

    return build


def _spoil(cache: Path, kind: str) -> None:
    for path in [p for p in cache.rglob("*") if p.is_file() and not p.is_symlink()]:
        if path.name == "key" or "repos" in path.parts:
            continue
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path, 0o600)
        elif kind == "dir":
            path.mkdir()
        else:
            path.symlink_to(cache.parent / "sentinel" / "keep.txt")
    return None


# -- git configuration planted in a checkout -----------------------------------------------------
def _planted_git_config(tmp: Path, root: Path) -> None:
    hooks = tmp / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-index-change", "reference-transaction", "pre-commit"):
        (hooks / name).write_text(f"#!/bin/sh\n{plant(tmp)}\n")
        (hooks / name).chmod(0o755)
    run_git(root, "config", "core.fsmonitor", plant(tmp))
    run_git(root, "config", "core.hooksPath", str(hooks))
    run_git(root, "config", "filter.evil.clean", plant(tmp))
    run_git(root, "config", "filter.evil.smudge", plant(tmp))
    run_git(root, "config", "filter.evil.process", plant(tmp))
    run_git(root, "config", "diff.external", plant(tmp))
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    run_git(root, "config", "diff.evil.textconv", plant(tmp))


def git_config_in_checkout(tmp: Path) -> list[Run]:
    s = scenario(tmp)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    diff = edit_diff("a.txt", "a one\na two\n", "a one\na three\n")
    (tmp / "edit.patch").write_bytes(diff)
    _planted_git_config(tmp, s.root)
    if marker(tmp).exists():
        marker(tmp).unlink()
    port = ["port", str(tmp / "edit.patch"), "--base", s.base, "--checkout", str(s.root)]
    return [
        Run(["status", *where(s)], (0,)),
        Run(["apply", *where(s)], (0,)),
        Run(["show", "p1", *where(s)], (0,)),
        Run(["reset", *where(s)], (0,)),
        Run(port, (0, 6)),
    ]


def sdist_with_git_dirs(tmp: Path) -> list[Run]:
    """A source release holding ``.git/config`` (fsmonitor, hooksPath), a hook, a nested
    ``.git`` file leading to a repository it also ships, and ``* filter=evil``: fetched into the
    cache (committed, checked out) and patched, nothing of it runs."""
    top, program = "fake_vllm-0.2.0", plant(tmp)
    files = sdist_files("0.2.0")
    files.update(
        {
            f"{top}/.git/config": f"[core]\n\tfsmonitor = {program}\n\thooksPath = h\n".encode(),
            f"{top}/.git/HEAD": b"ref: refs/heads/main\n",
            f"{top}/.git/hooks/post-checkout": f"#!/bin/sh\n{program}\n".encode(),
            f"{top}/h/post-checkout": f"#!/bin/sh\n{program}\n".encode(),
            f"{top}/evil/config": f"[core]\n\tfsmonitor = {program}\n".encode(),
            f"{top}/evil/HEAD": b"ref: refs/heads/main\n",
            f"{top}/sub/.git": b"gitdir: ../evil\n",
            f"{top}/.gitattributes": b"* filter=evil\n",
        }
    )
    index = FakeIndex()
    index.add(f"{top}.tar.gz", make_tarball(files, exec_=(f"{top}/h/post-checkout",)))
    index.start()  # (a daemon thread: it serves until the run ends)
    project = tmp / "project"
    (project / "patchsets" / "s" / "patches").mkdir(parents=True)
    (project / "upstream.lock").write_text(
        '[targets.vllm]\nrepository = "https://github.com/vllm-project/vllm"\n'
        f'version = "0.2.0"\ncommit = "{COMMITS["0.2.0"]}"\n'
        'source = { kind = "index", package = "fake-vllm" }\n'
    )
    (project / "patchsets" / "s" / "patchset.toml").write_text(
        '[patchset]\nname = "s"\nversion = "1.0.0"\ndescription = "x"\ntargets = ["vllm"]\n'
        'series = ["p1"]\n'
    )
    patches = project / "patchsets" / "s" / "patches"
    (patches / "p1.toml").write_text('id = "p1"\ntarget = "vllm"\ntitle = "t"\nwhy = "w"\n')
    (patches / "p1.patch").write_bytes(edit_diff("vllm/core.py", "VERSION = '0.2.0'\n", "V = 2\n"))
    env = {"PATCHKIT_INDEX_URL": index.url}
    argv = ["--target", "vllm", "--project", str(project)]
    return [Run([verb, *argv], (0,), env=env) for verb in ("fetch", "apply", "status", "reset")]


SWEEP = [
    Case("bounded input", "TOML duplicate key", _meta_text(b'title = "a"\ntitle = "b"\n'), True),
    Case("bounded input", "TOML duplicate table", _meta_text(b"[upstream]\n[upstream]\n")),
    Case("bounded input", "TOML bytes that are no UTF-8", _meta_text(b'title = "\xff\xfe"\n')),
    Case("bounded input", "TOML of 4 MB", _meta_text(b"# " + b"x" * 4_000_000 + b"\n")),
    Case("bounded input", "a series naming one patch twice", series_twice, fast=True),
    Case("names as paths", "a series entry with ../", series_escape, fast=True),
    Case("bounded input", "hunk counts bigger than the hunk", _diff_case(COUNTS_TOO_BIG)),
    Case("bounded input", "hunk counts smaller than the hunk", _diff_case(COUNTS_TOO_SMALL)),
    Case("bounded input", "hunk counts of zero with lines", _diff_case(COUNTS_ZERO)),
    Case("bounded input", "20000 hunks", _diff_case(MANY_HUNKS, (6,), 120.0)),
    Case("bounded input", "binary patch claiming 10^12 bytes", _diff_case(BINARY_LIES)),
    Case("write outside root", "copy from outside the tree", copy_from_outside, fast=True),
    Case("write outside root", "rename to an absolute path", _diff_case(RENAME_TO_ABSOLUTE, (5,))),
    Case("names as paths", "a quoted path with a newline", _diff_case(NEWLINE_PATH, (0, 5, 6))),
    Case("names as paths", "a quoted path with NUL", _diff_case(NUL_PATH, (5, 6))),
    Case("names as paths", "NFC and NFD twins in one set", _twins("\u00e9.txt", "e\u0301.txt")),
    Case("names as paths", "case-fold twins in one set", _twins("Read.txt", "read.txt")),
    Case("write outside root", "lock path source = /", lock_path_root, fast=True),
    Case("bounded input", "a copy (was applied as a rename)", copy_in_the_tree, fast=True),
    Case(
        "links",
        "a link, then a file through it, in the next patch",
        _links(_link("x", b"sub"), new_file_diff("x/evil.txt", "evil\n")),
    ),
    Case(
        "links",
        "a chain of links, then a file through it",
        _links(
            _link("c1", b"c2"),
            _link("c2", b"c3"),
            _link("c3", b"sub"),
            new_file_diff("c1/z.txt", "z\n"),
        ),
    ),
    Case(
        "links",
        "links in a loop (a -> b -> a), and one to itself",
        _links(_link("la", b"lb") + _link("lb", b"la"), _link("self", b"self"), codes=(0,)),
    ),
    Case("links", "a GIT binary patch making a link to /etc/passwd", _links(BINARY_LINK)),
    Case(
        "links",
        "a link named .GIT",
        _links(_link(".GIT", b"sub"), codes=(5,)),
        fast=True,
    ),
    Case("ray waits", "gh that never answers", _gh("sleep 600", (3,), 30.0), fast=True),
    Case("bounded input", "gh answering bytes that are no UTF-8", _gh("printf '\\377\\376['")),
    Case("bounded input", "gh answering 40 MB", _gh("head -c 40000000 /dev/zero | tr '\\0' ' '")),
    Case("untrusted cache", "cache entries replaced by FIFOs", _cache_entry("fifo"), fast=True),
    Case("untrusted cache", "cache entries replaced by directories", _cache_entry("dir")),
    Case("untrusted cache", "cache entries replaced by links out", _cache_entry("link")),
    Case("run code via git", "fsmonitor, hooks, filters in a checkout", git_config_in_checkout),
    Case("run code via git", "a source release holding .git dirs and files", sdist_with_git_dirs),
]
