"""Hostile symbolic links in a diff, through the CLI (``port``, and ``apply`` of a patch set):
each is refused with a typed error naming the link and its target (or the link it would go
through), the tree is left exactly as it was, and nothing outside it is touched."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario, Upstream, snapshot


def link(path: str, target: bytes, *, newline: bool = False) -> bytes:
    """The part of a diff that makes ``path`` a link to ``target``, as git writes it."""
    end = b"\n" if newline else b"\n\\ No newline at end of file\n"
    head = f"diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n"
    return head.encode() + b"@@ -0,0 +1 @@\n+" + target + end


def new_file(path: str, line: str) -> bytes:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{line}\n"
    ).encode()


EDIT_THROUGH = b"diff --git a/d/file.txt b/d/file.txt\n--- a/d/file.txt\n+++ b/d/file.txt\n"
EDIT_THROUGH += b"@@ -1 +1 @@\n-f\n+F\n"
AS_A_FILE = b"diff --git a/cur b/cur\nindex 1111111..2222222 100644\n--- a/cur\n+++ b/cur\n"
AS_A_FILE += b"@@ -1 +1 @@\n-a.txt\n\\ No newline at end of file\n"
AS_A_FILE += b"+b.txt\n\\ No newline at end of file\n"

RETARGET_OUT = b"diff --git a/cur b/cur\nindex 1111111..2222222 120000\n--- a/cur\n+++ b/cur\n"
RETARGET_OUT += b"@@ -1 +1 @@\n-a.txt\n\\ No newline at end of file\n"
RETARGET_OUT += b"+../../etc/passwd\n\\ No newline at end of file\n"

CASES = {  # diff, exit code, what the message says (the link and its target, and why)
    "absolute target": (link("l", b"/etc/passwd"), 5, r"l -> '/etc/passwd': .*absolute"),
    "../.. escape": (
        link("sub/l", b"../../outside/secret.txt"),
        5,
        r"sub/l -> '\.\./\.\./outside/secret\.txt': .*out of the tree",
    ),
    "`..` after a name": (link("l", b"sub/../../x"), 5, r"l -> 'sub/\.\./\.\./x': .*after a name"),
    "target via a link that leads out": (
        link("l", b"ext/secret.txt"),
        5,
        r"l: refused: a symbolic link to 'ext/secret\.txt': it resolves to .*outside",
    ),
    "a link, then a file written through it": (
        link("x", b"sub") + new_file("x/evil.txt", "evil"),
        6,
        r"writes x/evil\.txt, but x is a file the same patch writes",
    ),
    "a hunk to a file under a link of the tree": (
        EDIT_THROUGH,
        5,
        r"d/file\.txt: refused: d is a symbolic link \(to 'sub'\)",
    ),
    "a link path that goes through a link": (
        link("d/l", b"file.txt"),
        6,
        r"writes d/l, but d is a file",
    ),
    "a link replacing a directory": (link("sub", b"a.txt"), 6, r"sub is a directory"),
    "a link as a regular file": (AS_A_FILE, 5, r"cur: refused: it is a symlink \(to 'a\.txt'\)"),
    "NUL in the target": (link("l", b"a\0b"), 5, r"l -> 'a<NUL>b': .*NUL"),
    "newline in the target": (link("l", b"a.txt", newline=True), 5, r"'a\.txt<LF>': .*newline"),
    "two lines for a target": (
        link("l", b"a\n+b").replace(b"+1 @@", b"+1,2 @@"),
        6,
        r"the symbolic link l: .*one line",
    ),
    "a link retargeted out of the tree": (
        RETARGET_OUT,
        5,
        r"cur -> '\.\./\.\./etc/passwd': .*out of the tree",
    ),
    "a link into .git": (link("l", b".git/hooks/post-checkout"), 5, r"l -> '\.git/.*inside \.git"),
    "a rename that moves a link up and out": (
        b"diff --git a/sub/up b/up\nsimilarity index 100%\nrename from sub/up\nrename to up\n",
        5,
        r"up: refused: a symbolic link to '\.\./a\.txt': .*out of the tree",
    ),
    "a huge target": (link("l", b"a" * 5000), 5, r"\(5000 bytes\): its target is 5000 bytes"),
}


def _upstream(tmp_path: Path) -> Upstream:
    up = Upstream(tmp_path / "up")
    up.write({"a.txt": "a\n", "sub/file.txt": "f\n"})
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("keep\n")
    os.symlink("../outside", up.path / "ext")  # a link the tree has that leads out
    os.symlink("sub", up.path / "d")  # a link to a directory of the tree
    os.symlink("a.txt", up.path / "cur")  # a link to a file of the tree
    os.symlink("../a.txt", up.path / "sub" / "up")  # one that leads out if moved up
    up.commit({}, "base")
    return up


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_link_is_refused_by_port_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    diff, code, message = CASES[name]
    up = _upstream(tmp_path)
    before = snapshot(up.path)
    patch = tmp_path / "p.patch"
    patch.write_bytes(diff)
    assert main(["port", str(patch), "--base", up.head(), "--checkout", str(up.path)]) == code
    said = capsys.readouterr()
    assert re.search(message, said.err + said.out), said.err + said.out
    assert snapshot(up.path) == before
    assert (tmp_path / "outside" / "secret.txt").read_text() == "keep\n"
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]


def test_a_link_out_of_the_tree_in_a_patch_set_is_refused_by_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path / "work", {"a.txt": "a\n"})
    s.add("good", {"a.txt": "A\n"})
    s.project.add_diff("evil", link("docs/passwd", b"../../../../etc/passwd"))
    before = snapshot(s.root)
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["apply", *where]) == 5
    assert "docs/passwd -> '../../../../etc/passwd'" in capsys.readouterr().err
    assert snapshot(s.root) == before  # the good patch before it is not written either
