"""``--explain`` on apply, rebase and port: per hunk, the file:line, the scope path and the
rule that placed it, as text and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario, run_git
from tests.ops.test_rebase import BUMPED, MOD, Releases, fix


def test_apply_explain_names_line_scope_and_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path, {"pkg/mod.py": MOD})
    s.add("bump", {"pkg/mod.py": BUMPED})
    s.upstream.commit({"pkg/mod.py": "import sys\n" + MOD})
    args = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["apply", *args, "--allow-other-commit", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "bump: carried" in out
    assert "pkg/mod.py:7 in def compute  by context" in out


def test_rebase_explain_json_carries_each_placement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rel = Releases(tmp_path, {"pkg/mod.py": MOD, "pkg/other.py": "X = 1\n"})
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", fix("import sys\n" + MOD))
    where = ["--target", "demo", "--project", str(rel.root), "--onto", "v1.1"]
    code = main(["rebase", *where, "--no-verify", "--json", "--explain"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    (mark,) = data["placements"]["bump"]
    assert (mark["file"], mark["line"], mark["scope"], mark["rule"]) == (
        "pkg/mod.py",
        7,
        ["def compute"],
        "context",
    )


def test_port_explain_names_the_candidates_of_an_ambiguous_hunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path, {"pkg/mod.py": MOD})
    patch = s.add("bump", {"pkg/mod.py": BUMPED})
    s.upstream.commit({"pkg/mod.py": MOD + "\n\n" + MOD})
    code = main(["port", str(patch), "--base", s.base, "--checkout", str(s.root), "--explain"])
    assert code == 6
    out = capsys.readouterr().out
    assert "not placed; candidates: line 6 in def compute, line 26 in def compute" in out
    assert run_git(s.root, "status", "--porcelain") == b""
