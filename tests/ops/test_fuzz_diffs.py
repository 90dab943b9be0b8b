"""No input crashes patchkit: diffs generated from real edits, then mutated (truncated, lines
and hunks dropped or doubled, counts, modes and paths changed, bytes re-encoded), are handed to
``patchkit port`` on a real checkout. Whatever the mutation: never exit 70 (a bug), nothing
written outside the tree, and the tree either unchanged or exactly what ``git apply`` makes of
the same diff. Deterministic (``derandomize``) and small enough for CI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchkit.cli import main
from testing.builders import Upstream, run_git

FILES = {
    "pkg/mod.py": "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12)),
    "pkg/data.txt": "".join(f"row {i}\r\n" for i in range(30)),
    "tool.sh": "#!/bin/sh\necho one\necho two\n",
    "README": "readme\n",
}
EDITS = {
    "pkg/mod.py": FILES["pkg/mod.py"].replace("x + 3", "x * 3").replace("x + 9", "x - 9"),
    "pkg/data.txt": FILES["pkg/data.txt"].replace("row 7\r", "ROW 7\r"),
    "tool.sh": FILES["tool.sh"] + "echo three\n",
    "pkg/new.py": "NEW = 1\n",
}
DOCUMENTED = {0, 2, 3, 4, 5, 6, 9}
HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass
class Bench:
    """A checkout at its base commit, a directory beside it that nothing may touch, and the
    clean diff the mutations start from."""

    root: Path
    beside: Path
    base: str
    diff: bytes
    work: Path


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    """Made once per test (hypothesis runs every example of a test on the same one)."""
    home = tmp_path
    up = Upstream(home / "tree")
    base = up.commit(FILES, "base")
    (up.path / "tool.sh").chmod(0o755)
    base = up.commit({}, "modes")
    diff = up.diff_of(EDITS)
    beside = home / "beside"
    beside.mkdir()
    (beside / "keep.txt").write_text("untouched\n")
    return Bench(up.path, beside, base, diff, home / "work")


def _tree_of(root: Path) -> dict[str, tuple[bytes, bool]]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git") or not path.is_file():
            continue
        out[rel] = (path.read_bytes(), os.access(path, os.X_OK))
    return out


def _restore(bench: Bench) -> None:
    run_git(bench.root, "checkout", "-q", "-f", bench.base)
    run_git(bench.root, "clean", "-qfdx")
    shutil.rmtree(bench.root / ".git" / "patchkit", ignore_errors=True)


def _expected(bench: Bench, diff: Path) -> dict[str, tuple[bytes, bool]] | None:
    """What the diff says, by another tool on a copy of the checkout: `git apply`, or where
    git refuses the diff's form (it wants its own headers), GNU `patch` with no fuzz; None when
    neither takes it."""
    commands = [["git", "apply", str(diff)]]
    if shutil.which("patch"):
        commands.append(
            ["patch", "-p1", "-F0", "-s", "-f", "--no-backup-if-mismatch", "-i", str(diff)]
        )
    for command in commands:
        copy = bench.work / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(bench.root, copy, symlinks=True)
        if subprocess.run(command, cwd=copy, capture_output=True).returncode == 0:
            return _tree_of(copy)
    return None


# -- mutations ----------------------------------------------------------------------------------
Mutation = Callable[[bytes], bytes]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _at(index: int, items: list[bytes]) -> int:
    return index % max(len(items), 1)


def truncate(at: int) -> Mutation:
    return lambda d: d[: at % max(len(d), 1)]


def drop_line(at: int) -> Mutation:
    def run(d: bytes) -> bytes:
        lines = _lines(d)
        del lines[_at(at, lines) : _at(at, lines) + 1]
        return b"".join(lines)

    return run


def double_line(at: int) -> Mutation:
    def run(d: bytes) -> bytes:
        lines = _lines(d)
        i = _at(at, lines)
        return b"".join(lines[: i + 1] + lines[i : i + 1] + lines[i + 1 :])

    return run


def hunk_op(at: int, double: bool) -> Mutation:
    def run(d: bytes) -> bytes:
        starts = [m.start() for m in HUNK.finditer(d)]
        if not starts:
            return d
        i = at % len(starts)
        end = starts[i + 1] if i + 1 < len(starts) else len(d)
        nxt = d.find(b"\ndiff --git", starts[i])
        end = min(end, nxt + 1) if nxt >= 0 else end
        hunk = d[starts[i] : end]
        return d[: starts[i]] + (hunk + hunk if double else b"") + d[end:]

    return run


def count(at: int, value: int) -> Mutation:
    def run(d: bytes) -> bytes:
        numbers = list(re.finditer(rb"(?<=[-+,])\d+(?=[ ,@])", d))
        if not numbers:
            return d
        m = numbers[at % len(numbers)]
        return d[: m.start()] + str(value).encode() + d[m.end() :]

    return run


def mode(text: str) -> Mutation:
    return lambda d: re.sub(rb"(?m)^index ([0-9a-f]+)\.\.([0-9a-f]+) \d+$", b"", d).replace(
        b"diff --git a/tool.sh b/tool.sh\n",
        b"diff --git a/tool.sh b/tool.sh\nold mode 100755\nnew mode " + text.encode() + b"\n",
    )


PATHS = [
    "../escape.txt",
    "/etc/passwd-patchkit",
    "pkg/../../beside/keep.txt",
    ".git/hooks/pre-commit",
    "README/under-a-file.txt",
    "x" * 300,
    "pkg/" + "y" * 256 + "/z.py",
    "nul\\000byte",
    '"quoted\\tname"',
    "~/home.txt",
    "pkg//double.py",
    "pkg/./dot.py",
]


def path(which: int, old: str) -> Mutation:
    new = PATHS[which % len(PATHS)]
    return lambda d: d.replace(old.encode(), new.encode())


def encode(how: int) -> Mutation:
    conversions: list[Mutation] = [
        lambda d: d.replace(b"\n", b"\r\n"),
        lambda d: d.replace(b"\r\n", b"\n"),
        lambda d: d.decode("utf-8", "replace").encode("utf-16"),
        lambda d: d + b"\xff\xfe\x00garbage\n",
        lambda d: d.replace(b"x", "\u00e9".encode("latin-1")),
        lambda d: d.replace(b" ", b"", 3),
    ]
    return conversions[how % len(conversions)]


MUTATIONS = st.one_of(
    st.builds(truncate, st.integers(0, 10_000)),
    st.builds(drop_line, st.integers(0, 500)),
    st.builds(double_line, st.integers(0, 500)),
    st.builds(hunk_op, st.integers(0, 50), st.booleans()),
    st.builds(count, st.integers(0, 200), st.integers(0, 99_999)),
    st.builds(mode, st.sampled_from(["999999", "100644", "120000", "160000", "4755", "1x0644"])),
    st.builds(path, st.integers(0, 50), st.sampled_from(["pkg/mod.py", "pkg/new.py", "tool.sh"])),
    st.builds(encode, st.integers(0, 20)),
)


@settings(
    max_examples=int(os.environ.get("PATCHKIT_FUZZ_EXAMPLES", "60")),
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(mutations=st.lists(MUTATIONS, min_size=1, max_size=3))
def test_a_mutated_diff_never_crashes_and_writes_all_or_nothing(
    bench: Bench, mutations: list[Mutation], capsys: pytest.CaptureFixture[str]
) -> None:
    data = bench.diff
    for mutate in mutations:
        data = mutate(data)
    _restore(bench)
    bench.work.mkdir(exist_ok=True)
    patch = bench.work / "fuzzed.diff"
    patch.write_bytes(data)
    before, beside = _tree_of(bench.root), _outside(bench)
    code = main(["port", str(patch), "--base", bench.base, "--checkout", str(bench.root)])
    err = capsys.readouterr().err
    assert code in DOCUMENTED, f"exit {code}: {err}"
    assert "Traceback" not in err
    patch.unlink()
    after = _tree_of(bench.root)
    assert _outside(bench) == beside, "something beside the tree was written"
    assert not any(Path(p).exists() for p in ("/etc/passwd-patchkit", "/escape.txt"))
    if code != 0:
        assert after == before, "a refused diff changed the tree"
        return
    _restore(bench)
    assert after == _expected(bench, _saved(bench, data)), "the tree is not what the diff says"


def _saved(bench: Bench, data: bytes) -> Path:
    out = bench.work / "again.diff"
    out.write_bytes(data)
    return out


def _outside(bench: Bench) -> dict[str, tuple[bytes, bool]]:
    """Everything beside the checkout but the test's own scratch directory."""
    files = _tree_of(bench.root.parent)
    return {k: v for k, v in files.items() if not k.startswith(("tree/", "work/"))}


def test_the_clean_diff_ports_exactly_as_git_applies_it(bench: Bench) -> None:
    """The fuzzing's starting point works, so the mutations are what is being tested."""
    _restore(bench)
    bench.work.mkdir(exist_ok=True)
    patch = _saved(bench, bench.diff)
    assert main(["port", str(patch), "--base", bench.base, "--checkout", str(bench.root)]) == 0
    after = _tree_of(bench.root)
    _restore(bench)
    assert after == _expected(bench, patch) and after != _tree_of(bench.root)
