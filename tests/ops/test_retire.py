"""`patchkit retire`: a patch upstream merged leaves the series by command (its metadata written
with layout and comments kept, through the project's journal), never by a hand edit."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomlkit

from patchkit.cli import main
from patchkit.errors import ConfigError
from patchkit.model import UpstreamStatus
from patchkit.ops.retire import retire
from patchkit.project.load import load_project
from testing.builders import Project, Upstream


@pytest.fixture
def project(tmp_path: Path) -> Project:
    upstream = Upstream(tmp_path / "upstream")
    base = upstream.commit({"pkg/mod.py": "x = 1\n"})
    project = Project(tmp_path / "project", upstream, base)
    lock = project.path / "upstream.lock"
    lock.write_text(
        lock.read_text().replace("https://example.com/demo", "https://github.com/o/demo")
    )
    project.add_diff("fix", upstream.diff_of({"pkg/mod.py": "x = 2\n"}))
    meta = project.path / "patchsets/demo/patches/fix.toml"
    meta.write_text(
        meta.read_text()
        + '# why it is kept\nstatus = "local"  # until upstream merges it\nmerged_in = ""\n'
        + '\n[history]\nbroken_by = "1.3"\npending = "conflict on 1.3"\n'
    )
    return project


def _meta(project: Project) -> tuple[str, dict[str, object]]:
    text = (project.path / "patchsets/demo/patches/fix.toml").read_text()
    return text, tomlkit.parse(text).unwrap()


def test_retire_writes_status_release_and_pr_keeping_comments(project: Project) -> None:
    done = retire(project=load_project(project.path), patch_id="fix", merged_in="v1.2", pr=4321)
    text, meta = _meta(project)
    assert done.changed and (done.merged_in, done.pr) == (
        "1.2",
        "https://github.com/o/demo/pull/4321",
    )
    assert (meta["status"], meta["merged_in"]) == ("merged", "1.2")
    assert meta["upstream"] == {"pr": "https://github.com/o/demo/pull/4321", "state": "merged"}
    assert meta["history"] == {"broken_by": "1.3"}  # no longer pending
    assert "# why it is kept" in text and "# until upstream merges it" in text
    loaded = load_project(project.path).patch("fix")
    assert loaded.status is UpstreamStatus.MERGED and loaded.merged_in == "1.2"
    assert [p.id for p in load_project(project.path).patches("demo")] == []  # not applied


def test_retire_twice_writes_nothing_the_second_time(project: Project) -> None:
    retire(project=load_project(project.path), patch_id="fix", merged_in="1.2")
    before = _meta(project)[0]
    again = retire(project=load_project(project.path), patch_id="fix", merged_in="1.2")
    assert not again.changed and _meta(project)[0] == before


@pytest.mark.parametrize(
    ("merged_in", "pr"),
    [
        ("1.2; rm -rf /", None),
        ("", None),
        ("1.2", "not-a-pr"),
        ("1.2", "https://evil/pull/1"),
        ("1.2", "0"),
    ],
)
def test_bad_release_or_pr_is_a_usage_error_and_writes_nothing(
    project: Project, merged_in: str, pr: str | None
) -> None:
    before = _meta(project)[0]
    with pytest.raises(ConfigError) as bad:
        retire(project=load_project(project.path), patch_id="fix", merged_in=merged_in, pr=pr)
    assert bad.value.exit_code == 2 and _meta(project)[0] == before


def test_cli_retire_and_its_exit_codes(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(project.path)
    assert main(["retire", "nope", "--merged-in", "1.2", "--project", root]) == 2
    assert "no patch" in capsys.readouterr().err
    assert main(["retire", "fix", "--merged-in", "1.2", "--pr", "7", "--project", root]) == 0
    out = capsys.readouterr().out
    assert "retired fix: merged in 1.2 (https://github.com/o/demo/pull/7)" in out
    assert _meta(project)[1]["status"] == "merged"
