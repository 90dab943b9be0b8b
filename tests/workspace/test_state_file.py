"""The state file: written as ``asdict`` would give it, read back whole."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from patchkit.workspace.state import AppliedPatch, FileRecord, State, StateStore


def _state() -> State:
    patch = AppliedPatch("p1", "demo", "diff", "d" * 64, "applied", "exact", ("a.py", "b/c.py"))
    return State(
        "demo",
        "abc123",
        "1.0",
        (patch,),
        {
            "a.py": FileRecord("a.py", "o" * 64, 0o100644, "r" * 64, None),
            "b/c.py": FileRecord("b/c.py", None, None, "n" * 64, 0o100755),
        },
    )


def test_the_state_file_holds_every_field_and_reads_back(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.save(_state())
    expected = asdict(_state()) | {"version": 1}
    assert store.file.read_text() == json.dumps(expected, indent=2, sort_keys=True) + "\n"
    assert store.load() == _state()
