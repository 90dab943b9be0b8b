"""What a hostile or broken ``gh`` prints is read within bounds: huge numbers, deep nesting,
wrong types are a SourceError (exit 3) naming the command and the limit, and an answer of
100000 PRs costs at most MAX_PRS ``gh pr diff`` calls per search, never one each."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.upstream import duplicates
from patchkit.upstream.duplicates import MAX_PRS
from testing.fake_gh import fake_gh
from tests.ops.test_upstream_check import DIFF, URL, case, upstream_table


def check(tmp_path: Path) -> int:
    return main(["upstream-check", "--target", "vllm", "--project", str(tmp_path / "p")])


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
        ("[" * 40 + "]" * 40, "deeper than 32 levels (MAX_JSON_DEPTH)"),
        ('[{"number": ' + "7" * 5000 + "}]", "no JSON patchkit reads"),
        ('[{"number": 99999999999999999999}]', "without a pull request number"),
        ('[{"number": true}]', "without a pull request number"),
        ('[{"number": "12x"}]', "without a pull request number"),
        ('[{"number": [1]}]', "without a pull request number"),
        ("[5]", "without a pull request number"),
    ],
    ids=["deep", "deeper-than-limit", "digits", "huge", "bool", "text", "list", "not-object"],
)
def test_a_hostile_answer_is_exit_3_naming_the_limit(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    said: str,
) -> None:
    c = case(tmp_path / "p")
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "list", out=answer)
    assert main(["upstream-check", "--target", "vllm", "--project", str(c.project.path)]) == 3
    assert said in capsys.readouterr().err


def test_wrong_types_in_fields_are_ignored_and_the_url_is_upstream_s_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = case(tmp_path / "p")
    gh = fake_gh(tmp_path, monkeypatch)
    odd = {"number": 41233, "url": "javascript:alert(1)", "state": 5, "title": {"a": [1]}}
    gh.on("pr", "list", contains="39809", out=[{**odd, "files": "x", "author": [1]}])
    gh.on("pr", "list", out=[])
    assert main(["upstream-check", "--target", "vllm", "--project", str(c.project.path)]) == 0
    assert upstream_table(c)["pr"] == f"{URL}/pull/41233"


FLOOD = """#!{python}
import json, sys
argv = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(json.dumps(argv) + "\\n")
if argv[:2] == ["pr", "list"] and "39809" not in " ".join(argv):
    files = [{{"path": "pkg/mod.py"}}]
    prs = [{{"number": n, "state": "OPEN", "files": files}} for n in range(1, 100001)]
    sys.stdout.write(json.dumps(prs))
elif argv[:2] == ["pr", "diff"]:
    sys.stdout.write({diff!r})
elif argv[:2] == ["pr", "list"]:
    sys.stdout.write("[]")
"""


def test_100000_prs_cost_at_most_max_diffs_diffs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(duplicates, "MAX_DIFFS", 3)  # the bound itself, at a test's cost
    c = case(tmp_path / "p")
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.jsonl"
    bin_dir.mkdir()
    other = DIFF.replace("_dummy_run", "x").replace("_warmup", "_y")
    (bin_dir / "gh").write_text(FLOOD.format(python=sys.executable, log=str(log), diff=other))
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert main(["upstream-check", "--target", "vllm", "--project", str(c.project.path)]) == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    diffs = [call for call in calls if call[:2] == ["pr", "diff"]]
    assert len(diffs) == 3
    assert f"only the first {MAX_PRS} (MAX_PRS) are examined" in caplog.text
    assert "than the 3 (MAX_DIFFS) whose diffs are read" in caplog.text
