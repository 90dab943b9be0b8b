"""Upstream changed the line right next to a patch's own lines: merged when the two changes
sit in two statements of one block and neither assigns a name the other reads; a conflict
when they share a statement, a comment, or a name one of them assigns.

Each case on a small repository through ``port`` (a line merge calls all of them conflicts)."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.diff.statements import merge_statements
from patchkit.outcome import Outcome
from tests.conftest import dedent
from tests.engine.test_placement import ported

SERVE_C = dedent(
    """
    #include <string.h>

    int serve(char *err, char *path, int perm) {
        struct sockaddr_un sa;
        int s = socket_of(err);
        memset(&sa, 0, sizeof(sa));
        strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
        if (listen_on(err, s, &sa, sizeof(sa)) == -1)
            return -1;
        if (perm)
            chmod(sa.sun_path, perm);
        return s;
    }

    int close_it(int s) {
        return close(s);
    }
    """
)


def test_a_renamed_call_right_above_the_own_lines_is_merged_in_c(tmp_path: Path) -> None:
    patched = SERVE_C.replace("sizeof(sa)) == -1", "sizeof(sa), perm) == -1").replace(
        "    if (perm)\n        chmod(sa.sun_path, perm);\n", ""
    )
    new_copy = "    safe_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));\n"
    upstream = SERVE_C.replace(
        "    strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);\n", new_copy
    )
    report, text = ported(tmp_path, "net.c", SERVE_C, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == patched.replace(
        "    strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);\n", new_copy
    )


CHECK_PY = dedent(
    """
    import math


    def check(values):
        limit = 10
        total = sum(values)
        return min(total, limit)


    def other():
        return 0
    """
)


def test_a_statement_above_that_assigns_another_name_is_merged_in_python(tmp_path: Path) -> None:
    patched = CHECK_PY.replace("total = sum(values)", "total = math.fsum(values)")
    upstream = CHECK_PY.replace("limit = 10", "limit = 12  # wider")
    report, text = ported(tmp_path, "check.py", CHECK_PY, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == patched.replace("limit = 10", "limit = 12  # wider")


SOLVE_PY = dedent(
    """
    import numpy as np


    def test_solve():
        a = np.eye(3)
        values, _ = solve(a, tol=1e-5, maxiter=50)
        assert_close(values, np.ones(3), atol=1.5e-5)


    def test_other():
        pass
    """
)


def test_a_changed_assignment_the_own_line_reads_stays_a_conflict(tmp_path: Path) -> None:
    patched = SOLVE_PY.replace("atol=1.5e-5)", "atol=2e-5, rtol=1e-5)")
    upstream = SOLVE_PY.replace("tol=1e-5, maxiter", "tol=1.25e-5, maxiter")
    report, text = ported(tmp_path, "test_solve.py", SOLVE_PY, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_changes_inside_one_statement_or_under_a_comment_stay_conflicts() -> None:
    call = b"def f():\n    run(\n        first=1,\n        second=2,\n    )\n    return 0\n"
    ours = call.replace(b"first=1", b"first=10")
    theirs = call.replace(b"second=2", b"second=3")
    assert merge_statements("a.py", ours, call, theirs) is None
    noted = b"def f():\n    x = 1\n    # keep it small\n    y = 2\n    return x + y\n"
    ours = noted.replace(b"keep it small", b"keep it smaller")
    theirs = noted.replace(b"y = 2", b"y = 3")
    assert merge_statements("a.py", ours, noted, theirs) is None
    assert merge_statements("a.txt", noted, noted, theirs) is None  # no grammar, no merge
    inserted = noted.replace(b"    y = 2\n", b"    z = 0\n    y = 2\n")
    rewritten = noted.replace(b"y = 2", b"y = 5")
    assert merge_statements("a.py", rewritten, noted, inserted) is None  # above or below: a guess


HEADER_H = dedent(
    """
    #ifndef FUNCS_H
    #define FUNCS_H

    int alpha(void);
    int beta(int code, int replace);
    unsigned long gamma_count();
    unsigned long delta_count();

    #endif
    """
)


def test_declarations_changed_right_above_and_below_at_the_top_level_are_merged(
    tmp_path: Path,
) -> None:
    patched = HEADER_H.replace("int replace);", "int replace, long timeout);")
    upstream = HEADER_H.replace("gamma_count();", "gamma_count(void);")
    upstream = upstream.replace("int alpha(void);", "int alpha(int flags);")
    report, text = ported(tmp_path, "funcs.h", HEADER_H, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    done = patched.replace("gamma_count();", "gamma_count(void);")
    assert text == done.replace("int alpha(void);", "int alpha(int flags);")


RUN_SH = dedent(
    """
    #!/usr/bin/env bash
    set -eux

    >&2 echo '=== the module is found when installed ==='
    python -m pip install pep517
    ( # build a wheel
      cd dist
      python -m pep517.build --binary .
    )
    python -m pip install dist/*.whl
    ansible -m boo localhost
    rm -rf dist
    """
)


def test_a_changed_command_right_above_is_merged_in_a_shell_script(tmp_path: Path) -> None:
    patched = RUN_SH.replace("pip install pep517", "pip install build").replace(
        "pep517.build --binary .", "build -w ."
    )
    upstream = RUN_SH.replace("echo '=== the module", "echo \\\n    '=== the module")
    report, text = ported(tmp_path, "runme.sh", RUN_SH, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == patched.replace("echo '=== the module", "echo \\\n    '=== the module")


def test_a_deeply_nested_statement_is_read_without_running_out_of_stack() -> None:
    deep = b"def f():\n    x = " + b"(" * 3000 + b"1" + b")" * 3000 + b"\n    y = 2\n    return x\n"
    ours = deep.replace(b"(1)", b"(2)")  # upstream rewrote the deep statement
    theirs = deep.replace(b"y = 2", b"y = 3")
    assert merge_statements("deep.py", ours, deep, theirs) == ours.replace(b"y = 2", b"y = 3")


def test_a_changed_call_that_mutates_what_the_own_line_reads_stays_a_conflict(
    tmp_path: Path,
) -> None:
    """``items.sort()`` changes ``items``: upstream sorting it the other way right above the
    patch's ``return items[-1]`` is no independent change (git merge-file conflicts too)."""
    base = "def last(items):\n    items.sort()\n    return items[0]\n\n\ndef one():\n    return 1\n"
    patched = base.replace("items[0]", "items[-1]")
    upstream = base.replace("sort()", "sort(reverse=True)")
    report, _ = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, report.result.details


def test_a_call_that_fills_its_first_or_pointed_argument_defines_it() -> None:
    """``memset(buf, ...)`` and ``read_into(&n)`` change ``buf`` and ``n``; ``buf.fill_(0)``
    changes ``buf``: a rewritten call right above a line reading them stays a conflict."""
    for ours, base, theirs in [
        (b"memset(buf, 1, 4);\n", b"memset(buf, 0, 4);\n", b"use(buf);\n"),
        (b"read_into(&n, 2);\n", b"read_into(&n, 1);\n", b"use(n);\n"),
        (b"read_into(&n, 2);\n", b"read_into(&n, 1);\n", b";\n    use(n);\n"),
    ]:
        tail = b"int f(void) {\n    char buf[4];\n    int n;\n    %s    use(x);\n}\n"
        merged = merge_statements(
            "f.c", tail % ours, tail % base, (tail % base).replace(b"use(x);\n", theirs)
        )
        assert merged is None, ours
    py = b"def f(buf):\n    buf.fill_(0)\n    return x\n"
    ours_py = py.replace(b"fill_(0)", b"fill_(1)")
    assert merge_statements("f.py", ours_py, py, py.replace(b"x\n", b"buf\n")) is None
