"""A verification records file is data anyone may have edited: a field of the wrong type or
an unknown proof is a clear error naming the file (exit 2), never a crash in status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.verification.records import load_records


def _record(**changes: object) -> dict[str, object]:
    base = {
        "patch": "p", "digest": "d" * 64, "target": "demo", "lock_commit": "c" * 40,
        "lock_version": "1.0", "tree_commit": None, "result": "passed", "reason": "",
        "tests": [], "environment": {"python": "3.11", "platform": "linux"},
        "time": "2026-11-25T10:00:00Z",
        "duration_s": 1.0,
    }  # fmt: skip
    return {**base, **changes}


def test_a_sound_record_reads(tmp_path: Path) -> None:
    (tmp_path / "patchset.toml").write_text("")
    (tmp_path / "verification.json").write_text(json.dumps([_record(proof="proven")]))
    [record] = load_records(tmp_path)
    assert record.proof == "proven"


@pytest.mark.parametrize(
    "changes", [{"proof": "bogus"}, {"time": 5}, {"patch": None}, {"result": ["x"]}]
)
def test_a_hostile_record_names_the_file(tmp_path: Path, changes: dict[str, object]) -> None:
    (tmp_path / "patchset.toml").write_text("")
    path = tmp_path / "verification.json"
    path.write_text(json.dumps([_record(**changes)]))
    with pytest.raises(ConfigError, match=r"verification\.json: malformed verification record"):
        load_records(tmp_path)
