"""An imported pull request is retired by its merge commit (issue 26): the patch records the
PR's merge commit (``[upstream] merge_commit``), and once the locked upstream (or a matrix
release) holds that commit, ``status`` says the patch is absorbed by that PR and the matrix
marks the release absorbed — here where upstream merged the change in another form, so that
judging by content alone says the patch conflicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.errors import ConfigError
from patchkit.matrix.store import MemoryStore
from patchkit.ops.context import Where
from patchkit.ops.matrix import matrix
from patchkit.ops.status import PatchState, status_target
from patchkit.project.load import load_project
from patchkit.project.lock import move_lock
from testing.builders import Project, Upstream, run_git
from testing.fake_gh import fake_gh
from tests.importers.conftest import Releases3
from tests.importers.test_prs import _diff

TAIL = "def tail():\n    return 1\n"
PR = "https://github.com/example/demo/pull/42"


def _world(tmp_path: Path, upstream_table: str) -> tuple[Upstream, Project, str]:
    """v1.0; PR #42 merged with a merge commit (its own form of the fix) and tagged v1.1; a
    project locked at v1.0 carrying the PR as a patch."""
    up = Upstream(tmp_path / "upstream")
    base = up.commit({"pkg/tail.py": TAIL}, "1.0")
    run_git(up.path, "tag", "v1.0")
    diff = up.diff_of({"pkg/tail.py": TAIL.replace("return 1", "return 2")})
    run_git(up.path, "checkout", "-q", "-b", "pr-42")
    up.commit({"pkg/tail.py": "def tail():\n    return one() + one()\n"}, "fix tail (#42)")
    run_git(up.path, "checkout", "-q", "main")
    run_git(up.path, "merge", "-q", "--no-ff", "-m", "Merge pull request #42", "pr-42")
    merge = up.head()
    run_git(up.path, "tag", "v1.1")
    project = Project(tmp_path / "project", up, base)
    project.add_diff("tail", diff)
    meta = project.path / "patchsets" / "demo" / "patches" / "tail.toml"
    table = upstream_table.replace("MERGE", merge)
    meta.write_text(meta.read_text() + f'\n[upstream]\npr = "{PR}"\nstate = "merged"\n{table}')
    return up, project, merge


def _state(project: Project, up: Upstream) -> tuple[PatchState, str]:
    report = status_target(
        project=load_project(project.path), target="demo", where=Where(checkout=up.path)
    )
    [row] = report.patches
    return row.state, row.absorbed_by


def test_status_says_absorbed_once_the_lock_holds_the_merge_commit(tmp_path: Path) -> None:
    up, project, merge = _world(tmp_path, 'merge_commit = "MERGE"\n')
    assert _state(project, up) == (PatchState.NOT_APPLIED, "")  # the lock (v1.0) lacks it
    move_lock(project.path / "upstream.lock", "demo", version="1.1", commit=merge)
    state, said = _state(project, up)
    assert state is PatchState.ABSORBED
    assert said == f"absorbed by PR #42 (its merge commit {merge[:12]} is in 1.1)"


def test_the_matrix_marks_the_release_with_the_merge_commit_absorbed(tmp_path: Path) -> None:
    _, project, _ = _world(tmp_path, 'merge_commit = "MERGE"\n')
    m = matrix(
        project=load_project(project.path), target="demo", releases="v1.0..v1.1",
        store=MemoryStore(),
    )  # fmt: skip
    cells = {c.release: c for c in m.cells}
    assert [cells[r].outcome for r in m.releases] == ["applied", "upstreamed"]
    last = cells[m.releases[-1]]
    assert last.step == "merge-commit" and last.detail["engine"] == "conflict"  # by content
    assert last.detail["absorbed"].startswith("absorbed by PR #42 (its merge commit")
    [row] = m.rows
    assert row.absorbed_by == m.releases[-1] and row.broken_by is None


def test_a_known_release_retires_it_where_no_history_can_tell(tmp_path: Path) -> None:
    up, project, merge = _world(tmp_path, 'released_in = "1.1"\n')
    move_lock(project.path / "upstream.lock", "demo", version="1.1", commit=merge)
    assert _state(project, up) == (
        PatchState.ABSORBED,
        "absorbed by PR #42 (released in 1.1, at or before 1.1)",
    )


@pytest.mark.parametrize("table", ['merge_commit = "HEAD~1"\n', 'released_in = "../x"\n'])
def test_a_bad_merge_record_names_the_file_and_key(tmp_path: Path, table: str) -> None:
    _, project, _ = _world(tmp_path, table)
    with pytest.raises(ConfigError, match=r"tail\.toml: \[upstream\] (merge_commit|released_in)"):
        load_project(project.path).listed("demo")


def test_an_imported_merged_pr_records_its_merge_commit(
    releases3: Releases3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gh = fake_gh(tmp_path, monkeypatch)
    view = {"number": 7, "title": "Fix", "body": "", "state": "MERGED",
            "mergeCommit": {"oid": "ab" * 20}, "url": "https://github.com/vllm-project/vllm/pull/7"}  # fmt: skip
    gh.on("pr", "view", out=view)
    gh.on("pr", "diff", out=_diff(releases3))
    assert main(["import", "pr:vllm-project/vllm#7", "--target", "vllm", "--into", "prs",
                 "--project", str(releases3.project.path), "--json"]) == 0  # fmt: skip
    [meta] = load_project(releases3.project.path, ["prs"]).listed("vllm")
    assert (meta.upstream.merge_commit, meta.upstream.number) == ("ab" * 20, "7")
    assert json.dumps(gh.calls()).count("mergeCommit") == 1
