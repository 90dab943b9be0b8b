"""A stopped rebase's saved state keeps what bisection found as the outcome enum: its value in
the state file, an ``Outcome`` once read back; a value that is no outcome makes the state
unreadable (named), never a string compared with an enum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.outcome import Outcome
from patchkit.rebasing.bisect import Bisected
from patchkit.rebasing.conflicts import STATE, RebaseState, load_state, save_state
from patchkit.upstream.history import Point


def _state() -> RebaseState:
    found = {
        "p": Bisected(absorbed_by="1.1", probes=2, outcome=Outcome.UPSTREAMED),
        "q": Bisected(),
    }
    return RebaseState("/project", "demo", None, Point("1.2", "1.2"), False, ["q"], found)


def test_the_outcome_is_its_value_in_the_file_and_an_enum_read_back(tmp_path: Path) -> None:
    save_state(tmp_path, _state())
    raw = json.loads((tmp_path / STATE).read_text())
    assert raw["found"]["p"]["outcome"] == "upstreamed" and raw["found"]["q"]["outcome"] is None
    back = load_state(tmp_path)
    assert back == _state() and back.found["p"].outcome is Outcome.UPSTREAMED


def test_a_state_with_no_such_outcome_is_unreadable(tmp_path: Path) -> None:
    save_state(tmp_path, _state())
    path = tmp_path / STATE
    path.write_text(path.read_text().replace('"upstreamed"', '"absorbed-ish"'))
    with pytest.raises(ConfigError, match="saved rebase state is unreadable"):
        load_state(tmp_path)
