"""export-pr adds the test the patch's ``[export.test]`` names to upstream's own suite, in the
exported commit; runs it without the change and with it where it can (a CPU test, here), stops
a patch whose test does not show the fix (naming the test), says "not run" for a GPU test with
no recorded run, and finds a recorded run by the upstream tree and the digests of the patch and
the test."""

from __future__ import annotations

from pathlib import Path

from patchkit.export.upstream_test import UpstreamRun, digest_of_test, record, section
from patchkit.project.load import load_project
from patchkit.project.sets import patch_digest
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


def test_the_test_fails_without_the_change_and_passes_with_it_both_kept(tmp_path: Path) -> None:
    case = case_with_test(tmp_path)
    export = only(case.export("fix-f"))
    assert export.files == ("pkg/mod.py", "tests/test_mod.py")
    assert "def test_f_fixed" in case.git("show", f"{export.commit}:tests/test_mod.py")
    run = export.upstream_test
    assert run is not None and run.proven
    assert (run.result, run.detail, run.unpatched) == ("passed", "1 passed", "failed (1 failed)")
    assert run.command == "python -m pytest tests/test_mod.py -k fixed"
    assert run.tree == case.git("rev-parse", f"{export.commit}^{{tree}}")
    assert run.upstream == case.base and run.base_tree == case.git("rev-parse", "HEAD^{tree}")
    assert (
        f"On upstream commit {case.base[:12]}, without this change it **failed** (1 failed); "
        "with it, it **passed** (1 passed). Both runs on " in export.text.body
    )
    assert case.git("worktree", "list").count("\n") == 0  # the test's worktrees are gone


def test_a_test_that_fails_with_the_change_stops_the_export_naming_it(tmp_path: Path) -> None:
    case = case_with_test(tmp_path, new_assert="f(1) == 4")
    report = case.export("fix-f")  # that patch stops alone (exit 6), the others would go on
    assert report.exports == ()
    (stopped,) = report.stopped
    assert (
        "fix-f: the upstream test of fix-f, `python -m pytest tests/test_mod.py -k fixed`, "
        "fails with the change (1 failed)" in stopped
    )
    assert case.git("branch", "--list", "test/*") == ""


def _gpu_run(case: Case, command: str, **changed: str) -> UpstreamRun:
    meta = load_project(case.project.path).patch("fix-f")
    assert meta.export.test is not None
    fields = {
        "command": command,
        "result": "passed",
        "detail": "1 passed",
        "where": "NVIDIA H100 (sm_90), torch 2.11.0",
        "time": "2026-11-23T11:00:00+00:00",
        "unpatched": "failed (1 failed)",
        "base_tree": case.git("rev-parse", f"{case.base}^{{tree}}"),
        "upstream": case.base,
        "patch_digest": patch_digest(meta),
        "tests_digest": digest_of_test(meta.export.test),
    }
    run = UpstreamRun(**{**fields, **changed})
    record(meta, run)
    return run


def test_a_gpu_test_is_not_run_here_until_a_run_is_recorded(tmp_path: Path) -> None:
    case = case_with_test(tmp_path, gpu=True)
    export = only(case.export("fix-f"))
    assert export.upstream_test is not None
    assert export.upstream_test.result == "not run"
    assert "needs a GPU" in export.upstream_test.detail
    assert "has not been run from this branch's base: it needs a GPU" in export.text.body

    gpu_run = _gpu_run(case, export.upstream_test.command)
    again = only(case.export("fix-f", identity=None))  # another identity: the same trees
    assert again.upstream_test == gpu_run
    meta = load_project(case.project.path).patch("fix-f")
    text = section(meta, again.upstream_test)
    assert text == (
        "The test this PR adds (`tests/test_mod.py`): "
        f"On upstream commit {case.base[:12]}, without this change it **failed** (1 failed); "
        "with it, it **passed** (1 passed). Both runs on NVIDIA H100 (sm_90), torch 2.11.0 "
        "(2026-11-23)."
    )
    assert text in again.text.body  # the PR text says it, beside the test plan's command


def test_a_recorded_run_of_another_patch_or_test_or_base_is_not_this_ones(
    tmp_path: Path,
) -> None:
    case = case_with_test(tmp_path, gpu=True)
    command = "python -m pytest tests/test_mod.py -k fixed"
    _gpu_run(case, command, patch_digest="0" * 64)  # an older patch
    _gpu_run(case, command, tests_digest="0" * 64)  # an older test
    _gpu_run(case, command, unpatched="")  # never run without the change
    assert only(case.export("fix-f")).upstream_test.result == "not run"  # type: ignore[union-attr]
    other = _gpu_run(case, command, base_tree="1" * 40, upstream="abcdef1234567890")
    export = only(case.export("fix-f"))
    assert export.upstream_test is not None and export.upstream_test.result == "not run"
    assert (  # said as a run from another commit, never as this branch's
        "has not been run from this branch's base: it needs a GPU, and no run of it from this "
        "commit is recorded. On another upstream commit abcdef123456, without" in export.text.body
    )
    assert other.where in export.text.body


def test_no_test_run_says_so(tmp_path: Path) -> None:
    export = only(case_with_test(tmp_path).export("fix-f", run_tests=False))
    assert export.upstream_test is not None
    assert (export.upstream_test.result, export.upstream_test.detail) == (
        "not run",
        "not run at export",
    )


def test_a_test_diff_that_does_not_apply_stops_the_export(tmp_path: Path) -> None:
    case = case_with_test(tmp_path)
    changed = UPSTREAM_TEST.replace("f(1) == 2", "f(1) == 2 and f(2) == 3")
    diff = case.upstream.diff_of({"tests/test_mod.py": changed})  # changes upstream's own line
    (case.project.path / "patchsets" / "demo" / "upstream-tests" / "fix-f.diff").write_bytes(diff)
    case.base = case.upstream.commit(  # where upstream rewrote that same line its own way
        {"tests/test_mod.py": UPSTREAM_TEST.replace("f(1) == 2", "f(1) in (2, 3)")}, "moved"
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


def test_a_test_that_passes_without_the_change_stops_the_export_naming_it(tmp_path: Path) -> None:
    case = case_with_test(tmp_path, new_assert="f(1) > 0")
    (stopped,) = case.export("fix-f").stopped  # on the pin too: that patch alone stops
    assert (
        "`python -m pytest tests/test_mod.py -k fixed`, passes without the change too "
        "(passed (1 passed)): it cannot show the fix" in stopped
    )
    report = case.export("fix-f", onto=case.base)  # --onto: that patch stops alone, named
    assert report.exports == ()
    assert report.stopped[0].startswith("fix-f: the upstream test of fix-f, `python -m pytest")
