"""The state file: written as ``asdict`` would give it, read back whole."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from patchkit.errors import TreeError
from patchkit.model import PatchKind
from patchkit.outcome import Outcome, Step
from patchkit.workspace.state import AppliedPatch, FileRecord, State, StateStore

# A state file as patchkit wrote it before the state held its outcomes as enums: strings.
OLD_STATE = """{
  "commit": "abc123",
  "files": {
    "a.py": {
      "original": "ORIGINAL",
      "original_mode": 33188,
      "path": "a.py",
      "result": "RESULT",
      "result_mode": null
    }
  },
  "lock_version": "1.0",
  "patches": [
    {
      "digest": "DIGEST",
      "files": [
        "a.py"
      ],
      "id": "p1",
      "kind": "diff",
      "outcome": "upstreamed",
      "set_name": "demo",
      "step": "probe"
    }
  ],
  "target": "demo",
  "version": 1
}
"""
OLD_STATE = (
    OLD_STATE.replace("ORIGINAL", "o" * 64).replace("RESULT", "r" * 64).replace("DIGEST", "d" * 64)
)


def _state() -> State:
    patch = AppliedPatch(
        "p1", "demo", PatchKind.DIFF, "d" * 64, Outcome.APPLIED, Step.EXACT, ("a.py", "b/c.py")
    )
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


def test_a_state_file_written_before_reads_back_with_its_outcome_as_the_enum(
    tmp_path: Path,
) -> None:
    """Old state files (strings for kind, outcome, step) load, as the project's one outcome
    vocabulary, and are written again byte for byte."""
    store = StateStore(tmp_path)
    store.file.write_text(OLD_STATE)
    state = store.load()
    assert state is not None
    (patch,) = state.patches
    assert patch.outcome is Outcome.UPSTREAMED and patch.outcome.absorbed
    assert patch.step is Step.PROBE and patch.kind is PatchKind.DIFF
    store.save(state)
    assert store.file.read_text() == OLD_STATE


@pytest.mark.parametrize("key", ["outcome", "step", "kind"])
def test_a_state_file_naming_no_known_outcome_is_refused_as_malformed(
    tmp_path: Path, key: str
) -> None:
    store = StateStore(tmp_path)
    store.file.write_text(OLD_STATE.replace(f'"{key}": "', f'"{key}": "no-such-'))
    with pytest.raises(TreeError, match=rf"malformed patchkit state: patches\[0\]\.{key}"):
        store.load()
