"""``patchkit watch``: a fake package index gains a release that absorbs one patch, carries one
and breaks one; the patch repository has a local bare remote and ``gh`` is a fake on PATH."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomlkit

from patchkit.errors import ConfigError
from patchkit.ops.watch import Options, WatchResult, watch
from patchkit.outcome import Outcome
from patchkit.project.load import load_project
from patchkit.upstream.github import Gh
from patchkit.upstream.history import open_history
from patchkit.upstream.index import IndexConfig, PackageIndex
from patchkit.watch.report import Fate
from testing.builders import Project, Upstream
from testing.builders import run_git as _run_git
from testing.fake_gh import FakeGh, fake_gh
from testing.fake_index import FakeIndex, make_tarball


def run_git(cwd: Path, *args: str) -> str:
    return _run_git(cwd, *args).decode()


A = "def absorbed():\n    return 1\n"
B = "import os\n\n\ndef carried(x):\n    y = x\n    return y\n\n\ndef tail():\n    return 0\n"
C = "def broken(a):\n    return a + 1\n"


class Watched:
    """A patch repository locked at 1.0 of a fake index, with three diff patches, pushed to a
    bare remote; ``release`` adds a version to the index."""

    def __init__(self, root: Path) -> None:
        self.index = FakeIndex()
        self.root = root
        scratch = Upstream(root / "scratch")
        scratch.commit({"pkg/a.py": A, "pkg/b.py": B, "pkg/c.py": C})
        self.project = Project(root / "patches", scratch, "0" * 40)
        add = self.project.add_diff
        add("absorb", scratch.diff_of({"pkg/a.py": A.replace("1", "2")}))
        add("carry", scratch.diff_of({"pkg/b.py": B.replace("y = x", "y = x * 2")}))
        add("break", scratch.diff_of({"pkg/c.py": C.replace("a + 1", "a + 2")}))
        self.path = self.project.path
        (self.path / "upstream.lock").write_text(
            '[targets.demo]\nrepository = "https://example.com/demo"\nversion = "1.0"\n'
            'commit = "1111111"\nsource = { kind = "index", package = "fake-vllm" }\n'
        )
        self.release("1.0", {"pkg/a.py": A, "pkg/b.py": B, "pkg/c.py": C})
        self.index.start()
        run_git(self.path, "init", "-q", "-b", "main")
        run_git(self.path, "add", "-A")
        run_git(self.path, "commit", "-qm", "patches")
        self.remote = root / "remote.git"
        run_git(root, "init", "-q", "--bare", str(self.remote))
        run_git(self.path, "remote", "add", "origin", str(self.remote))
        run_git(self.path, "push", "-q", "origin", "main")

    def release(self, version: str, files: dict[str, str]) -> None:
        top = f"fake_vllm-{version}"
        content = {f"{top}/{name}": text.encode() for name, text in files.items()}
        self.index.add(f"{top}.tar.gz", make_tarball(content))

    def run(self, gh: Gh | None = None, **options: object) -> WatchResult:
        project = load_project(self.path)
        index = PackageIndex(IndexConfig(self.index.url, "t"))
        history = open_history(project.entry("demo"), index=index)
        try:
            opts = Options(verify=False, **options)  # type: ignore[arg-type]
            return watch(project=project, target="demo", options=opts, gh=gh, history=history)
        finally:
            history.close()

    def branch_file(self, branch: str, path: str) -> str:
        return run_git(self.path, "show", f"{branch}:{path}")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Watched]:
    watched = Watched(tmp_path)
    try:
        yield watched
    finally:
        watched.index.stop()


NEW = {
    "pkg/a.py": A.replace("1", "2"),  # upstream made the absorbed patch's change
    "pkg/b.py": "import sys\n" + B,  # moved: the carried patch applies three-way
    "pkg/c.py": C.replace("a + 1", "a - 1"),  # the broken patch's line changed
}


def _gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[FakeGh, Gh]:
    fake = fake_gh(tmp_path, monkeypatch)
    fake.on("pr", "list", out=[])
    fake.on("pr", "create", out="https://github.com/me/patches/pull/7\n")
    fake.on("issue", "list", out=[])
    fake.on("issue", "create", out="https://github.com/me/patches/issues/8\n")
    return fake, Gh.find()


def test_up_to_date_says_so_and_writes_nothing(repo: Watched) -> None:
    result = repo.run()
    assert result.up_to_date and result.summary is None
    assert run_git(repo.path, "branch", "--list").split() == ["*", "main"]


def test_a_new_release_is_rebased_on_a_branch_with_a_report_a_pr_and_an_issue(
    repo: Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.release("1.1", NEW)
    fake, gh = _gh(tmp_path, monkeypatch)
    main_before = run_git(repo.path, "rev-parse", "main")
    result = repo.run(gh, report_dir=tmp_path / "out", remote="origin", open_pr=True)

    summary = result.summary
    assert summary is not None and summary.onto == "1.1" and summary.branch == "watch/demo-1.1"
    fates = {p.id: p.fate for p in summary.patches}
    assert fates == {"absorb": Fate.ABSORBED, "carry": Fate.CARRIED, "break": Fate.BROKE}
    broke = next(p for p in summary.patches if p.id == "break")
    assert broke.hunks and broke.hunks[0].file == "pkg/c.py"
    assert "-    return a + 1" in broke.hunks[0].upstream_change  # the upstream change shown
    # the default branch is untouched; the lock moved on the watch branch only
    assert run_git(repo.path, "rev-parse", "main") == main_before
    lock = tomlkit.parse(repo.branch_file("watch/demo-1.1", "upstream.lock")).unwrap()
    assert lock["targets"]["demo"]["version"] == "1.1"
    absorbed = repo.branch_file("watch/demo-1.1", "patchsets/demo/patches/absorb.toml")
    assert 'status = "merged"' in absorbed and 'absorbed_by = "1.1"' in absorbed
    # the report, the push, the PR and the issue
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["counts"] == {"absorbed": 1, "carried": 1, "broke": 1}
    assert (tmp_path / "out" / "matrix.html").exists()
    assert "broke" in (tmp_path / "out" / "report.md").read_text()
    assert run_git(repo.remote, "rev-parse", "watch/demo-1.1").strip() == result.commit
    assert [(p.kind, p.action.value) for p in result.published] == [
        ("pr", "opened"),
        ("issue", "opened"),
    ]
    created = [c for c in fake.calls() if c[:2] == ["pr", "create"]]
    assert (
        created and "--base" in created[0] and created[0][created[0].index("--base") + 1] == "main"
    )


def test_a_second_run_changes_nothing(
    repo: Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.release("1.1", NEW)
    fake, gh = _gh(tmp_path, monkeypatch)
    first = repo.run(gh, report_dir=tmp_path / "out", remote="origin", open_pr=True)
    body = (tmp_path / "out" / "report.md").read_text()
    assert first.summary is not None
    pr = {"number": 7, "url": "https://github.com/me/patches/pull/7", "body": body,
          "title": f"watch: {first.summary.title}"}  # fmt: skip
    issue = {"number": 8, "url": "https://github.com/me/patches/issues/8", "body": body,
             "title": "watch: patches break on demo 1.1"}  # fmt: skip
    fake.rules.clear()
    fake.on("auth", "status")
    fake.on("pr", "list", out=[pr])
    fake.on("issue", "list", out=[issue])
    calls = len(fake.calls())
    # a fresh clone of the patch repository, as a CI job has
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo.remote), str(clone))
    repo.path = clone
    second = repo.run(gh, report_dir=tmp_path / "out2", remote="origin", open_pr=True)
    assert second.summary is not None and second.summary.branch_state == "unchanged"
    assert second.commit == first.commit and not second.pushed
    assert [p.action.value for p in second.published] == ["unchanged", "unchanged"]
    written = [c for c in fake.calls()[calls:] if c[1] in ("create", "edit")]
    assert written == []
    assert (tmp_path / "out2" / "report.md").read_text() == body


def test_an_edited_branch_is_left_alone(repo: Watched, tmp_path: Path) -> None:
    repo.release("1.1", NEW)
    first = repo.run(remote="origin")
    run_git(repo.path, "checkout", "-q", "watch/demo-1.1")
    (repo.path / "NOTES.md").write_text("a person's fix\n")
    run_git(repo.path, "add", "NOTES.md")
    run_git(repo.path, "commit", "-qm", "fix by hand")
    edited = run_git(repo.path, "rev-parse", "HEAD").strip()
    run_git(repo.path, "checkout", "-q", "main")
    second = repo.run(remote="origin")
    assert second.summary is not None and second.summary.branch_state.startswith("left alone")
    assert run_git(repo.path, "rev-parse", "watch/demo-1.1").strip() == edited
    assert run_git(repo.remote, "rev-parse", "watch/demo-1.1").strip() == first.commit


def test_the_default_branch_is_never_the_watch_branch(repo: Watched) -> None:
    repo.release("1.1", NEW)
    with pytest.raises(ConfigError, match="default branch"):
        repo.run(branch="main")
    assert run_git(repo.path, "log", "--format=%s", "main").split("\n")[0] == "patches"


def test_a_project_outside_git_is_refused(tmp_path: Path) -> None:
    watched = Watched(tmp_path)
    try:
        watched.release("1.1", NEW)
        import shutil

        shutil.rmtree(watched.path / ".git")
        with pytest.raises(ConfigError, match="not a git repository"):
            watched.run()
    finally:
        watched.index.stop()


CARRY_TEST = """\
from pkg.b import carried


def test_carried_doubles():
    assert carried(2) == 4
"""


def test_cli_verifies_the_carried_patch_and_exits_8_when_one_broke(
    repo: Watched, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from patchkit.cli import main

    tests = repo.path / "patchsets" / "demo" / "tests"
    tests.mkdir()
    (tests / "test_carry.py").write_text(CARRY_TEST)
    meta = repo.path / "patchsets" / "demo" / "patches" / "carry.toml"
    meta.write_text(meta.read_text() + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_carry.py"\n')
    run_git(repo.path, "add", "-A")
    run_git(repo.path, "commit", "-qm", "a test for carry")
    monkeypatch.setenv("PATCHKIT_INDEX_URL", repo.index.url)
    args = ["watch", "--target", "demo", "--project", str(repo.path), "--once", "--json"]
    assert main(args) == 0  # up to date
    assert json.loads(capsys.readouterr().out)["up_to_date"] is True
    repo.release("1.1", NEW)
    assert main(args) == 8  # a patch broke
    out = json.loads(capsys.readouterr().out)
    lines = {p["id"]: p for p in out["summary"]["patches"]}
    assert lines["carry"]["verification"].startswith("passed")
    assert lines["break"]["fate"] == "broke" and out["summary"]["branch"] == "watch/demo-1.1"


def test_a_patch_absorbed_then_reworked_upstream_is_retired_not_broken(repo: Watched) -> None:
    repo.release("1.1", {**NEW, "pkg/c.py": C})  # absorbs `absorb`; `break` still applies
    reworked = {
        **NEW,
        "pkg/c.py": C,
        "pkg/a.py": A.replace("1", "2").replace("return", "return 0 +"),
    }
    repo.release("1.2", reworked)  # then upstream moved the absorbed line on
    result = repo.run()
    assert result.summary is not None and result.summary.onto == "1.2"
    line = next(p for p in result.summary.patches if p.id == "absorb")
    assert (line.fate, line.release) == (Fate.ABSORBED, "1.1")
    assert isinstance(line.outcome, Outcome)  # the one vocabulary; a string only in the report
    meta = repo.branch_file("watch/demo-1.2", "patchsets/demo/patches/absorb.toml")
    assert 'status = "merged"' in meta and 'merged_in = "1.1"' in meta


def test_a_carried_patch_whose_tests_fail_is_reported_broken_not_carried(
    repo: Watched, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from patchkit.cli import main

    tests = repo.path / "patchsets" / "demo" / "tests"
    tests.mkdir()
    (tests / "test_carry.py").write_text(CARRY_TEST.replace("== 4", "== 5"))  # fails with it
    meta = repo.path / "patchsets" / "demo" / "patches" / "carry.toml"
    meta.write_text(meta.read_text() + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_carry.py"\n')
    run_git(repo.path, "add", "-A")
    run_git(repo.path, "commit", "-qm", "a failing test for carry")
    monkeypatch.setenv("PATCHKIT_INDEX_URL", repo.index.url)
    repo.release("1.1", {**NEW, "pkg/c.py": C})  # only `carry` moves; nothing else breaks
    args = ["watch", "--target", "demo", "--project", str(repo.path), "--once", "--json"]
    assert main(args) == 8
    lines = {p["id"]: p for p in json.loads(capsys.readouterr().out)["summary"]["patches"]}
    assert lines["carry"]["fate"] == "broke" and lines["carry"]["outcome"] == "carried, tests fail"
    assert lines["carry"]["verification"].startswith("failed")


def test_with_ray_the_moved_patches_tests_run_as_tasks_on_the_branchs_lock(
    repo: Watched, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    import patchkit.ops.watch as watch_op

    asked: dict[str, object] = {}

    def fake_verify_on_ray(**kw: object) -> SimpleNamespace:
        project = kw["project"]
        asked.update(kw, version=project.entry("demo").version)  # type: ignore[attr-defined]
        records = [SimpleNamespace(patch=p, result="passed", reason="") for p in kw["only"]]  # type: ignore[attr-defined]
        return SimpleNamespace(records=records)

    monkeypatch.setattr(watch_op, "verify_on_ray", fake_verify_on_ray)
    repo.release("1.1", NEW)
    project = load_project(repo.path)
    index = PackageIndex(IndexConfig(repo.index.url, "t"))
    history = open_history(project.entry("demo"), index=index)
    try:
        options = Options(verify=True, ray="127.0.0.1:6379")
        result = watch(project=project, target="demo", options=options, history=history)
    finally:
        history.close()
    assert asked["address"] == "127.0.0.1:6379" and asked["only"] == ("carry",)
    assert asked["version"] == "1.1"  # the branch's project: the lock already moved there
    assert result.summary is not None
    carry = next(p for p in result.summary.patches if p.id == "carry")
    assert carry.verification == "passed"
