"""A hunk's plan ends in one of the five ``PlanState`` values, never a free string."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.parse import parse_diff, split_lines
from patchkit.engine.diff.placement import Placer, PlanState, place

DIFF = b"""diff --git a/f.txt b/f.txt
--- a/f.txt
+++ b/f.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
"""


@pytest.mark.parametrize(
    ("target", "state"),
    [
        (b"a\nb\nc\n", PlanState.APPLY),
        (b"a\nB\nc\n", PlanState.PRESENT),
        (b"x\ny\n", PlanState.MISSING),
        (b"a\nb\nc\nz\na\nb\nc\n", PlanState.AMBIGUOUS),
    ],
)
def test_a_hunk_is_placed_present_missing_or_ambiguous(target: bytes, state: PlanState) -> None:
    (fp,) = parse_diff(DIFF, Path("f.patch"))
    plans = place(Placer(FileView("f.txt", split_lines(target)), None), fp.hunks)
    assert [p.state for p in plans] == [state]


def test_the_states_are_the_five_the_engine_knows() -> None:
    assert [s.value for s in PlanState] == ["apply", "present", "missing", "ambiguous", "merged"]
