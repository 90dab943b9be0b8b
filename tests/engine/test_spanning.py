"""A hunk whose change blocks lie in two functions (git joined them: their context lines meet)
is merged part by part, each in its own function, when the whole hunk conflicts; any part that
does not merge keeps the conflict."""

from __future__ import annotations

from pathlib import Path

from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import ported

SOURCE = dedent(
    """
    #include "calc.h"

    int scale(int a)
    {
        int x = a + 1;
        x = x * 2;
        return x;
    }

    int shrink(int b)
    {
        int y = b - 1;
        y = y / 2;
        return y;
    }

    int twice(int c)
    {
        return c * 2;
    }
    """
)

PATCHED = SOURCE.replace("    return x;\n", "    return x + 1;\n").replace(
    "    int y = b - 1;\n", "    int y = b - 2;\n"
)


def test_a_hunk_over_two_functions_merges_in_each(tmp_path: Path) -> None:
    """Upstream put a line right above the change in the first function and one right below
    the change in the second: the whole hunk conflicts and neither side of its context is
    intact, but each function's part merges by its own lines there."""
    upstream = SOURCE.replace("    return x;\n", "    trace(x);\n    return x;\n").replace(
        "    int y = b - 1;\n", "    int y = b - 1;\n    trace(y);\n"
    )
    report, text = ported(tmp_path, "src/calc.c", SOURCE, PATCHED, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("    return x;\n", "    return x + 1;\n").replace(
        "    int y = b - 1;\n", "    int y = b - 2;\n"
    )
    marks = report.result.placements
    assert [m.scope for m in marks] == [("scale",), ("shrink",)]
    assert {m.rule for m in marks} == {Rule.SCOPE_LINES}
    assert all("part" in m.note for m in marks)


def test_a_part_that_does_not_merge_keeps_the_conflict(tmp_path: Path) -> None:
    """Upstream changed the very line the second part rewrites: that part conflicts, so the
    whole hunk does (the first part alone is never written)."""
    upstream = SOURCE.replace("    return x;\n", "    trace(x);\n    return x;\n").replace(
        "    int y = b - 1;\n", "    int y = b - 3;\n    trace(y);\n"
    )
    report, text = ported(tmp_path, "src/calc.c", SOURCE, PATCHED, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert "return x + 1;" not in text
