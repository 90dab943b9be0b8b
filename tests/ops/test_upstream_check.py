"""``upstream-check`` and ``export-pr --open`` against a fake ``gh`` on PATH (it records its
argv and prints canned JSON): upstream PRs for the same fix found by the recorded PR, the issue
number and the same code, written to ``[upstream]`` with the file's comments kept; a clear exit
without gh or its login; a comment on an open duplicate instead of a new PR."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.errors import ConfigError, SourceError
from patchkit.ops.upstream_check import upstream_check
from patchkit.project.load import load_project
from patchkit.project.sets import read_toml
from patchkit.upstream.duplicates import _code_like, keywords
from patchkit.upstream.github import Gh
from testing.builders import run_git
from testing.fake_gh import FakeGh, fake_gh
from tests.export.test_export import MOD, Case

REPO = "vllm-project/vllm"
URL = f"https://github.com/{REPO}"
META = f'''title = "Compile spec-decode kernels during CUDA graph warmup"
# reviewers read the why first
why = """
The warmup _dummy_run calls in GPUModelRunner._warmup_and_capture run without
is_graph_capturing."""
issues = ["{URL}/issues/39809"]

[pr]
tags = ["Bugfix"]
'''
DIFF = """diff --git a/pkg/mod.py b/pkg/mod.py
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,2 +1,2 @@ def _warmup_and_capture(self):
-    self._dummy_run(n)
+    self._dummy_run(n, is_graph_capturing=True)
"""


def pr(number: int, state: str, files: tuple[str, ...] = ("pkg/mod.py",)) -> dict[str, object]:
    return {
        "number": number,
        "url": f"{URL}/pull/{number}",
        "state": state,
        "title": f"PR {number}",
        "files": [{"path": f} for f in files],
    }


def case(tmp_path: Path, meta: str = META) -> Case:
    c = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    c.add("warmup", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, meta)
    lock = c.project.path / "upstream.lock"
    lock.write_text(lock.read_text().replace("https://example.com/vllm", URL))
    return c


def quiet(gh: FakeGh) -> None:
    """Searches that find nothing (after any rule added before)."""
    gh.on("pr", "list", out=[])


def check(c: Case, **kw: object) -> object:
    project = load_project(c.project.path)
    return upstream_check(project=project, gh=Gh.find(), date="2026-11-24", **kw)  # type: ignore[arg-type]


def upstream_table(c: Case) -> dict[str, object]:
    return dict(read_toml(c.patches_dir / "warmup.toml").get("upstream", {}))


# -- finding the PRs -----------------------------------------------------------------------------
def test_keywords_are_the_identifiers_of_title_and_why(tmp_path: Path) -> None:
    meta = load_project(case(tmp_path).project.path).patch("warmup")
    assert keywords(meta) == ("_dummy_run", "GPUModelRunner", "_warmup_and_capture")


@pytest.mark.parametrize(
    ("token", "code"),
    [
        ("group_size", True),
        ("DISPATCH_GQA_GROUP_SIZE", True),
        ("SM12x", True),
        ("MXFP4", True),
        ("MambaMixer2", True),
        ("Dispatch", False),
        ("H200", False),
        ("Blackwell", False),
    ],
)
def test_code_like_tokens(token: str, code: bool) -> None:
    assert _code_like(token) is code


def test_project_names_are_no_keywords(tmp_path: Path) -> None:
    meta = META.replace("Compile spec-decode", "Make FlashInfer and vLLM compile spec-decode")
    project = load_project(case(tmp_path, meta).project.path)
    assert "FlashInfer" not in keywords(project.patch("warmup"))


def test_a_pr_naming_the_issue_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "list", contains="39809 in:title,body", out=[pr(41233, "OPEN", ("other.py",))])
    quiet(gh)
    report = check(c)
    (result,) = report.checks  # type: ignore[attr-defined]
    assert result.found[0].evidence == ("names #39809",)
    assert upstream_table(c) == {
        "pr": f"{URL}/pull/41233",
        "state": "open",
        "checked": "2026-11-24",
    }
    text = (c.patches_dir / "warmup.toml").read_text()
    assert "# reviewers read the why first" in text  # the file's comments are kept
    search = ["pr", "list", "--repo", REPO, "--state", "all", "--search", "39809 in:title,body"]
    assert any(call[: len(search)] == search for call in gh.calls())


def test_a_pr_changing_the_same_code_counts_another_file_or_code_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    found = [pr(500, "MERGED"), pr(501, "MERGED"), pr(502, "MERGED", ("docs/x.md",))]
    gh.on("pr", "list", contains="_warmup_and_capture", out=found)
    gh.on("pr", "diff", "500", out=DIFF)
    gh.on("pr", "diff", "501", out=DIFF.replace("_dummy_run", "compile").replace("_warmup", "_x"))
    quiet(gh)
    (result,) = check(c).checks  # type: ignore[attr-defined]
    assert [f.number for f in result.found] == [500]
    assert result.found[0].evidence == ("changes pkg/mod.py (_warmup_and_capture)",)
    assert upstream_table(c)["state"] == "merged"
    assert not any(call[:3] == ["pr", "diff", "502"] for call in gh.calls())


def test_the_recorded_pr_is_looked_up_and_merged_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = f'\n[upstream]\npr = "{URL}/pull/39483"\nstate = "open"\nchecked = "2026-11-01"\n'
    c = case(tmp_path, META + recorded)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "view", "39483", out=pr(39483, "CLOSED"))
    gh.on("pr", "list", contains="39809", out=[pr(41000, "MERGED", ())])
    quiet(gh)
    (result,) = check(c).checks  # type: ignore[attr-defined]
    assert [(f.number, f.state.value) for f in result.found] == [
        (41000, "merged"),
        (39483, "closed"),
    ]
    assert upstream_table(c)["pr"] == f"{URL}/pull/41000"


def test_nothing_found_is_none_and_dry_run_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = case(tmp_path)
    quiet(fake_gh(tmp_path, monkeypatch))
    before = (c.patches_dir / "warmup.toml").read_text()
    (result,) = check(c, write=False).checks  # type: ignore[attr-defined]
    assert result.after.state.value == "none" and not result.written
    assert (c.patches_dir / "warmup.toml").read_text() == before
    (result,) = check(c).checks  # type: ignore[attr-defined]
    assert upstream_table(c) == {"state": "none", "checked": "2026-11-24"}
    (again,) = check(c).checks  # type: ignore[attr-defined]
    assert not again.written  # idempotent


# -- without gh, or when it fails ----------------------------------------------------------------
def test_without_gh_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    c = case(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert main(["upstream-check", "--project", str(c.project.path)]) == 2
    assert "needs the GitHub CLI `gh`, which is not installed" in capsys.readouterr().err


def test_gh_not_logged_in_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    c = case(tmp_path)
    fake_gh(tmp_path, monkeypatch, logged_in=False)
    assert main(["upstream-check", "--project", str(c.project.path)]) == 2
    err = capsys.readouterr().err
    assert "not logged in" in err and "gh auth login" in err


def test_a_failing_gh_is_a_source_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "list", rc=1, err="HTTP 403: API rate limit exceeded")
    with pytest.raises(SourceError, match="rate limit") as err:
        check(c)
    assert err.value.exit_code == 3


def test_cli_reports_and_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "list", contains="39809", out=[pr(41233, "MERGED", ())])
    quiet(gh)
    assert main(["upstream-check", "--target", "vllm", "--project", str(c.project.path)]) == 0
    out = capsys.readouterr().out
    assert f"warmup ({REPO}): merged {URL}/pull/41233 [written]" in out
    assert "#41233 merged: PR 41233 (names #39809)" in out


# -- export-pr --open ----------------------------------------------------------------------------
def fork(c: Case, tmp_path: Path) -> None:
    path = tmp_path / "fork.git"
    run_git(tmp_path, "init", "-q", "--bare", str(path))
    c.git("remote", "add", "fork", str(path))


def test_open_comments_on_an_open_duplicate_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "list", contains="39809", out=[pr(41233, "OPEN", ())])
    gh.on("pr", "view", "41233", out=pr(41233, "OPEN", ()))  # recorded by the first run
    gh.on("pr", "comment", out=f"{URL}/pull/41233#issuecomment-1\n")
    quiet(gh)
    (export,) = c.export("warmup", open_pr=True).exports  # no --push needed for a comment
    assert export.commented == f"{URL}/pull/41233" and export.pr_url is None
    comment = ["pr", "comment", f"{URL}/pull/41233", "--body-file"]
    assert [call[:4] for call in gh.calls() if call[:2] == ["pr", "comment"]] == [comment]
    assert not any(call[:2] == ["pr", "create"] for call in gh.calls())
    c.export("warmup", open_pr=True)
    assert len([call for call in gh.calls() if call[:2] == ["pr", "comment"]]) == 1


def test_open_refuses_a_merged_duplicate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = case(tmp_path)
    fork(c, tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "list", contains="39809", out=[pr(41233, "MERGED", ())])
    quiet(gh)
    with pytest.raises(ConfigError, match="merged upstream already"):
        c.export("warmup", open_pr=True, push_remote="fork")
    assert upstream_table(c)["state"] == "merged"
    assert not any(call[:2] == ["pr", "create"] for call in gh.calls())


def test_open_creates_a_pr_when_none_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = case(tmp_path)
    fork(c, tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("pr", "create", out=f"{URL}/pull/42000\n")
    quiet(gh)
    with pytest.raises(ConfigError, match="--open needs --push"):
        c.export("warmup", open_pr=True)
    (export,) = c.export("warmup", open_pr=True, push_remote="fork").exports
    assert export.pr_url == f"{URL}/pull/42000"
    (create,) = [call for call in gh.calls() if call[:2] == ["pr", "create"]]
    title = "[Bugfix] Compile spec-decode kernels during CUDA graph warmup"
    assert create[create.index("--title") + 1] == title
    assert create[create.index("--repo") + 1] == REPO
    meta = read_toml(c.patches_dir / "warmup.toml")
    assert meta["prs"] == [f"{URL}/pull/42000"] and meta["status"] == "forwarded"
    assert meta["upstream"]["state"] == "none"  # checked before the PR was made
    gh.on("pr", "view", "42000", out=pr(42000, "OPEN"))
    (again,) = c.export("warmup", open_pr=True, push_remote="fork").exports
    assert len([call for call in gh.calls() if call[:2] == ["pr", "create"]]) == 1
    assert again.pr_url == f"{URL}/pull/42000" and again.commented is None  # its own PR
    assert read_toml(c.patches_dir / "warmup.toml")["upstream"]["pr"] == f"{URL}/pull/42000"


def test_the_prs_author_whether_it_is_ours_and_related_prs_are_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("api", "user", out="ada\n")
    theirs = {**pr(39483, "OPEN"), "author": {"login": "bob"}}
    other = {**pr(39628, "CLOSED", ("other.py",)), "author": {"login": "carol"}}
    gh.on("pr", "list", contains="39809 in:title,body", out=[theirs, other])
    quiet(gh)
    check(c)
    table = upstream_table(c)
    assert (table["pr"], table["state"], table["author"], table["ours"]) == (
        f"{URL}/pull/39483",
        "open",
        "bob",
        False,
    )
    assert table["related"] == [
        {"pr": f"{URL}/pull/39628", "state": "closed", "why": "names #39809"}
    ]
    meta = load_project(c.project.path).patch("warmup")
    assert meta.upstream.ours is False and meta.upstream.related[0].state.value == "closed"


def test_a_pr_by_the_gh_user_is_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = case(tmp_path)
    gh = fake_gh(tmp_path, monkeypatch)
    gh.on("api", "user", out="bob\n")
    gh.on("pr", "list", contains="39809", out=[{**pr(39483, "OPEN"), "author": {"login": "bob"}}])
    quiet(gh)
    check(c)
    assert (upstream_table(c)["author"], upstream_table(c)["ours"]) == ("bob", True)
