"""The diff parser: git's extended format read in one pass; odd modes, NUL bytes, names too
long for a file system and truncated hunks refused naming the patch; a large diff parsed once
and placed in time proportional to its size."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from patchkit.engine.diff.apply import apply_file
from patchkit.engine.diff.parse import parse_diff, split_lines
from patchkit.errors import MalformedPatch, UnsafePathError, UnsupportedChange
from patchkit.gitrepo import blob_id
from patchkit.outcome import Outcome

SOURCE = Path("demo.patch")


def _git_diff(path: str, old: bytes, new: bytes, *, extra: str = "") -> bytes:
    head = f"diff --git a/{path} b/{path}\n{extra}index {blob_id(old)}..{blob_id(new)} 100644\n"
    return (head + f"--- a/{path}\n+++ b/{path}\n").encode()


def test_a_plain_git_diff_round_trips_lines_and_blobs() -> None:
    data = _git_diff("pkg/a.py", b"x\n", b"y\n") + b"@@ -1,2 +1,2 @@ def f():\n a\n-x\r\n+y\n"
    (fp,) = parse_diff(data, SOURCE)
    assert (fp.old_path, fp.new_path, fp.old_mode) == ("pkg/a.py", "pkg/a.py", 0o100644)
    (hunk,) = fp.hunks
    assert hunk.header == "@@ -1,2 +1,2 @@ def f():"
    assert hunk.old == (b"a\n", b"x\r\n") and hunk.new == (b"a\n", b"y\n")
    assert hunk.added == (b"y\n",) and fp.old_blob == blob_id(b"x\n")


def test_no_newline_marker_and_an_empty_context_line() -> None:
    data = b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n\\ No newline at end of file\n+c\n"
    data += b"\\ No newline at end of file\n"
    (fp,) = parse_diff(data, SOURCE)
    assert fp.hunks[0].old == (b"a\n", b"\n", b"b")
    assert fp.hunks[0].new == (b"a\n", b"\n", b"c")


def test_quoted_paths_are_unquoted_and_a_quoted_nul_is_refused() -> None:
    data = b'diff --git "a/sp ace\\tx" "b/sp ace\\tx"\nnew file mode 100644\n'
    data += b'--- /dev/null\n+++ "b/sp ace\\tx"\n@@ -0,0 +1 @@\n+hi\n'
    (fp,) = parse_diff(data, SOURCE)
    assert fp.new_path == "sp ace\tx" and fp.old_path is None
    nul = data.replace(b"\\t", b"\\000")
    with pytest.raises(UnsafePathError, match="NUL"):
        parse_diff(nul, SOURCE)


def test_a_name_longer_than_the_file_system_allows_is_refused_naming_the_patch() -> None:
    name = "d/" + "x" * 300 + ".py"
    data = f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+hi\n".encode()
    with pytest.raises(UnsafePathError, match=r"demo\.patch.*303 bytes"):
        parse_diff(data, SOURCE)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("new mode 999999", "999999"),
        ("new mode 10064x", "10064x"),
        ("new mode 120000", "symbolic link"),
        ("new mode 160000", "submodule"),
        ("new mode 100600", "100600"),
    ],
)
def test_a_mode_patchkit_never_writes_is_refused_naming_file_and_mode(
    line: str, problem: str
) -> None:
    data = f"diff --git a/f.py b/f.py\nold mode 100644\n{line}\n".encode()
    with pytest.raises(UnsupportedChange, match=problem) as info:
        parse_diff(data, SOURCE)
    assert "demo.patch" in info.value.message and "f.py" in info.value.message


def test_a_truncated_hunk_is_a_config_error_with_its_line() -> None:
    data = b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n"
    with pytest.raises(MalformedPatch, match=r"hunk @@ -1,3 \+1,3 @@ has 2 old .*line 3"):
        parse_diff(data, SOURCE)


def test_a_line_outside_every_hunk_inside_a_file_part_is_malformed() -> None:
    data = b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n+lost\n"
    with pytest.raises(MalformedPatch, match=r"line 7 \('\+lost'\) in the part for f"):
        parse_diff(data, SOURCE)


def test_a_line_added_to_an_empty_file_is_a_change_not_a_new_file() -> None:
    data = _git_diff("pkg/__init__.py", b"", b"x\n") + b"@@ -0,0 +1 @@\n+x\n"
    (fp,) = parse_diff(data, SOURCE)
    assert fp.old_path == fp.new_path == "pkg/__init__.py"
    plain = b"--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n"
    assert parse_diff(plain, SOURCE)[0].old_path is None


def test_a_plain_diff_header_keeps_its_index_line() -> None:
    data = b"diff -ru ./a.c ./a.c\nindex 8115614..e36fce9 100755\n--- ./a.c\n+++ ./a.c\n"
    data += b"@@ -1 +1 @@\n-a\n+b\n"
    (fp,) = parse_diff(data, SOURCE)
    assert (fp.old_blob, fp.new_blob, fp.new_mode) == ("8115614", "e36fce9", 0o100755)


def test_a_diff_is_parsed_once_per_content() -> None:
    data = _git_diff("a", b"x\n", b"y\n") + b"@@ -1 +1 @@\n-x\n+y\n"
    assert parse_diff(data, SOURCE) is parse_diff(bytes(data), SOURCE)


def test_many_hunks_on_one_large_file_are_placed_in_linear_time() -> None:
    """200,000 lines, a hunk every ten: placing them one slice assignment at a time moved
    the rest of the file for every hunk (minutes); one pass takes well under a second."""
    lines = [f"value_{i} = compute({i})\n".encode() for i in range(200_000)]
    old = b"".join(lines)
    new_lines = [
        line.replace(b")", b", fast=True)") if i % 10 == 5 else line for i, line in enumerate(lines)
    ]
    body = []
    for start in range(0, len(lines), 10):  # one 10-line hunk per block, line 6 changed
        body.append(f"@@ -{start + 1},10 +{start + 1},10 @@\n".encode())
        for i in range(start, start + 10):
            if i % 10 == 5:
                body += [b"-" + lines[i], b"+" + new_lines[i]]
            else:
                body.append(b" " + lines[i])
    data = _git_diff("big.py", old, b"".join(new_lines)) + b"".join(body)
    started = time.process_time()
    (fp,) = parse_diff(data, SOURCE)
    result = apply_file(fp, lambda _p: old, lambda _s: None, _no_merge, "patch big")
    elapsed = time.process_time() - started
    assert result.outcome is Outcome.APPLIED and result.change is not None
    assert split_lines(result.change.content or b"") == new_lines
    assert elapsed < 8, f"parsing and placing 20,000 hunks took {elapsed:.1f} s of CPU"


def _no_merge(*_args: object) -> object:
    raise AssertionError("an exact diff never merges")
