"""``scripts/upstream_tests.py``: ``prove`` runs each PR's upstream test on the pinned tree
without the change and with it (no network, no export), ``merge`` adds the runs to the
tracked results, and ``export-pr`` then states them (found by the upstream tree and the
digests of the patch and the test); a hostile runs file is refused naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.export.test_export import only
from tests.export.test_upstream_test import case_with_test

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "upstream_tests.py"


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300
    )


def test_prove_runs_both_ways_and_merge_lets_the_export_state_it(tmp_path: Path) -> None:
    case = case_with_test(tmp_path)
    project = str(case.project.path)
    out = tmp_path / "runs.json"
    proved = _script(
        "--project", project, "prove", "--target", "vllm",
        "--checkout", str(case.upstream.path), "--out", str(out),
    )  # fmt: skip
    assert proved.returncode == 0, proved.stderr
    assert "fix-f: without the change failed (1 failed); with it passed (1 passed): proven" in (
        proved.stdout
    )
    (run,) = json.loads(out.read_text())
    assert (run["patch"], run["unpatched"], run["result"]) == (
        "fix-f",
        "failed (1 failed)",
        "passed",
    )
    assert run["upstream"] == case.base and run["where"]
    assert case.git("branch", "--list", "test/*") == ""  # nothing exported, no branch
    assert case.git("worktree", "list").count("\n") == 0

    merged = _script("--project", project, "merge", str(out))
    assert merged.returncode == 0, merged.stderr
    export = only(case.export("fix-f", run_tests=False))  # not run here: the record is used
    assert export.upstream_test is not None and export.upstream_test.time == run["time"]
    assert f"On upstream commit {case.base[:12]}, without this change it **failed**" in (
        export.text.body
    )


def test_a_test_that_passes_without_the_change_is_not_proven(tmp_path: Path) -> None:
    case = case_with_test(tmp_path, new_assert="f(1) > 0")
    out = tmp_path / "runs.json"
    proved = _script(
        "--project", str(case.project.path), "prove", "--target", "vllm",
        "--checkout", str(case.upstream.path), "--out", str(out),
    )  # fmt: skip
    assert proved.returncode == 1
    assert "without the change passed (1 passed); with it passed (1 passed): NOT proven" in (
        proved.stdout
    )


def test_a_hostile_runs_file_is_refused_naming_it(tmp_path: Path) -> None:
    case = case_with_test(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"patch": "fix-f", "result": 1, "base_tree": "../x"}]))
    merged = _script("--project", str(case.project.path), "merge", str(bad))
    assert merged.returncode == 2
    assert f"{bad}: the run of fix-f has bad or missing result, base_tree" in merged.stderr
    assert not (
        case.project.path / "patchsets" / "demo" / "upstream-tests" / "results.json"
    ).exists()


def test_a_where_note_is_kept_with_the_device_and_said_in_the_text(tmp_path: Path) -> None:
    """How the runs differ from upstream's CI (vLLM as its CPU build on a GPU machine) is said
    after the device, in the record and so in the PR text."""
    case = case_with_test(tmp_path)
    project, out = str(case.project.path), tmp_path / "runs.json"
    note = "vLLM's CPU platform (a source tree: its native ops not built)"
    proved = _script(
        "--project", project, "prove", "--target", "vllm", "--where-note", note,
        "--checkout", str(case.upstream.path), "--out", str(out),
    )  # fmt: skip
    assert proved.returncode == 0, proved.stderr
    (run,) = json.loads(out.read_text())
    assert run["where"].endswith(f"; {note}") and not run["where"].startswith(";")
    assert _script("--project", project, "merge", str(out)).returncode == 0
    export = only(case.export("fix-f", run_tests=False))
    assert f"; {note} ({run['time'][:10]})." in export.text.body
