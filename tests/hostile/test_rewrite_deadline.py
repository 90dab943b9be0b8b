"""A rewrite that never ends — a loop at import, a ``leave_*`` method that loops and swallows
every Exception, a needle regex that backtracks for ever — is stopped after
``PATCHKIT_REWRITE_TIMEOUT`` seconds: a failed patch naming the file and the step (exit 6),
never a command that waits for ever."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from patchkit.engine.rewrite.load import load_rewrites
from patchkit.errors import ConfigError
from testing.builders import Scenario, snapshot
from tests.hostile.common import run

HEAD = "from patchkit.engine.rewrite import Rewrite\n"
CLASS = "class R(Rewrite):\n    path = 'm.py'\n    anchors = {'f': 1}\n"
STUCK_METHOD = (
    "    def leave_Name(self, o, u):\n        while True:\n            try:\n"
    "                pass\n            except Exception:\n                pass\n"
)


@pytest.fixture(autouse=True)
def one_second(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHKIT_REWRITE_TIMEOUT", "1")


def test_a_module_that_loops_at_import_is_stopped(tmp_path: Path) -> None:
    module = tmp_path / "r1.py"
    module.write_text(HEAD + "while True:\n    pass\n" + CLASS)
    started = time.monotonic()
    with pytest.raises(
        ConfigError, match=r"r1\.py: importing the rewrite: still running after 1 s"
    ):
        load_rewrites(module)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    "body",
    [
        CLASS + STUCK_METHOD,
        "class R(Rewrite):\n    path = 'x.py'\n    search = ('*.py',)\n"
        "    needles = ('(a+)+$',)\n    anchors = {'f': 1}\n",
    ],
    ids=["method-loops", "needle-backtracks"],
)
def test_a_rewrite_that_never_ends_is_a_failed_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    s = Scenario(tmp_path / "work", {"m.py": "def f():\n    return x\n# " + "a" * 40 + "!\n"})
    s.project.add_rewrite("r1", HEAD + body)
    before = snapshot(s.root)
    assert run(s, "apply") == 6
    said = capsys.readouterr()
    assert "r1.py: " in said.out and "still running after 1 s; stopped" in said.out
    assert snapshot(s.root) == before


@pytest.mark.parametrize(
    "body",
    [
        "try:\n    while True:\n        pass\nfinally:\n    while True:\n        pass\n" + CLASS,
        CLASS + "    @classmethod\n    def selector(cls):\n        while True:\n            pass\n",
    ],
    ids=["loops-again-in-finally", "selector-loops"],
)
def test_a_rewrite_that_outlives_the_first_alarm_is_stopped(tmp_path: Path, body: str) -> None:
    s = Scenario(tmp_path / "work", {"m.py": "def f():\n    return x\n"})
    s.project.add_rewrite("r1", HEAD + body)
    started = time.monotonic()
    assert run(s, "apply") == 6
    assert time.monotonic() - started < 20


def test_a_zero_time_limit_is_refused_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATCHKIT_REWRITE_TIMEOUT", "0")
    module = tmp_path / "r1.py"
    module.write_text(HEAD + CLASS)
    with pytest.raises(ConfigError, match=r"PATCHKIT_REWRITE_TIMEOUT='0' is refused"):
        load_rewrites(module)
