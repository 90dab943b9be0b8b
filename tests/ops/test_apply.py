"""apply / reset / status on a checkout: all or nothing, idempotent, exact, never losing an edit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import patchkit.workspace.tree
import patchkit.workspace.txn
from patchkit.errors import TreeError
from patchkit.ops.apply_tree import ApplyFailed
from patchkit.outcome import Outcome
from patchkit.workspace.state import StateStore
from testing.builders import Scenario, file_stamps, git_status, snapshot

FILES = {name: f"{name} one\n{name} two\n{name} three\n" for name in ("a", "b", "c", "d")}


def edited(name: str, line: str = "two") -> dict[str, str]:
    return {name: FILES[name].replace(f"{name} {line}", f"{name} {line.upper()}")}


def four_patches(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, {**FILES, "run.sh": "echo\n", "crlf.txt": b"x\r\ny\r\n"})
    s.add("p1", edited("a"))
    s.add("p2", {**edited("b"), "new/file.txt": "created\n"})
    s.add("p3", edited("c"))
    s.add("p4", {**edited("d"), "crlf.txt": b"x\r\nY\r\n"})
    return s


# -- all or nothing --------------------------------------------------------------------------


def test_failure_in_third_of_four_patches_leaves_tree_byte_identical(tmp_path: Path) -> None:
    s = four_patches(tmp_path)
    os.chmod(s.root / "run.sh", 0o755)
    s.upstream.commit({"c": FILES["c"].replace("c two", "c changed upstream")})
    s.lock_to_head()
    before, status = snapshot(s.root), git_status(s.root)
    with pytest.raises(ApplyFailed, match=r"p3 \(conflict\)") as info:
        s.apply()
    assert info.value.exit_code == 6
    assert [(r.patch_id, r.outcome) for r in info.value.results] == [
        ("p1", Outcome.APPLIED),
        ("p2", Outcome.APPLIED),
        ("p3", Outcome.CONFLICT),
    ]
    assert snapshot(s.root) == before
    assert git_status(s.root) == status
    assert StateStore(s.tree().state_dir).load() is None


def _failing_on_call(n: int):  # type: ignore[no-untyped-def]
    real, calls = patchkit.workspace.tree.write_file, []

    def write_file(path: Path, content: bytes, mode: int | None) -> None:
        calls.append(path)
        if len(calls) == n:
            raise OSError(f"disk full writing {path}")
        real(path, content, mode)

    return write_file


def _break_writes(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """The ``n``th file write fails (both names txn may call it by)."""
    failing = _failing_on_call(n)
    monkeypatch.setattr(patchkit.workspace.tree, "write_file", failing)
    monkeypatch.setattr(patchkit.workspace.txn, "write_file", failing)


def test_crash_during_writes_puts_every_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = four_patches(tmp_path)
    before, status = snapshot(s.root), git_status(s.root)
    _break_writes(monkeypatch, 2)
    with pytest.raises(TreeError, match="disk full"):
        s.apply()
    assert snapshot(s.root) == before
    assert git_status(s.root) == status
    store = StateStore(s.tree().state_dir)
    assert store.load() is None
    assert not (store.dir / "journal.json").exists()


def test_crash_during_reset_leaves_the_patched_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = four_patches(tmp_path)
    s.apply()
    applied = snapshot(s.root)
    _break_writes(monkeypatch, 2)
    with pytest.raises(TreeError, match="disk full"):
        s.reset()
    assert snapshot(s.root) == applied
    assert set(s.status().values()) == {"applied"}


def test_leftover_journal_from_a_crashed_run_is_recovered_on_next_apply(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "one\ntwo\n"})
    s.add("p", {"a.txt": "one\nTWO\n"})
    store = StateStore(s.tree().state_dir)
    journal = {"a.txt": {"sha256": store.put(b"one\ntwo\n"), "mode": 0o100644}}
    (s.root / "a.txt").write_bytes(b"one\nTW")  # the crashed run got this far
    (store.dir / "journal.json").write_text(json.dumps({"files": journal, "new_state": "x"}))
    report = s.apply()
    assert report.recovered is not None and report.recovered.restored == ("a.txt",)
    assert s.read("a.txt") == b"one\nTWO\n"
    assert not (store.dir / "journal.json").exists()
    s.reset()
    assert s.read("a.txt") == b"one\ntwo\n"


# -- idempotent, exact -----------------------------------------------------------------------


def test_reapply_is_a_noop_that_rewrites_nothing(tmp_path: Path) -> None:
    s = four_patches(tmp_path)
    first = s.apply()
    assert first.written and not first.noop
    applied, stamps = snapshot(s.root), file_stamps(s.root)
    again = s.apply()
    assert again.noop and again.written == ()
    assert file_stamps(s.root) == stamps
    assert snapshot(s.root) == applied


def test_applying_an_edited_series_replaces_the_old_one_exactly(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    version_two = s.upstream.diff_of(edited("a", "three"))
    patch = s.add("p1", {**edited("a"), "extra.txt": "only in version one\n"})
    expected = {**snapshot(s.root), "a": ((FILES["a"].replace("three", "THREE")).encode(), 0o644)}
    s.apply()
    patch.write_bytes(version_two)
    s.apply()
    assert snapshot(s.root) == expected
    assert s.status() == {"p1": "applied"}


def test_removing_a_patch_from_the_series_restores_its_files(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    s.add("p2", {**edited("b"), "new.txt": "new\n"})
    base = snapshot(s.root)
    s.apply()
    s.set_series(["p1"])
    report = s.apply()
    assert set(report.written) == {"b", "new.txt"}
    assert snapshot(s.root) == {**base, "a": (edited("a")["a"].encode(), 0o644)}
    assert s.status() == {"p1": "applied"}
    s.set_series([])
    s.apply()
    assert snapshot(s.root) == base
    assert StateStore(s.tree().state_dir).load() is None


def test_status_tracks_applied_modified_and_outdated(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    other = s.upstream.diff_of(edited("b", "one"))
    s.add("p1", edited("a"))
    p2 = s.add("p2", edited("b"))
    assert s.status() == {"p1": "not applied", "p2": "not applied"}
    s.apply()
    assert s.status() == {"p1": "applied", "p2": "applied"}
    (s.root / "a").write_text("mine\n")
    p2.write_bytes(other)
    assert s.status() == {"p1": "modified since apply", "p2": "outdated"}


# -- reset -----------------------------------------------------------------------------------


def test_reset_restores_every_file_byte_for_byte(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"crlf.txt": b"a\r\nb\r\n", "run.sh": "echo\n", "gone.txt": "bye\n"})
    os.chmod(s.root / "run.sh", 0o755)
    s.upstream.commit({}, "executable")
    s.lock_to_head()
    s.add("p1", {"crlf.txt": b"a\r\nB\r\n", "run.sh": "echo patched\n", "made/new.txt": "n\n"})
    s.add_edit("p2", lambda root: os.remove(root / "gone.txt"))
    before, status = snapshot(s.root), git_status(s.root)
    s.apply()
    changed = snapshot(s.root)
    assert changed["run.sh"] == (b"echo patched\n", 0o755)
    assert "gone.txt" not in changed and "made/new.txt" in changed
    report = s.reset()
    assert set(report.restored) == {"crlf.txt", "run.sh", "gone.txt", "made/new.txt"}
    assert snapshot(s.root) == before
    assert git_status(s.root) == status
    assert not (s.root / "made").exists()
    assert s.status() == {"p1": "not applied", "p2": "not applied"}


def test_reset_refuses_when_a_patched_file_was_edited(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    s.apply()
    (s.root / "a").write_bytes(b"my edit\n")
    with pytest.raises(TreeError, match=r"edited after patchkit applied them: a") as info:
        s.reset()
    assert info.value.exit_code == 4
    assert s.read("a") == b"my edit\n"


def test_forced_reset_saves_the_edit_aside_then_restores(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    s.apply()
    (s.root / "a").write_bytes(b"my edit\n")
    report = s.reset(force=True)
    assert report.saved_aside is not None
    assert (report.saved_aside / "a").read_bytes() == b"my edit\n"
    assert s.read("a") == FILES["a"].encode()


def test_apply_refuses_when_a_patched_file_was_edited(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    s.add("p2", edited("b"))
    s.apply()
    s.set_series(["p1"])
    (s.root / "a").write_bytes(b"my edit\n")
    with pytest.raises(TreeError, match="edited since: a"):
        s.apply()
    assert s.read("a") == b"my edit\n"
    assert s.read("b") == edited("b")["b"].encode()


# -- what the tree must be -------------------------------------------------------------------


def _dirty_scenario(tmp_path: Path) -> Scenario:
    body = "".join(f"line{i}\n" for i in range(1, 21))
    s = Scenario(tmp_path, {"m.txt": body})
    s.add("p", {"m.txt": body.replace("line15\n", "line15 patched\n")})
    (s.root / "m.txt").write_text(body.replace("line1\n", "my uncommitted line\n"))
    return s


def test_uncommitted_changes_in_a_patched_file_are_refused(tmp_path: Path) -> None:
    s = _dirty_scenario(tmp_path)
    before = snapshot(s.root)
    with pytest.raises(TreeError, match=r"uncommitted changes .*m\.txt") as info:
        s.apply()
    assert info.value.exit_code == 4
    assert snapshot(s.root) == before


def test_allow_dirty_patches_on_top_and_reset_restores_the_dirty_version(tmp_path: Path) -> None:
    s = _dirty_scenario(tmp_path)
    mine = s.read("m.txt")
    s.apply(allow_dirty=True)
    assert s.read("m.txt") == mine.replace(b"line15\n", b"line15 patched\n")
    s.reset()
    assert s.read("m.txt") == mine


def test_uncommitted_edit_clashing_with_a_patch_is_refused_as_dirty(tmp_path: Path) -> None:
    s = _dirty_scenario(tmp_path)
    (s.root / "m.txt").write_text(s.read("m.txt").decode().replace("line15", "my line15"))
    with pytest.raises(TreeError, match="uncommitted changes"):
        s.apply()


def test_uncommitted_changes_elsewhere_do_not_block_apply(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    (s.root / "b").write_text("mine\n")
    (s.root / "untracked.txt").write_text("mine too\n")
    s.apply()
    assert s.read("b") == b"mine\n"


def test_tree_at_another_commit_is_refused(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    s.upstream.commit({"unrelated.txt": "x\n"})
    with pytest.raises(TreeError, match=f"locked at {s.base}") as info:
        s.apply()
    assert info.value.exit_code == 4
    assert s.read("a") == FILES["a"].encode()


def test_tree_at_another_commit_is_patched_when_allowed(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", edited("a"))
    head = s.upstream.commit({"unrelated.txt": "x\n"})
    report = s.apply(allow_other_commit=True)
    assert report.commit == head
    assert [r.outcome for r in report.results] == [Outcome.APPLIED]
    assert s.read("a") == edited("a")["a"].encode()


def test_an_unreadable_journal_stops_with_a_message_not_a_crash(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "one\ntwo\n"})
    s.add("p", {"a.txt": "one\nTWO\n"})
    journal = s.root / ".git" / "patchkit" / "journal.json"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"files": {"a.t')  # damaged from outside: patchkit writes it whole
    before = snapshot(s.root)
    with pytest.raises(TreeError, match=r"journal .* is unreadable") as info:
        s.apply()
    assert "remove" in (info.value.hint or "")
    assert snapshot(s.root) == before


def test_an_edit_made_while_apply_runs_is_kept_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone saves a file after apply read it and before apply writes: apply refuses, the
    edit stays, nothing is written, and a later apply patches the edited file."""
    import patchkit.ops.apply_tree as ops_apply

    s = four_patches(tmp_path)
    real = ops_apply.run_series

    def series_then_edit(*args: object, **kw: object) -> object:
        results = real(*args, **kw)  # type: ignore[arg-type]
        (s.root / "c").write_text("c one\nc two\nc three\nsaved meanwhile\n")
        return results

    monkeypatch.setattr(ops_apply, "run_series", series_then_edit)
    with pytest.raises(TreeError, match=r"changed .* while `patchkit apply` ran"):
        s.apply()
    assert s.read("c") == b"c one\nc two\nc three\nsaved meanwhile\n"
    assert s.read("a") == FILES["a"].encode()  # nothing written
    assert StateStore(s.tree().state_dir).load() is None
    monkeypatch.setattr(ops_apply, "run_series", real)
    s.apply(allow_dirty=True)
    assert s.read("c") == b"c one\nc TWO\nc three\nsaved meanwhile\n"
