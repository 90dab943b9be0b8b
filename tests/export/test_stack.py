"""``export-pr --stack``: one branch per patch, each on the previous patch's commit, the
dependency stated in each PR text (ghstack-like)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import ConfigError, PatchFailed
from tests.export.test_export import MOD, Case

STEP1 = MOD.replace("x + 1", "x + 2")
STEP2 = STEP1.replace("x * 2", "x * 3")
STEP3 = STEP2.replace("x + 2", "x + 5")  # changes the line step 1 changed: needs step 1


def stacked_case(tmp_path: Path) -> Case:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    case.add("one", {"pkg/mod.py": STEP1}, 'title = "One"\nwhy = "one"\n')
    case.project.add_diff("three", case.upstream.diff_of({"pkg/mod.py": STEP1}))
    case.add("two", {"pkg/mod.py": STEP2.replace("x + 2", "x + 1")}, 'title = "Two"\nwhy = "two"\n')
    (case.patches_dir / "three.patch").write_bytes(_diff(case, STEP2, STEP3))
    case.set_meta("three", 'title = "Three"\nwhy = "three"\n')
    return case


def _diff(case: Case, before: str, after: str) -> bytes:
    """A diff from ``before`` to ``after`` of pkg/mod.py (written at the base, then undone)."""
    saved = case.upstream.commit({"pkg/mod.py": before}, "scratch")
    diff = case.upstream.diff_of({"pkg/mod.py": after})
    case.git("reset", "-q", "--hard", "HEAD~1")
    assert saved
    return diff


def test_each_branch_is_on_the_previous_one(tmp_path: Path) -> None:
    case = stacked_case(tmp_path)
    report = case.export("one", "two", "three", stack=True)
    one, two, three = report.exports
    assert one.parent == case.base and two.parent == one.commit and three.parent == two.commit
    assert [e.branch for e in report.exports] == ["test/one", "test/two", "test/three"]
    assert case.git("show", f"{three.commit}:pkg/mod.py") == STEP3.rstrip("\n")
    assert case.git("rev-list", "--count", f"{case.base}..{three.commit}") == "3"
    # two applies without one: stacked on it, no dependency claimed; three needs two
    assert "Stacked on “One” (not yet proposed) for review; it does not depend on it." in (
        two.text.body
    )
    assert "Depends on" not in two.text.body
    assert "Depends on “Two” (not yet proposed)." in three.text.body
    assert "Depends on" not in one.text.body
    for e in report.exports:  # no id of ours in what goes upstream
        assert "`one`" not in e.text.body and "one." not in e.text.commit_message
    assert three.stacked_on == ("one", "two")


def test_without_stack_the_dependent_patch_does_not_apply(tmp_path: Path) -> None:
    case = stacked_case(tmp_path)
    with pytest.raises(PatchFailed, match="cannot export three"):
        case.export("three")


def test_a_requirement_left_out_of_the_stack_is_refused(tmp_path: Path) -> None:
    case = stacked_case(tmp_path)
    case.set_meta("three", 'title = "Three"\nwhy = "three"\nrequires = ["one"]\n')
    with pytest.raises(ConfigError, match="three requires one, which is not below it"):
        case.export("two", "three", stack=True)


def test_restacking_is_idempotent(tmp_path: Path) -> None:
    case = stacked_case(tmp_path)
    first = case.export("one", "two", "three", stack=True)
    second = case.export("one", "two", "three", stack=True)
    assert [e.commit for e in first.exports] == [e.commit for e in second.exports]
    assert {e.state.value for e in second.exports} == {"unchanged"}
