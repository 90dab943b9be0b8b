"""export-pr adds the test the patch's ``[export.test]`` names to upstream's own suite, in the
exported commit; runs it on the exported tree where it can (a CPU test, here), says "not run"
for a GPU test with no recorded run, and finds a recorded run by the exported tree."""

from __future__ import annotations

import json
from pathlib import Path

from patchkit.export.upstream_test import UpstreamRun, record, section
from patchkit.ops.context import load_project
from testing.builders import run_git
from tests.export.test_export import MOD, Case, only

UPSTREAM_TEST = "from pkg.mod import f\n\n\ndef test_f():\n    assert f(1) == 2\n"


def case_with_test(tmp_path: Path, *, new_assert: str = "f(1) == 3", gpu: bool = False) -> Case:
    case = Case(
        tmp_path,
        "vllm",
        {"pkg/__init__.py": "", "pkg/mod.py": MOD, "tests/test_mod.py": UPSTREAM_TEST},
    )
    diff = case.upstream.diff_of(
        {"tests/test_mod.py": UPSTREAM_TEST + f"\n\ndef test_f_fixed():\n    assert {new_assert}\n"}
    )
    tests_dir = case.project.path / "patchsets" / "demo" / "upstream-tests"
    tests_dir.mkdir(parents=True)
    (tests_dir / "fix-f.diff").write_bytes(diff)
    meta = f"""title = "Fix f"
why = "f is off by one."

[export.test]
file = "upstream-tests/fix-f.diff"
run = ["tests/test_mod.py", "-k", "fixed"]
gpu = {"true" if gpu else "false"}
"""
    case.add("fix-f", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, meta)
    return case


def test_the_upstream_test_is_in_the_exported_commit_and_passes(tmp_path: Path) -> None:
    case = case_with_test(tmp_path)
    export = only(case.export("fix-f"))
    assert export.files == ("pkg/mod.py", "tests/test_mod.py")
    assert "def test_f_fixed" in case.git("show", f"{export.commit}:tests/test_mod.py")
    run = export.upstream_test
    assert run is not None
    assert (run.result, run.detail) == ("passed", "1 passed")
    assert run.command == "python -m pytest tests/test_mod.py -k fixed"
    assert run.tree == case.git("rev-parse", f"{export.commit}^{{tree}}")
    assert case.git("worktree", "list").count("\n") == 0  # the test's worktree is gone


def test_a_failing_upstream_test_is_said(tmp_path: Path) -> None:
    export = only(case_with_test(tmp_path, new_assert="f(1) == 4").export("fix-f"))
    assert export.upstream_test is not None
    assert (export.upstream_test.result, export.upstream_test.detail) == ("failed", "1 failed")


def test_a_gpu_test_is_not_run_here_until_a_run_is_recorded(tmp_path: Path) -> None:
    case = case_with_test(tmp_path, gpu=True)
    export = only(case.export("fix-f"))
    assert export.upstream_test is not None
    assert export.upstream_test.result == "not run"
    assert "needs a GPU" in export.upstream_test.detail
    assert "has not been run on this branch: it needs a GPU." in export.text.body

    tree = case.git("rev-parse", f"{export.commit}^{{tree}}")
    meta = load_project(case.project.path).patch("fix-f")
    gpu_run = UpstreamRun(
        export.upstream_test.command,
        "passed",
        "1 passed",
        "NVIDIA H100 (sm_90)",
        "2026-11-23T11:00:00+00:00",
        tree,
    )
    path = record(meta, gpu_run)
    assert json.loads(path.read_text())[0]["tree"] == tree
    again = only(case.export("fix-f", identity=None))  # another identity: the same tree
    assert again.upstream_test == gpu_run
    text = section(meta, again.upstream_test)
    assert "`tests/test_mod.py`" in text and "python -m pytest tests/test_mod.py -k fixed" in text
    assert (
        "ran on this branch on NVIDIA H100 (sm_90) (2026-11-23): **passed** (1 passed); "
        "it has not been run without this change." in text
    )
    assert text in again.text.body  # the PR text says it, beside the test plan's command


def test_no_test_run_says_so(tmp_path: Path) -> None:
    export = only(case_with_test(tmp_path).export("fix-f", run_tests=False))
    assert export.upstream_test is not None
    assert (export.upstream_test.result, export.upstream_test.detail) == (
        "not run",
        "not run at export",
    )


def test_a_test_diff_that_does_not_apply_stops_the_export(tmp_path: Path) -> None:
    case = case_with_test(tmp_path)
    case.base = case.upstream.commit(
        {"tests/test_mod.py": "def test_other():\n    pass\n"}, "moved"
    )
    report = case.export("fix-f", onto=case.base)  # onto another base: that patch stops alone
    (stopped,) = report.stopped  # and it says which part did not carry: the test
    assert stopped.startswith("fix-f: the upstream test of fix-f (")
    assert report.exports == () and case.git("branch", "--list", "test/*") == ""


def test_a_base_without_the_tests_says_what_is_missing_and_exports(tmp_path: Path) -> None:
    """A source release ships no ``tests/``: the export goes on without the test and says which
    file the base lacks, not that the test's diff is wrong."""
    case = case_with_test(tmp_path)
    run_git(case.upstream.path, "rm", "-q", "tests/test_mod.py")
    case.base = case.upstream.commit({}, "a release without tests/")
    export = only(case.export("fix-f", onto=case.base))
    assert export.files == ("pkg/mod.py",)
    run = export.upstream_test
    assert run is not None and run.result == "not added"
    assert "has no tests/test_mod.py" in run.detail
    assert "is not on this branch" in export.text.body


def test_the_test_fails_without_the_change_and_passes_with_it_both_kept(tmp_path: Path) -> None:
    export = only(case_with_test(tmp_path).export("fix-f"))
    run = export.upstream_test
    assert run is not None and run.proven
    assert (run.result, run.unpatched) == ("passed", "failed (1 failed)")
    assert "on the same tree without this change it **failed** (1 failed)." in export.text.body


def test_a_test_that_passes_without_the_change_is_not_named(tmp_path: Path) -> None:
    export = only(case_with_test(tmp_path, new_assert="f(1) > 0").export("fix-f"))
    run = export.upstream_test
    assert run is not None and run.proves_nothing and run.result == "passed"
    assert "-m pytest tests/test_mod.py" not in export.text.body  # not in the plan nor the result
    assert "The test this PR adds" not in export.text.body
