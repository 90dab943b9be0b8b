"""verify proves each patch: its tests run on the unpatched tree too (a worktree at the tree's
commit, or --baseline), in the same run. Fails without and passes with -> proven; passes
without -> proves nothing (an error with --strict); the unpatched run is kept in the record and
not repeated while the patch, its tests and the lock are unchanged."""

from __future__ import annotations

import argparse
import contextlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from patchkit.cli import verify as verify_cli
from patchkit.errors import VerificationFailed
from patchkit.ops.verify import raise_for, verify
from patchkit.ops.verify_bench import Unpatched
from patchkit.project.lock import load_lock
from patchkit.verification.env import Environment, JobResult, LocalRunner
from patchkit.verification.env import TestJob as Job
from patchkit.verification.proof import Proof, judge, proof_text
from patchkit.verification.records import Record, load_records
from patchkit.verification.records import TestRecord as TRecord
from patchkit.verification.run import VerifyReport
from testing.builders import Scenario

NO_GPU = Environment(python="3.11.7", platform="Linux-test")
UPSTREAM: dict[str, str | bytes] = {
    "demo/__init__.py": "",
    "demo/calc.py": "def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n",
}
TESTS = {
    # reaches the changed code: fails on upstream's add
    "test_add.py": "from demo.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    # never reaches it: passes on upstream's code as well
    "test_mul.py": "from demo.calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}
FIXED = "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 25, 10, 0, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


class Counting:
    """The local runner, counting the jobs per tree they ran on."""

    def __init__(self) -> None:
        self.trees: list[Path] = []

    def run(self, job: Job) -> JobResult:
        self.trees.append(job.pythonpath[0])
        return LocalRunner().run(job)


def _scenario(tmp_path: Path, test: str) -> Scenario:
    s = Scenario(tmp_path, UPSTREAM)
    s.add("fix-add", {"demo/calc.py": FIXED})
    meta = s.set_root / "patches" / "fix-add.toml"
    meta.write_text(meta.read_text() + f'\n[[tests]]\nwhere = "set"\nnode = "tests/{test}"\n')
    (s.set_root / "tests").mkdir()
    for name, text in TESTS.items():
        (s.set_root / "tests" / name).write_text(text)
    s.apply()
    return s


def _verify(s: Scenario, runner: object = None, **kw: object) -> VerifyReport:
    with contextlib.ExitStack() as stack:
        return verify(
            tree_root=s.root,
            patches=s.patches(),
            lock=load_lock(s.lock_path),
            runner=runner or LocalRunner(),  # type: ignore[arg-type]
            environment=NO_GPU,
            clock=Clock(),
            unpatched=Unpatched(stack, s.tree(), None),
            **kw,  # type: ignore[arg-type]
        )


def test_a_test_that_fails_without_the_patch_proves_it(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "test_add.py")
    (record,) = _verify(s, record=False).records
    assert (record.result, record.proof) == ("passed", "proven")
    assert record.proof_reason.startswith("fails without the patch: tests/test_add.py: ")
    assert "assert -1 == 5" in record.proof_reason
    assert [(t.node, t.result) for t in record.unpatched] == [("tests/test_add.py", "failed")]
    assert s.status() == {"fix-add": "applied"}  # the patched tree is left as it was


def test_a_test_that_passes_without_the_patch_proves_nothing(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "test_mul.py")
    report = _verify(s, record=False)
    (record,) = report.records
    assert (record.result, record.proof) == ("passed", "proves nothing")
    assert record.proof_reason == "passes without the patch too: tests/test_mul.py"
    raise_for(report)  # a warning, not a failure ...
    with pytest.raises(VerificationFailed, match="fix-add proves nothing") as info:
        raise_for(report, strict=True)  # ... except with --strict
    assert info.value.exit_code == 7


def test_the_unpatched_run_is_kept_and_not_repeated(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "test_add.py")
    first, second = Counting(), Counting()
    (one,) = _verify(s, first).records
    (two,) = _verify(s, second).records
    assert len(first.trees) == 2 and first.trees[1] != s.root.resolve()  # patched, unpatched
    assert second.trees == [s.root.resolve()]  # patched only: the proof is reused
    assert two.proof == "proven" and two.unpatched == one.unpatched
    assert two.unpatched_time == one.unpatched_time != two.time
    # a changed test is proven again
    test = s.set_root / "tests" / "test_add.py"
    test.write_text(test.read_text() + "\n\ndef test_add_zero():\n    assert add(0, 1) == 1\n")
    third = Counting()
    _verify(s, third)
    assert len(third.trees) == 2


def test_no_unpatched_tree_is_not_run_with_the_reason(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "test_add.py")
    (record,) = verify(
        tree_root=s.root,
        patches=s.patches(),
        lock=load_lock(s.lock_path),
        runner=LocalRunner(),
        environment=NO_GPU,
        record=False,
    ).records
    assert (record.result, record.proof) == ("passed", "not run")
    assert "without it not run" in record.proof_reason


def test_judge_outcomes() -> None:
    ok, bad = TRecord("t", "set", "passed"), TRecord("t", "set", "failed", "boom")
    skipped = TRecord("t", "set", "not run", "no GPU")
    assert judge([ok], [bad]).proof is Proof.PROVEN
    assert judge([ok], [ok]).proof is Proof.PROVES_NOTHING
    assert judge([bad], [bad]).proof is Proof.FAILED
    assert judge([skipped], []) == judge([skipped], [skipped])
    assert judge([skipped], []).proof is Proof.NOT_RUN
    assert judge([ok], [skipped]).reason == "passes with the patch; without it not run: no GPU"


def test_records_round_trip_and_old_records_read_unproven(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "test_add.py")
    _verify(s)
    (record,) = load_records(s.set_root)
    assert record.proof == "proven" and record.unpatched and record.tests_digest
    assert Record.from_json(record.to_json()) == record
    raw = record.to_json()
    for key in ("proof", "proof_reason", "unpatched", "unpatched_time", "tests_digest"):
        del raw[key]
    assert proof_text(Record.from_json(raw)) == "passed, unproven"


def test_the_command_says_proves_nothing_and_strict_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = _scenario(tmp_path, "test_mul.py")
    parser = argparse.ArgumentParser()
    verify_cli.add_arguments(parser)
    argv = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert verify_cli.run(parser.parse_args(argv)) == 0
    assert "proves nothing" in capsys.readouterr().out
    with pytest.raises(VerificationFailed, match="not proven: fix-add proves nothing"):
        verify_cli.run(parser.parse_args([*argv, "--strict"]))


def test_status_shows_the_proof_and_warns_of_proves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from patchkit.cli import main

    s = _scenario(tmp_path, "test_mul.py")
    _verify(s)
    project = ["--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["status", "--target", "demo", *project]) == 0
    out = capsys.readouterr().out
    assert "proves nothing on" in out
    assert "warning: fix-add: its tests pass without it too" in out
