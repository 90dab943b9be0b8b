"""Keep going, on purpose: a patch that may fail (``on_failure = "skip"`` in its metadata, or
every patch with ``apply --keep-going``) is left out when it fails and the rest apply atomically;
the exit code (11) says something was skipped. Never the default."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.ops.apply_tree import ApplyFailed
from patchkit.outcome import Outcome
from patchkit.workspace.state import StateStore
from testing.builders import Scenario, snapshot
from tests.ops.test_apply import FILES, four_patches


def _third_conflicts(tmp_path: Path) -> Scenario:
    s = four_patches(tmp_path)
    s.upstream.commit({"c": FILES["c"].replace("c two", "c changed upstream")})
    s.lock_to_head()
    return s


def _may_fail(s: Scenario, patch_id: str) -> None:
    meta = s.set_root / "patches" / f"{patch_id}.toml"
    meta.write_text(meta.read_text() + 'on_failure = "skip"\n')


def test_a_patch_that_may_fail_is_left_out_and_the_rest_apply(tmp_path: Path) -> None:
    s = _third_conflicts(tmp_path)
    _may_fail(s, "p3")
    report = s.apply()
    assert [(r.patch_id, r.outcome) for r in report.skipped] == [("p3", Outcome.CONFLICT)]
    assert [r.patch_id for r in report.results] == ["p1", "p2", "p4"]
    assert b"a TWO" in s.read("a") and b"d TWO" in s.read("d") and b"c TWO" not in s.read("c")
    state = StateStore(s.tree().state_dir).load()
    assert state is not None and [p.id for p in state.patches] == ["p1", "p2", "p4"]


def test_without_it_one_failure_still_writes_nothing(tmp_path: Path) -> None:
    s = _third_conflicts(tmp_path)
    before = snapshot(s.root)
    with pytest.raises(ApplyFailed):
        s.apply()
    assert snapshot(s.root) == before


def test_keep_going_on_the_command_line_exits_11_naming_the_skipped_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _third_conflicts(tmp_path)
    monkeypatch.chdir(s.root)
    project = str(s.project.path)
    args = ["apply", "--target", "demo", "--project", project, "--checkout", str(s.root)]
    assert main([*args, "--json"]) == 6  # the default: all or nothing
    capsys.readouterr()
    assert main([*args, "--json", "--keep-going"]) == 11
    out = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in out["skipped"]] == ["p3"]
    assert b"a TWO" in s.read("a")


def test_a_bad_on_failure_value_names_the_file_and_key(tmp_path: Path) -> None:
    s = four_patches(tmp_path)
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(meta.read_text() + 'on_failure = "maybe"\n')
    from patchkit.errors import ConfigError

    with pytest.raises(ConfigError, match=r"p1\.toml.*on_failure.*\"stop\" or \"skip\""):
        s.patches()
    assert os.path.exists(meta)
