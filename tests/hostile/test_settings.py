"""A ``PATCHKIT_REWRITE_TIMEOUT`` that is no time limit (0, negative, no number, ``nan``, more
than a day) is the command's setting, not one patch's failure: the command stops with a usage
or configuration error (exit 2) naming the variable and the values it takes, before anything
is written; never exit 6 blaming the patch."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import SettingRefused
from patchkit.trust.envvars import seconds
from testing.builders import Scenario, snapshot
from tests.hostile.common import run

REWRITE = (
    "from patchkit.engine.rewrite import Rewrite\n"
    "class R(Rewrite):\n    path = 'm.py'\n    anchors = {'f': 1}\n"
)
BAD = ["0", "0.0", "-1", "-0.5", "ten", "nan", "inf", "1e9", "86401", "1e400", "0x10"]


@pytest.mark.parametrize("value", BAD)
def test_a_rewrite_time_limit_that_is_none_stops_the_command_naming_the_variable(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
) -> None:
    s = Scenario(tmp_path / "work", {"m.py": "def f():\n    return x\n"})
    s.project.add_rewrite("r1", REWRITE)
    monkeypatch.setenv("PATCHKIT_REWRITE_TIMEOUT", value)
    before = snapshot(s.root)

    assert run(s, "apply") == 2
    said = capsys.readouterr().err
    assert "PATCHKIT_REWRITE_TIMEOUT=" in said and "is refused" in said
    assert "a number of seconds above 0, at most 86400" in said
    assert snapshot(s.root) == before


def test_a_rewrite_after_a_diff_stops_the_command_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = Scenario(tmp_path / "work", {"m.py": "def f():\n    return x\n", "a.txt": "a\n"})
    s.add("p1", {"a.txt": "b\n"})
    s.project.add_rewrite("r1", REWRITE)
    monkeypatch.setenv("PATCHKIT_REWRITE_TIMEOUT", "0")
    before = snapshot(s.root)

    assert run(s, "apply", "--keep-going") == 2
    assert snapshot(s.root) == before


@pytest.mark.parametrize(("value", "expected"), [("", 120.0), ("0.5", 0.5), ("86400", 86400.0)])
def test_a_time_limit_in_range_is_taken(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: float
) -> None:
    monkeypatch.setenv("PATCHKIT_X_TIMEOUT", value)
    assert seconds("PATCHKIT_X_TIMEOUT", 120.0, above_zero=True) == expected


def test_zero_is_a_wait_where_a_wait_may_be_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHKIT_X_TIMEOUT", "0")
    assert seconds("PATCHKIT_X_TIMEOUT", 10.0) == 0.0
    with pytest.raises(SettingRefused, match=r"PATCHKIT_X_TIMEOUT='0' is refused: .* above 0"):
        seconds("PATCHKIT_X_TIMEOUT", 10.0, above_zero=True)
