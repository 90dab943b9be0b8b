"""verify: each patch proven by its own tests against the patched tree; outcomes exact (passed,
failed, not run with the reason), recorded beside the set, stale once the patch or lock moves."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from patchkit.cli import verify as verify_cli
from patchkit.errors import TreeError, VerificationFailed
from patchkit.model import TestSpec as Spec
from patchkit.ops.verify import raise_for, verify, verify_applied
from patchkit.project.lock import load_lock, move_lock
from patchkit.verification.env import Environment, JobResult, LocalRunner, skip_reason
from patchkit.verification.env import TestJob as Job
from patchkit.verification.records import (
    is_stale,
    last_results,
    load_records,
    records_path,
    state_results,
)
from patchkit.verification.run import Result, VerifyReport, gate
from testing.builders import Scenario

NO_GPU = Environment(python="3.11.7", platform="Linux-test")
H100 = Environment(
    python="3.12.3",
    platform="Linux-test",
    gpu="NVIDIA H100 80GB HBM3",
    capability=(9, 0),
    driver="580.159.04",
    cuda="13.0",
    torch="2.11.0",
    triton="3.6.0",
)
A100 = Environment(python="3.12.3", platform="Linux-test", gpu="NVIDIA A100", capability=(8, 0))
UPSTREAM: dict[str, str | bytes] = {
    "demo/__init__.py": "",
    "demo/calc.py": "def add(a, b):\n    return a - b\n",
    "demo/text.py": "def shout(s):\n    return s\n",
    # an upstream conftest that would break any run that loads it (--noconftest skips it)
    "conftest.py": "raise RuntimeError('upstream conftest imports too much')\n",
    "tests/test_text_upstream.py": (
        "from demo.text import shout\n\ndef test_shout():\n    assert shout('a') == 'A'\n"
    ),
}
SET_TESTS = {
    "test_add.py": "from demo.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "test_needs_dep.py": (
        "import pytest\n\npytest.importorskip('patchkit_absent_dep')\n\n"
        "def test_never():\n    pass\n"
    ),
    "test_gpu.py": "from demo.calc import add\n\ndef test_on_gpu():\n    assert add(1, 1) == 2\n",
    "test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(30)\n",
}


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def declare(s: Scenario, patch_id: str, *tests: str) -> None:
    """Append ``[[tests]]`` tables (TOML bodies) to a patch's metadata."""
    meta = s.set_root / "patches" / f"{patch_id}.toml"
    meta.write_text(meta.read_text() + "".join(f"\n[[tests]]\n{t}\n" for t in tests))


def set_test(name: str, **extra: str) -> str:
    return f'where = "set"\nnode = "tests/{name}"\n' + "".join(
        f"{k} = {v}\n" for k, v in extra.items()
    )


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, UPSTREAM)
    s.add("fix-add", {"demo/calc.py": "def add(a, b):\n    return a + b\n"})
    s.add("fix-shout", {"demo/text.py": "def shout(s):\n    return s.upper()\n"})
    declare(s, "fix-add", set_test("test_add.py"))
    declare(s, "fix-shout", 'where = "upstream"\nnode = "tests/test_text_upstream.py"')
    (s.set_root / "tests").mkdir()
    for name, text in SET_TESTS.items():
        (s.set_root / "tests" / name).write_text(text)
    return s


def run(s: Scenario, env: Environment = NO_GPU, only: str = "", **kw: object) -> VerifyReport:
    kw.setdefault("clock", Clock())
    kw.setdefault("runner", LocalRunner())
    patches = [p for p in s.patches() if not only or p.id == only]
    return verify(
        tree_root=s.root,
        patches=patches,
        lock=load_lock(s.lock_path),
        environment=env,
        **kw,  # type: ignore[arg-type]
    )


def results(report: VerifyReport) -> dict[str, tuple[str, str]]:
    return {v.patch_id: (v.result.value, v.reason) for v in report.verdicts}


# -- outcomes ---------------------------------------------------------------------------------


def test_tests_fail_on_the_upstream_tree_and_pass_once_patched(scenario: Scenario) -> None:
    before = run(scenario, record=False)
    assert {k: v[0] for k, v in results(before).items()} == {
        "fix-add": "failed",
        "fix-shout": "failed",
    }
    assert "assert -1 == 5" in before.verdicts[0].reason
    scenario.apply()
    after = run(scenario, record=False)
    assert results(after) == {"fix-add": ("passed", ""), "fix-shout": ("passed", "")}
    with pytest.raises(VerificationFailed) as info:
        raise_for(before)
    assert info.value.exit_code == 7


def test_upstream_tests_run_without_upstream_conftest(scenario: Scenario) -> None:
    scenario.apply()
    (verdict,) = run(scenario, record=False, only="fix-shout").verdicts
    assert verdict.result is Result.PASSED
    assert verdict.tests[0].cases[0].node == "tests/test_text_upstream.py::test_shout"


def test_upstream_tests_are_not_run_on_an_installed_package(scenario: Scenario) -> None:
    scenario.apply()
    (verdict,) = run(scenario, record=False, only="fix-shout", has_upstream_tests=False).verdicts
    assert verdict.result is Result.NOT_RUN
    assert "not part of an installed package" in verdict.reason


def test_missing_dependency_is_not_run_never_passed(scenario: Scenario) -> None:
    declare(scenario, "fix-add", set_test("test_needs_dep.py"))
    scenario.apply()
    report = run(scenario, record=False, only="fix-add")
    verdict = report.verdicts[0]
    assert verdict.result is Result.PASSED  # test_add ran and passed; the other could not run
    assert verdict.reason == "1 of 2 tests not run: dependency missing: patchkit_absent_dep"
    assert verdict.tests[1].result is Result.NOT_RUN


def test_a_module_the_tests_import_not_installed_is_not_run_not_failed(scenario: Scenario) -> None:
    """A collection error for a missing module (as vLLM's conftest importing tblib) says the
    environment cannot run the tests: not run, with the module named, never a failure."""
    (scenario.set_root / "tests" / "test_imports_missing.py").write_text(
        "import tblib_not_installed_here\n\ndef test_x():\n    pass\n"
    )
    declare(scenario, "fix-shout", set_test("test_imports_missing.py"))
    scenario.apply()
    (verdict,) = run(scenario, record=False, only="fix-shout").verdicts
    missing = verdict.tests[1]
    assert (missing.result, missing.reason) == (
        Result.NOT_RUN,
        "dependency missing: tblib_not_installed_here",
    )
    raise_for(run(scenario, record=False, only="fix-shout"))  # no exit 7


def test_a_failing_test_is_still_a_failure_beside_a_missing_module() -> None:
    from patchkit.verification.env import environment_problem

    assert environment_problem("E   ModuleNotFoundError: No module named 'tblib'") == (
        "dependency missing: tblib"
    )
    assert environment_problem("RuntimeError: Found no NVIDIA driver on your system") == "no GPU"
    assert environment_problem("AssertionError: assert -1 == 5") is None


def test_one_test_of_a_module_skipped_at_import_is_not_run(scenario: Scenario) -> None:
    declare(scenario, "fix-shout", set_test("test_needs_dep.py::test_never"))
    scenario.apply()
    report = run(scenario, record=False, only="fix-shout")
    skipped = report.verdicts[0].tests[1]
    assert (skipped.result, skipped.reason) == (
        Result.NOT_RUN,
        "dependency missing: patchkit_absent_dep",
    )


def test_only_skipped_tests_mean_not_run_with_the_reason(scenario: Scenario) -> None:
    meta = scenario.set_root / "patches" / "fix-add.toml"
    meta.write_text(meta.read_text().split("[[tests]]")[0])
    declare(scenario, "fix-add", set_test("test_needs_dep.py"))
    scenario.apply()
    report = run(scenario, record=False, only="fix-add")
    assert results(report)["fix-add"] == ("not run", "dependency missing: patchkit_absent_dep")
    raise_for(report)  # not run is no failure ...
    with pytest.raises(VerificationFailed, match="not run: fix-add"):
        raise_for(report, strict=True)  # ... unless asked to be strict


def test_gpu_tests_gated_by_gpu_and_capability(scenario: Scenario) -> None:
    declare(scenario, "fix-add", set_test("test_gpu.py", gpu="true", min_capability='"9.0"'))
    scenario.apply()
    canned = CannedRunner()
    assert (
        run(scenario, NO_GPU, record=False, runner=canned).verdicts[0].tests[1].reason == "no GPU"
    )
    low = run(scenario, A100, record=False, runner=canned).verdicts[0].tests[1]
    assert (low.result, low.reason) == (Result.NOT_RUN, "compute capability 8.0 < 9.0")
    ok = run(scenario, H100, record=False).verdicts[0]
    assert [t.result for t in ok.tests] == [Result.PASSED, Result.PASSED]


def test_a_declared_test_that_does_not_exist_fails(scenario: Scenario) -> None:
    declare(scenario, "fix-add", set_test("test_gone.py"))
    scenario.apply()
    verdict = run(scenario, record=False, runner=CannedRunner(), only="fix-add").verdicts[0]
    assert verdict.result is Result.FAILED
    assert "no such test" in verdict.reason


def test_a_hung_test_is_killed_and_fails(scenario: Scenario) -> None:
    declare(scenario, "fix-add", set_test("test_slow.py"))
    scenario.apply()
    verdict = run(scenario, record=False, timeout_s=2, only="fix-add").verdicts[0]
    assert verdict.result is Result.FAILED
    assert "timed out after 2 s" in verdict.reason


def test_no_tests_declared_is_not_run(scenario: Scenario) -> None:
    meta = scenario.set_root / "patches" / "fix-add.toml"
    meta.write_text(meta.read_text().split("[[tests]]")[0])
    assert results(run(scenario, record=False))["fix-add"] == ("not run", "no tests declared")


# -- the runner seam --------------------------------------------------------------------------


class CannedRunner:
    """A runner that returns a fixed JUnit report, as a remote backend would; by default one
    passing case per node it is asked to run."""

    def __init__(self, xml: str | None = None, returncode: int = 0) -> None:
        self.xml, self.returncode = xml, returncode
        self.jobs: list[Job] = []

    def run(self, job: Job) -> JobResult:
        self.jobs.append(job)
        cases = "".join(f'<testcase file="{n}" classname="x" name="t"/>' for n in job.nodes)
        return JobResult(self.returncode, self.xml or f"<testsuite>{cases}</testsuite>", "", 1.5)


def test_one_job_per_patch_and_cases_mapped_to_their_specs(scenario: Scenario) -> None:
    declare(scenario, "fix-add", set_test("test_gpu.py", gpu="true"))
    xml = """<testsuites><testsuite>
      <testcase file="tests/test_add.py" classname="tests.test_add" name="test_add"/>
      <testcase file="tests/test_gpu.py" classname="tests.test_gpu.TestK" name="test_k[a.b]">
        <failure message="AssertionError: nan">trace</failure></testcase>
    </testsuite></testsuites>"""
    runner = CannedRunner(xml, returncode=1)
    meta = scenario.patches()[0]
    report = verify(
        tree_root=scenario.root,
        patches=[meta],
        lock=load_lock(scenario.lock_path),
        runner=runner,
        environment=H100,
        record=False,
    )
    (job,) = runner.jobs
    assert job.nodes == ("tests/test_add.py", "tests/test_gpu.py")
    assert (job.gpu, job.noconftest, job.pythonpath) == (True, False, (scenario.root.resolve(),))
    add, gpu = report.verdicts[0].tests
    assert add.result is Result.PASSED
    assert gpu.result is Result.FAILED
    assert gpu.reason == "1 of 1 failed: tests/test_gpu.py::TestK::test_k[a.b]: AssertionError: nan"


def test_skip_reasons() -> None:
    assert skip_reason("could not import 'torch': No module named 'torch'") == (
        "dependency missing: torch"
    )
    assert skip_reason("could not import 'flashinfer': No module named 'tvm_ffi'") == (
        "dependency missing: flashinfer (No module named 'tvm_ffi')"
    )
    assert skip_reason("no GPU") == "no GPU"
    assert gate(Spec("set", "t.py", gpu=False, min_capability=(9, 0)), A100) is not None
    assert gate(Spec("set", "t.py", gpu=True), H100) is None


# -- records ----------------------------------------------------------------------------------


def test_records_written_stable_and_read_back(scenario: Scenario) -> None:
    scenario.apply()
    clock = Clock()
    report = run(scenario, H100, clock=clock, tracked=True)
    path = records_path(scenario.set_root)
    assert report.written == (path,)
    raw = json.loads(path.read_text())
    assert [(r["patch"], r["result"], r["time"]) for r in raw] == [
        ("fix-add", "passed", "2026-11-22T10:01:00Z"),
        ("fix-shout", "passed", "2026-11-22T10:02:00Z"),
    ]
    first = raw[0]
    assert first["environment"]["gpu"] == "NVIDIA H100 80GB HBM3"
    assert first["environment"]["capability"] == "9.0"
    assert (first["lock_commit"], first["lock_version"]) == (scenario.base, "1.0")
    assert first["tests"] == [
        {
            "node": "tests/test_add.py",
            "where": "set",
            "result": "passed",
            "reason": "",
            "passed": 1,
            "failed": 0,
            "skipped": 0,
        }
    ]
    text = path.read_text()
    assert list(json.loads(text)[0]) == sorted(json.loads(text)[0])  # sorted keys
    # read back, rewritten unchanged: stable
    from patchkit.verification.records import add_records

    add_records(scenario.set_root, [])
    assert path.read_text() == text
    run(scenario, NO_GPU, clock=clock, runner=CannedRunner())  # kept in the cache
    assert path.read_text() == text
    latest = last_results(scenario.set_root, "fix-add")
    assert [r.environment.kind for r in latest] == ["NVIDIA H100 80GB HBM3 (sm_90)", "cpu"]
    assert latest[0] == load_records(scenario.set_root)[0]


def test_runs_are_kept_in_the_cache_and_the_tracked_file_only_when_asked(
    scenario: Scenario,
) -> None:
    scenario.apply()
    tracked = records_path(scenario.set_root)
    before = sorted(p.name for p in scenario.set_root.iterdir())
    report = run(scenario, NO_GPU, runner=CannedRunner())
    assert report.written == (records_path(scenario.set_root, tracked=False),)
    assert not tracked.exists()
    assert sorted(p.name for p in scenario.set_root.iterdir()) == before  # working copy clean
    assert [r.patch for r in load_records(scenario.set_root)] == ["fix-add", "fix-shout"]
    run(scenario, H100, runner=CannedRunner(), tracked=True)
    assert {r["patch"] for r in json.loads(tracked.read_text())} == {"fix-add", "fix-shout"}
    assert len(load_records(scenario.set_root)) == 4  # both, each once


def test_records_capped_per_patch_and_environment(scenario: Scenario) -> None:
    scenario.apply()
    clock = Clock()
    for _ in range(7):
        run(scenario, NO_GPU, clock=clock, runner=CannedRunner())
    run(scenario, H100, clock=clock, runner=CannedRunner())
    records = load_records(scenario.set_root)
    kinds = [(r.patch, r.environment.kind) for r in records]
    assert kinds.count(("fix-add", "cpu")) == 5
    assert kinds.count(("fix-add", H100.kind)) == 1
    assert [r.time for r in records] == sorted(r.time for r in records)


def test_a_record_goes_stale_when_the_patch_or_the_lock_moves(scenario: Scenario) -> None:
    run(scenario, runner=CannedRunner())
    meta = scenario.patches()[0]
    (record,) = last_results(scenario.set_root, meta)
    assert not is_stale(record, meta, scenario.entry())
    meta.file.write_bytes(meta.file.read_bytes() + b"\n")
    assert is_stale(record, meta, scenario.entry())
    meta.file.write_bytes(meta.file.read_bytes()[:-1])
    assert not is_stale(record, meta, scenario.entry())
    move_lock(scenario.lock_path, "demo", version="1.1", commit="f" * 40)
    assert is_stale(record, meta, scenario.entry())


# -- apply --verify and the command line ------------------------------------------------------


def test_verify_applied_keeps_the_outcome_in_the_tree_state(scenario: Scenario) -> None:
    scenario.apply()
    tree = scenario.tree()
    report = verify_applied(
        tree=tree,
        lock=load_lock(scenario.lock_path),
        patches=scenario.patches(),
        record=False,
        runner=CannedRunner(),
        environment=NO_GPU,
    )
    assert report.written == ()
    state = state_results(tree.state_dir)
    assert {k: v.result for k, v in state.items()} == {"fix-add": "passed", "fix-shout": "passed"}
    assert state["fix-add"].digest == report.verdicts[0].digest


def _cli(s: Scenario, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    verify_cli.add_arguments(parser)
    argv = ["-t", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    return parser.parse_args([*argv, "--python", sys.executable, *extra])


def test_cli_refuses_an_unpatched_tree_then_verifies(
    scenario: Scenario, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(TreeError, match="fix-add is not applied"):
        verify_cli.run(_cli(scenario))
    scenario.apply()
    assert verify_cli.run(_cli(scenario, "--json", "--only", "fix-add")) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(p["patch"], p["result"]) for p in out["patches"]] == [("fix-add", "passed")]
    assert out["recorded_in"] == [str(records_path(scenario.set_root, tracked=False))]
    assert verify_cli.run(_cli(scenario, "--json", "--only", "fix-add", "--record")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recorded_in"] == [str(records_path(scenario.set_root))]


def test_cli_exit_7_on_failure(scenario: Scenario) -> None:
    scenario.apply()
    (scenario.set_root / "tests" / "test_add.py").write_text("def test_add():\n    assert 0\n")
    with pytest.raises(VerificationFailed, match="verification failed for fix-add"):
        verify_cli.run(_cli(scenario, "--no-record", "--only", "fix-add"))
    assert not records_path(scenario.set_root).exists()
