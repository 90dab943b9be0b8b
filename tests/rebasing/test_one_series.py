"""Bisection and the main run of a rebase see the same tree: a patch whose change upstream
partly took leaves the rest of its change for the patches after it at every point of history,
not only at the release the rebase moves onto."""

from __future__ import annotations

import difflib
from pathlib import Path

from testing.builders import run_git
from tests.ops.test_rebase import Releases

FILLER = "".join(f"X{i} = {i}\n" for i in range(8))
BASE = (
    "def helper():\n    return 0\n\n"
    + FILLER
    + "\ndef tail():\n    return 1\n\n"
    + FILLER.replace("X", "Y")
    + "\ndef launch(kernel, grid):\n    return run(kernel, grid, stream=None)\n"
)
A_DONE = BASE.replace("return 0\n", "return 10\n").replace("return 1\n", "return 11\n")
B_DONE = A_DONE.replace("return 11\n", "return 12\n").replace("stream=None", "stream=s")


def _on_top(before: str, after: str) -> bytes:
    """A diff of pkg/mod.py from ``before`` (the tree as patch A leaves it) to ``after``."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), n=3
    )
    body = "".join(list(lines)[2:])
    return (
        "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n" + body
    ).encode()


def test_bisection_sees_the_rest_of_a_partly_upstreamed_patch(tmp_path: Path) -> None:
    rel = Releases(tmp_path, {"pkg/mod.py": BASE})
    rel.diff("a", {"pkg/mod.py": A_DONE})  # two hunks: helper and tail
    rel.project.add_diff("b", _on_top(A_DONE, B_DONE))  # on A's tail line, and launch
    rel.release("1.1", {"pkg/mod.py": BASE.replace("return 0\n", "return 10\n")})  # A's first
    late = "stream=default()"
    rel.release(
        "1.2",
        {"pkg/mod.py": BASE.replace("return 0\n", "return 10\n").replace("stream=None", late)},
    )
    report = rel.rebase("v1.2")
    found = {p.id: (p.outcome.value, p.broken_by) for p in report.patches}
    # At 1.1 the main run carries A's rest (tail returns 11) and B applies on it; B breaks
    # only at 1.2, where upstream changed its launch line.
    assert found == {"a": ("partly-upstreamed", None), "b": ("conflict", "1.2")}


def test_bisection_follows_code_moved_as_the_main_run_does(tmp_path: Path) -> None:
    rel = Releases(tmp_path, {"pkg/mod.py": BASE})
    rel.diff("b", {"pkg/mod.py": BASE.replace("stream=None", "stream=s")})
    run_git(rel.upstream.path, "mv", "pkg/mod.py", "pkg/core.py")
    rel.release("1.1", {})  # the file renamed, its code as it was
    rel.release("1.2", {"pkg/core.py": BASE.replace("stream=None", "stream=default()")})
    report = rel.rebase("v1.2")
    found = {p.id: (p.outcome.value, p.broken_by) for p in report.patches}
    # the main run follows the rename to 1.2 and finds the conflict there; at 1.1 the patch
    # still goes in on the renamed file, so it broke at 1.2, not where the file moved
    assert found == {"b": ("conflict", "1.2")}
