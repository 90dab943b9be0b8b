"""scripts/bench_port.py on a small history built here: a release branch with `git cherry-pick
-x` backports from main, mined from a bare clone (as the fetch tool leaves them) and scored."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import PROJECT_ROOT, dedent
from tests.conftest import git as _git

IDENTITY = ("-c", "user.name=Test Person", "-c", "user.email=test@example.com")


def git(cwd: Path, *args: str) -> str:
    """git with a fixed identity: the history is built once per module, before the hermetic
    HOME of each test exists."""
    return _git(cwd, *IDENTITY, "-c", "init.defaultBranch=main", *args)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_port", PROJECT_ROOT / "scripts" / "bench_port.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_port"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()

LIB = dedent("""
    def helper():
        return 1


    def compute(x):
        total = 0
        for i in range(x):
            total += i
        return total
    """)


def _commit(repo: Path, message: str, **files: str) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    """main: start, then three fixes; release: a drift commit, then backports of the three:
    ``moved`` (lib.py drifted on release), ``same`` (util.c identical on release: trivial) and
    ``edited`` (its util.c half dropped from the backport)."""
    tmp_path = tmp_path_factory.mktemp("history")
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    _commit(work, "start", **{"lib.py": LIB, "util.c": "int one(void) { return 1; }\n"})
    git(work, "branch", "release")
    fix = LIB.replace("total = 0\n", "total = 0\n    if x < 0:\n        raise ValueError(x)\n")
    moved = _commit(work, "guard compute", **{"lib.py": fix})
    same = _commit(work, "fix util", **{"util.c": "int one(void) { return 2; }\n"})
    edited = _commit(
        work,
        "two files",
        **{
            "lib.py": fix.replace("return 1", "return 3"),
            "util.c": "int one(void) { return 4; }\n",
        },
    )
    git(work, "checkout", "-q", "release")
    _commit(work, "drift", **{"lib.py": "import os\n\n\n" + LIB})
    git(work, "cherry-pick", "-x", moved)
    backport = git(work, "rev-parse", "HEAD").strip()
    git(work, "cherry-pick", "-x", same)
    git(work, "cherry-pick", "-x", "--no-commit", edited)
    git(work, "checkout", "HEAD", "--", "util.c")
    git(work, "commit", "-q", "-m", f"two files, lib only\n\n(cherry picked from commit {edited})")
    bare = tmp_path / "mirror" / "repo"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return {"repo": bare, "moved": moved, "backport": backport}


def test_mine_keeps_a_real_port_and_skips_trivial_and_edited_backports(history: dict) -> None:
    cases = bench.mine(history["repo"], branches=[], limit=10)

    assert [(c.original, c.backport, c.paths) for c in cases] == [
        (history["moved"], history["backport"], ("lib.py",))
    ]
    assert cases[0].name == f"mirror:{history['backport'][:10]}"


def test_every_tool_runs_on_a_fresh_target_and_is_scored_against_the_backport(
    history: dict, tmp_path: Path
) -> None:
    (case,) = bench.mine(history["repo"], branches=[], limit=10)
    refs = git(history["repo"], "for-each-ref")

    result = bench.run_case(case, tmp_path, bench.tools("api"))

    assert set(result.runs) == set(bench.TOOLS)
    # the drift only shifted lines: every tool should land the guard exactly (GNU patch, where
    # the machine has it; where not, its run fails and says so)
    expected = dict.fromkeys(bench.TOOLS, "exact")
    if shutil.which("patch") is None:
        expected["patch --fuzz=2"] = "failed"
        assert result.runs["patch --fuzz=2"].note == "patch is not installed"
    assert {t: r.score for t, r in result.runs.items()} == expected
    assert all(r.seconds > 0 for r in result.runs.values())
    assert git(history["repo"], "for-each-ref") == refs  # the mined repository is only read


def test_a_tool_that_reports_success_with_other_content_is_wrong_and_a_refusal_failed(
    history: dict, tmp_path: Path
) -> None:
    (case,) = bench.mine(history["repo"], branches=[], limit=10)

    def untouched(work: Path, patch: Path, case: object) -> tuple[bool, str]:
        return True, "said it applied"

    def refuses(work: Path, patch: Path, case: object) -> tuple[bool, str]:
        return False, "conflict"

    result = bench.run_case(
        case, tmp_path, {"patchkit": untouched, "git apply": bench.run_git_apply, "x": refuses}
    )

    assert [r.score for r in result.runs.values()] == ["wrong", "exact", "failed"]
    (miss,) = bench.misses([result])
    assert (miss["name"], miss["patchkit"], miss["baselines_exact"]) == (
        case.name,
        "wrong",
        ["git apply"],
    )


def test_a_saved_miss_list_is_run_again_as_the_same_cases(history: dict, tmp_path: Path) -> None:
    (case,) = bench.mine(history["repo"], branches=[], limit=10)
    saved = tmp_path / "misses.json"
    result = bench.Result(case, {"patchkit": bench.Run("patchkit", "failed", 0.1)})
    result.runs["git apply"] = bench.Run("git apply", "exact", 0.01)
    saved.write_text(__import__("json").dumps(bench.misses([result])))

    assert bench.load_cases(saved) == [case]


def test_the_report_counts_scores_per_tool_with_median_and_p90() -> None:
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("a",))
    runs = [("exact", 0.1), ("exact", 0.3), ("failed", 0.2), ("wrong", 0.5)]
    results = [bench.Result(case, {"patchkit": bench.Run("patchkit", s, t)}) for s, t in runs]

    counts = bench.tally(results, "patchkit")

    assert counts == {"exact": 2, "wrong": 1, "failed": 1, "median": 0.25, "p90": 0.5}


def test_the_goals_line_holds_patchkit_to_the_best_baseline() -> None:
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("a",))

    def result(patchkit: str, baseline: str) -> object:
        runs = {"patchkit": bench.Run("patchkit", patchkit, 0.05)}
        return bench.Result(case, runs | {"git apply": bench.Run("git apply", baseline, 0.01)})

    results = [result("exact", "exact"), result("wrong", "exact"), result("exact", "failed")]

    assert bench.goals(results) == (
        "goals: exact 2 >= 2: yes; wrong where a baseline is exact: 1; median 0.050 s <= 0.1 s: yes"
    )


def test_a_symlink_is_scored_by_its_type_and_target_path_as_git_stores_it(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("content\n")
    (tmp_path / "link").symlink_to("real.txt")
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("link",))

    link_text, content = bench.blob_id(b"real.txt"), bench.blob_id(b"content\n")
    as_link = {"link": f"120000 {link_text}"}
    as_file = {"link": f"100644 {content}"}
    link_text_in_a_file = {"link": f"100644 {link_text}"}

    assert bench.score(case, tmp_path, as_link, ok=True) == "exact"
    assert bench.score(case, tmp_path, as_file, ok=True) == "wrong"
    assert bench.score(case, tmp_path, link_text_in_a_file, ok=True) == "wrong"
    assert bench.score(case, tmp_path, as_link, ok=False) == "failed"


def test_a_refusal_is_noted_with_the_file_hunk_and_reason_patchkit_gives() -> None:
    from types import SimpleNamespace as NS

    detail = NS(
        path="a.c", hunk="@@ -1,2 +1,3 @@ int f(void)", reason="its context matches 2 places"
    )
    refused = NS(outcome=NS(ok=False, value="ambiguous"), result=NS(details=[detail]))
    carried = NS(outcome=NS(ok=True, value="carried"), result=NS(details=[detail]))

    assert bench.why(refused) == "ambiguous: a.c @@ -1,2 +1,3: its context matches 2 places"
    assert bench.why(carried) == "carried"


def test_changes_since_an_earlier_run_list_only_cases_whose_patchkit_score_moved() -> None:
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("a",))
    other = bench.Case("/r/proj/repo", "d" * 40, "y" * 40, ("b",))
    earlier = [
        {"repo": c.repo, "backport": c.backport, "runs": {"patchkit": {"score": s}}}
        for c, s in ((case, "failed"), (other, "exact"))
    ]
    now = [
        bench.Result(case, {"patchkit": bench.Run("patchkit", "exact", 0.1, "carried")}),
        bench.Result(other, {"patchkit": bench.Run("patchkit", "exact", 0.1, "carried")}),
    ]

    assert bench.changes(earlier, now) == ["  proj:cccccccccc: failed -> exact [carried]"]


def test_the_share_line_counts_exact_of_all_cases_and_of_those_some_tool_gets() -> None:
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("a",))

    def result(patchkit: str, baseline: str) -> object:
        runs = {"patchkit": bench.Run("patchkit", patchkit, 0.05, "", 0.01)}
        return bench.Result(case, runs | {"git apply": bench.Run("git apply", baseline, 0.01)})

    results = [result("exact", "exact"), result("failed", "failed"), result("failed", "exact")]

    assert bench.share(results) == (
        "patchkit exact 1/3 = 33% of all cases (>= 90 %: NO); 1/2 = 50% of the cases some "
        "tool gets exact"
    )
    assert bench.placement(results) == (
        "patchkit placement in-process (run_patch): median 0.010 s, p90 0.010 s; <= 0.1 s: yes"
    )


def _two_projects() -> list:
    """proj: patchkit exact where git apply is too, and wrong where git apply is exact; other:
    patchkit exact but a hunk left conflicted (marked), git apply failed."""
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("a",))
    other = bench.Case("/r/other/repo", "d" * 40, "y" * 40, ("b",))

    def result(c: object, patchkit: str, note: str, baseline: str, placed: float) -> object:
        runs = {"patchkit": bench.Run("patchkit", patchkit, 0.05, note, placed)}
        return bench.Result(c, runs | {"git apply": bench.Run("git apply", baseline, 0.01)})

    return [
        result(case, "exact", "carried", "exact", 0.01),
        result(case, "wrong", "carried", "exact", 0.03),
        result(other, "exact", "partly-upstreamed" + bench.UNPLACED, "failed", 0.2),
    ]


def test_the_acceptance_line_gives_issue_27s_three_bars_and_the_placement_time_together() -> None:
    results = _two_projects()

    assert bench.acceptance(results) == (
        "acceptance, all projects: exact 2/3 = 66.7% (>= 90 %: NO) | wrong where a baseline is "
        "exact: 1 (0: NO) | successes with a conflicted or unplaced hunk: 1 (0: NO) | placement "
        "median 0.030 s, p90 0.200 s (<= 0.1 s: yes)"
    )


def test_the_summary_puts_projects_side_by_side_and_repeats_the_bars_without_a_project() -> None:
    lines = list(bench.summary(_two_projects(), ["other"]))

    assert lines[1:6] == [
        "| project (cases) | patchkit | git apply | git apply -3 | patch --fuzz=2 |",
        "|---|---|---|---|---|",
        "| all (3) | 2/1/0 | 2/0/1 | 0/0/0 | 0/0/0 |",
        "| other (1) | 1/0/0 | 0/0/1 | 0/0/0 | 0/0/0 |",
        "| proj (2) | 1/1/0 | 2/0/0 | 0/0/0 | 0/0/0 |",
    ]
    assert lines[6].startswith("acceptance, all projects: exact 2/3")
    assert lines[7].startswith("acceptance, without other: exact 1/2 = 50.0% (>= 90 %: NO) | wrong")
    assert "conflicted or unplaced hunk: 0 (0: yes)" in lines[7]


def test_mined_cases_are_written_and_read_back_as_the_same_cases(
    history: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "cases.json"

    code = bench.main(["--repo", str(history["repo"]), "--write-cases", str(saved)])

    assert code == 0
    assert "1 cases written to" in capsys.readouterr().out
    assert bench.load_cases(saved) == bench.mine(history["repo"], branches=[], limit=40)


def test_a_partly_upstreamed_port_counts_as_a_success_as_its_exit_0_does(tmp_path: Path) -> None:
    from types import SimpleNamespace as NS

    cases = importlib.import_module("bench_port_cases")
    case = bench.Case("/r/proj/repo", "c" * 40, "x" * 40, ("a",))
    partly = NS(outcome=NS(ok=False, value="partly-upstreamed"), succeeded=True, result=NS())
    conflicted = NS(outcome=partly.outcome, succeeded=True, result=NS(conflicted=("a",)))
    refused = NS(outcome=NS(ok=False, value="conflict"), succeeded=False, result=NS())

    def port(report: object) -> object:
        return lambda **kwargs: report

    def run(report: object) -> tuple[bool, str]:
        return cases._port_api(port(report), RuntimeError, tmp_path, tmp_path / "p", case)

    assert run(partly) == (True, "partly-upstreamed")
    assert run(conflicted) == (True, "partly-upstreamed" + bench.UNPLACED)
    assert run(refused) == (False, "conflict")
