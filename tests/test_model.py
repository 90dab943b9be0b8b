"""The one outcome vocabulary: a patch's outcome from its parts, what is carried, and an applied
patch judged against its base."""

from __future__ import annotations

import pytest

from patchkit.outcome import Outcome


def test_an_applied_patch_on_changed_files_was_carried() -> None:
    assert Outcome.APPLIED.since_base(lambda: True) is Outcome.APPLIED
    assert Outcome.APPLIED.since_base(lambda: False) is Outcome.CARRIED


@pytest.mark.parametrize("outcome", [o for o in Outcome if o is not Outcome.APPLIED])
def test_only_an_applied_patch_asks_whether_its_files_changed(outcome: Outcome) -> None:
    def never() -> bool:
        raise AssertionError("asked")

    assert outcome.since_base(never) is outcome


def test_carried_is_every_outcome_that_leaves_the_change_on_the_tree() -> None:
    assert {o for o in Outcome if o.carried} == {
        Outcome.APPLIED,
        Outcome.CARRIED,
        Outcome.UPSTREAMED,
        Outcome.PARTLY_UPSTREAMED,
    }


def test_the_groups_of_outcomes_each_question_asks() -> None:
    def group(question: str) -> set[Outcome]:
        return {o for o in Outcome if getattr(o, question)}

    assert group("writes") == {Outcome.APPLIED, Outcome.CARRIED, Outcome.PARTLY_UPSTREAMED}
    assert group("moved") == {Outcome.CARRIED, Outcome.PARTLY_UPSTREAMED}
    assert group("absorbed") == {Outcome.UPSTREAMED, Outcome.PARTLY_UPSTREAMED}
    assert group("ok") == {Outcome.APPLIED, Outcome.CARRIED, Outcome.UPSTREAMED}
