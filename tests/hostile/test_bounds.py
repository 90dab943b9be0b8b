"""Numbers from input that Python cannot or should not hold: a hunk header with thousands of
digits, a compute capability of thousands of digits, a wait of ``nan`` seconds. Each is a
message naming the file (or the variable) and an exit code, never a crash (70) or a wait that
does not end."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cluster import connect
from patchkit.errors import ConfigError
from testing.builders import Scenario, snapshot
from tests.hostile.common import run, scenario

HUGE = "9" * 5000


def test_a_hunk_header_with_5000_digits_is_a_malformed_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path / "work", {"a.txt": "a one\na two\n"})
    diff = f"--- a/a.txt\n+++ b/a.txt\n@@ -1,{HUGE} +1,2 @@\n a one\n-a two\n+a TWO\n"
    s.project.add_diff("p1", diff.encode())
    before = snapshot(s.root)
    assert run(s, "apply") == 6
    said = capsys.readouterr()
    assert "p1.patch: not a valid unified diff: a hunk header with a number" in said.out
    assert snapshot(s.root) == before


@pytest.mark.parametrize(
    "meta",
    [
        f'[pr]\nhardware = ["{HUGE}.0"]\n',
        f'[[tests]]\nnode = "tests/test_x.py"\nmin_capability = "{HUGE}.0"\n',
    ],
    ids=["pr-hardware", "tests-min-capability"],
)
def test_a_capability_of_5000_digits_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], meta: str
) -> None:
    s = scenario(tmp_path)
    path = s.set_root / "patches" / "p1.toml"
    text = path.read_text()
    path.write_text(text + meta if meta.startswith("[[") else meta + text)
    path.write_text(_tables_last(path.read_text()))
    assert run(s, "status") == 2
    assert "p1.toml" in capsys.readouterr().err


def _tables_last(text: str) -> str:
    """Top-level keys first, tables after (as TOML wants)."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("["))
    keys_after = next(
        (i for i, line in enumerate(lines[start:], start) if line.startswith("id =")), None
    )
    if keys_after is None:
        return text
    return "".join(lines[keys_after:] + lines[start:keys_after] + lines[:start])


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "ten"])
def test_a_lock_timeout_that_is_no_number_of_seconds_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    s = scenario(tmp_path)
    monkeypatch.setenv("PATCHKIT_LOCK_TIMEOUT", value)
    assert run(s, "apply") == 2
    assert "PATCHKIT_LOCK_TIMEOUT" in capsys.readouterr().err


def test_a_ray_connect_timeout_that_is_no_number_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATCHKIT_RAY_CONNECT_TIMEOUT", "abc")
    with pytest.raises(ConfigError, match="PATCHKIT_RAY_CONNECT_TIMEOUT='abc' is refused"):
        connect("127.0.0.1:1")
