"""export-pr: one branch per patch built off to the side, PR text in each target's conventions
(golden files), DCO, idempotent re-export, pushing to forks and never to upstream.

The PR text's golden tests are in test_prtext.py."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from patchkit.cli import export_pr as export_cli
from patchkit.cli.export_pr import report_lines
from patchkit.errors import (
    ConfigError,
    GitError,
    PatchFailed,
    PatchkitError,
    SourceError,
    TreeError,
)
from patchkit.export.prtext import CUT_MARK, Identity, conventional_title
from patchkit.export.publish import normalise_url, record_pr
from patchkit.export.results import ExportReport, PatchExport
from patchkit.ops.export_pr import export_pr
from patchkit.project.load import load_project
from patchkit.project.sets import patch_digest
from testing.builders import Project, Upstream, run_git

GOLDEN = Path(__file__).parent / "golden"
ADA = Identity("Ada Lovelace", "ada@example.com")
MOD = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n"
FIX_F = "test/fix-the-off-by-one-in-f"  # the prefix of git config, the title's words
KERNEL = "#pragma once\n#define GROUPS(x) \\\n  CASE(1) \\\n  CASE(2)\n"


class Case:
    """An upstream checkout of ``target`` and a project with patches for it."""

    def __init__(self, root: Path, target: str, files: dict[str, str | bytes]) -> None:
        self.upstream = Upstream(root / "upstream")
        self.base = self.upstream.commit(files, "base")
        self.project = Project(root / "project", self.upstream, self.base, target=target)
        self.target = target
        self.git("config", "patchkit.branchPrefix", "test/")  # the user's own prefix

    @property
    def patches_dir(self) -> Path:
        return self.project.path / "patchsets" / "demo" / "patches"

    def add(self, patch_id: str, files: dict[str, str], meta: str = "") -> None:
        self.project.add_diff(patch_id, self.upstream.diff_of(files))
        self.set_meta(patch_id, meta)

    def change(self, patch_id: str, files: dict[str, str]) -> None:
        """Edit an existing diff patch (its metadata stays)."""
        (self.patches_dir / f"{patch_id}.patch").write_bytes(self.upstream.diff_of(files))

    def set_meta(self, patch_id: str, meta: str) -> None:
        path = self.patches_dir / f"{patch_id}.toml"
        path.write_text(f'id = "{patch_id}"\ntarget = "{self.target}"\n{meta}')

    def export(self, *ids: str, **kw: object) -> ExportReport:
        project = load_project(self.project.path)
        return export_pr(
            project=project,
            target=self.target,
            tree_root=self.upstream.path,
            patch_ids=ids,
            identity=kw.pop("identity", ADA),
            reviewed_by=kw.pop("reviewed_by", ADA),
            **kw,  # type: ignore[arg-type]
        )

    def git(self, *args: str) -> str:
        return run_git(self.upstream.path, *args).decode().strip()


VLLM_META = '''title = "Fix the off-by-one in f"
# the why is what reviewers read first
why = """
f returned x + 1 where callers expect x + 2 (seen on GB10 with the Mamba builder).
Adding two fixes it."""
author = "Grace Hopper <grace@example.com>"
issues = ["https://example.com/vllm/issues/39809"]
notes = "Proven on Hopper only; SM121 was not available."

[pr]
tags = ["Bugfix", "Hardware][NVIDIA"]

[[tests]]
where = "upstream"
node = "tests/test_mod.py::test_f"

[[tests]]
where = "set"
node = "tests/test_fix_f.py"
gpu = true
min_capability = "9.0"
'''

FI_META = '''title = "Dispatch GQA group size 16 in batch decode"
why = """
The decode kernels dispatch group sizes 1 and 2 only, so group size 16 fails with
`Unsupported group_size: 16`. The fix adds the case."""
author = "patchkit developers <patchkit@localhost>"
notes = "SM121 (GB10) itself was not available."

[pr]
scope = "fix(decode)"

[[tests]]
where = "set"
node = "tests/test_decode_gqa16.py"
gpu = true
min_capability = "8.0"
'''


def vllm_case(tmp_path: Path) -> Case:
    template = (GOLDEN / "vllm_template.md").read_text()
    files = {"pkg/mod.py": MOD, ".github/PULL_REQUEST_TEMPLATE.md": template}
    case = Case(tmp_path, "vllm", files)
    case.add("fix-f", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, VLLM_META)
    return case


def fi_case(tmp_path: Path) -> Case:
    case = Case(tmp_path, "flashinfer", {"include/utils.cuh": KERNEL})
    new = KERNEL.replace("  CASE(2)\n", "  CASE(2) \\\n  CASE(16)\n")
    case.add("decode-gqa-group-size-16", {"include/utils.cuh": new}, FI_META)
    return case


def write_record(case: Case, patch_id: str, **extra: object) -> None:
    digest = patch_digest(load_project(case.project.path).patch(patch_id))
    record = {
        "patch": patch_id,
        "digest": digest,
        "target": case.target,
        "lock_commit": case.base,
        "lock_version": "1.0",
        "tree_commit": case.base,
        "result": "passed",
        "reason": "",
        "time": "2026-11-20T10:00:00Z",
        "duration_s": 12.5,
        "environment": {
            "python": "3.12.3",
            "platform": "Linux",
            "gpu": "NVIDIA H200",
            "capability": "9.0",
            "driver": "580.95",
            "cuda": "12.8",
            "torch": "2.11.0",
            "triton": "3.6.0",
        },
        "tests": [
            {
                "node": "tests/test_mod.py::test_f",
                "where": "upstream",
                "result": "passed",
                "reason": "",
                "passed": 1,
                "failed": 0,
                "skipped": 0,
            },
            {
                "node": "tests/test_fix_f.py",
                "where": "set",
                "result": "passed",
                "reason": "",
                "passed": 3,
                "failed": 0,
                "skipped": 0,
            },
        ],
        **extra,
    }
    (case.project.path / "patchsets" / "demo" / "verification.json").write_text(
        json.dumps([record], indent=2)
    )


def hide_tools(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real = shutil.which
    monkeypatch.setattr(
        "patchkit.export.tools.shutil.which", lambda name: None if name in names else real(name)
    )


@pytest.fixture
def no_clang_format(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_tools(monkeypatch, "clang-format")


@pytest.fixture
def no_formatters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Golden text must not depend on which formatters are installed here."""
    hide_tools(monkeypatch, "clang-format", "ruff")


def only(report: ExportReport) -> PatchExport:
    assert len(report.exports) == 1
    return report.exports[0]


# -- text (its golden tests: test_prtext.py) --------------------------------------------------
@pytest.mark.usefixtures("no_formatters")
def test_vllm_commit_message_and_body(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    write_record(case, "fix-f")
    export = only(case.export("fix-f"))
    assert export.text.title == "[Bugfix][Hardware][NVIDIA] Fix the off-by-one in f"
    assert "- NVIDIA H200 (compute capability 9.0); driver 580.95" in export.text.body
    assert "Present in vLLM 1.0 (commit " in export.text.body
    assert "ruff" not in export.text.body  # formatting is the report's business, not the PR's
    assert case.git("log", "-1", "--format=%B", export.commit) == export.text.commit_message.strip()


@pytest.mark.usefixtures("no_formatters")
def test_flashinfer_commit_message_and_body(tmp_path: Path) -> None:
    case = fi_case(tmp_path)
    export = only(case.export("decode-gqa-group-size-16"))
    assert export.text.title == "fix(decode): dispatch GQA group size 16 in batch decode"
    for heading in (
        "## 📌 Description",
        "## 🔍 Related Issues",
        "## 🚀 Pull Request Checklist",
        "### ✅ Pre-commit Checks",
        "## 🧪 Tests",
        "## Reviewer Notes",
    ):
        assert heading in export.text.body.splitlines()
    assert export.text.commit_message.startswith(f"{export.text.title}\n\nThe decode kernels")
    assert "Not yet run on this version of the change" in export.text.body
    assert "clang-format" not in export.text.body


def test_nothing_below_before_submitting(tmp_path: Path) -> None:
    body = only(vllm_case(tmp_path).export("fix-f")).text.body
    last = body.rstrip("\n").splitlines()[-1]
    assert CUT_MARK in last
    purpose = body.index("## Purpose")
    assert (
        purpose < body.index("## Test Plan") < body.index("## Test Result") < body.index(CUT_MARK)
    )
    assert "<summary> Essential Elements" in body  # the template text above the line is kept


def test_dco_line_matches_the_author(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    export = only(case.export("fix-f"))
    author = case.git("log", "-1", "--format=%an <%ae>", export.commit)
    committer = case.git("log", "-1", "--format=%cn <%ce>", export.commit)
    assert author == committer == "Ada Lovelace <ada@example.com>"
    assert export.text.commit_message.rstrip("\n").splitlines()[-1] == f"Signed-off-by: {author}"
    assert "Co-authored-by: Grace Hopper <grace@example.com>" in export.text.commit_message


def test_stale_or_failed_records_are_said(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    write_record(case, "fix-f", digest="0" * 64, result="failed")
    body = only(case.export("fix-f")).text.body
    assert "**failed**" not in body  # a record of another version of the patch proves nothing
    assert "Not yet run on this version of the change" in body
    write_record(case, "fix-f", result="failed")
    assert "**failed**" in only(case.export("fix-f")).text.body


def test_conventional_title_keeps_acronyms() -> None:
    meta = load_meta_stub(title="GQA: Add group 16.", scope="perf(attention)")
    assert conventional_title(meta) == "perf(attention): GQA: Add group 16"


def load_meta_stub(title: str, scope: str):  # type: ignore[no-untyped-def]
    from patchkit.model import PatchKind, PatchMeta

    return PatchMeta(
        title=title,
        pr_scope=scope,
        id="x",
        why="",
        target="t",
        kind=PatchKind.DIFF,
        file=Path("x"),
        meta_file=Path("x"),
        set_name="s",
    )


# -- the branch ----------------------------------------------------------------------------------
def test_branch_is_one_commit_on_the_base(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    export = only(case.export("fix-f"))
    assert export.state == "created" and export.files == ("pkg/mod.py",)
    assert case.git("rev-parse", FIX_F) == export.commit
    assert case.git("rev-parse", f"{export.commit}^") == case.base
    assert case.git("show", f"{export.commit}:pkg/mod.py").count("x + 2") == 1
    out = export.out_dir
    assert (out / "COMMIT_MSG").read_text() == export.text.commit_message
    assert (out / "PR_BODY.md").read_text() == export.text.body
    assert b"Signed-off-by: Ada Lovelace" in (out / "fix-f.patch").read_bytes()


def test_worktree_and_index_untouched(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    tree = case.upstream.path
    (tree / "pkg" / "mod.py").write_text(MOD.replace("x * 2", "x * 3"))  # a user edit
    (tree / "notes.txt").write_text("mine")
    index = tree / ".git" / "index"
    before = (case.git("status", "--porcelain"), index.read_bytes(), case.git("rev-parse", "HEAD"))
    export = only(case.export("fix-f"))
    after = (case.git("status", "--porcelain"), index.read_bytes(), case.git("rev-parse", "HEAD"))
    assert before == after
    assert (tree / "pkg" / "mod.py").read_text() == MOD.replace("x * 2", "x * 3")
    assert "x * 2" in case.git("show", f"{export.commit}:pkg/mod.py")  # from the base, not disk


def test_reexport_is_idempotent(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    first = only(case.export("fix-f"))
    objects = case.git("count-objects", "-v")
    second = only(case.export("fix-f"))
    assert second.commit == first.commit and second.state == "unchanged"
    assert case.git("rev-parse", FIX_F) == first.commit
    assert case.git("count-objects", "-v") == objects  # no new commit, tree or blob


def test_changed_patch_moves_the_branch(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    first = only(case.export("fix-f"))
    case.change("fix-f", {"pkg/mod.py": MOD.replace("1", "3")})
    second = only(case.export("fix-f"))
    assert second.state == "updated" and second.commit != first.commit


def test_branch_moved_by_a_person_is_not_replaced(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    only(case.export("fix-f"))
    case.git("update-ref", f"refs/heads/{FIX_F}", case.base)
    case.change("fix-f", {"pkg/mod.py": MOD.replace("1", "3")})
    with pytest.raises(TreeError, match="did not export"):
        case.export("fix-f")
    assert only(case.export("fix-f", force=True)).state == "updated"


def test_rewrite_is_exported_as_its_diff(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.project.add_rewrite("rw", REWRITE)
    case.set_meta("rw", 'title = "Double g"\nwhy = "g must triple"\n')
    export = only(case.export("rw"))
    assert case.git("show", f"{export.commit}:pkg/mod.py") == MOD.replace("x * 2", "x * 3").strip()
    assert export.files == ("pkg/mod.py",)


REWRITE = """
import libcst as cst

from patchkit.engine.rewrite import Rewrite


class Triple(Rewrite):
    path = "pkg/mod.py"
    anchors = {"g": 1}

    def leave_Integer(self, original_node: cst.Integer, updated_node: cst.Integer) -> cst.Integer:
        if self.current_anchor != "g":
            return updated_node
        if original_node.value == "3":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="3"))
"""


def test_requirement_that_applies_alone_keeps_the_base(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.add(
        "fix-g",
        {"pkg/mod.py": MOD.replace("x * 2", "x * 4")},
        'title = "Fix g"\nwhy = "g"\nrequires = ["fix-f"]\n',
    )
    export = only(case.export("fix-g"))
    assert export.parent == case.base and not export.stacked_on
    assert "Depends on “Fix the off-by-one in f” (not yet proposed)." in export.text.body
    assert "applies on its own" in export.text.body


def test_requirement_it_needs_is_carried_first(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    fixed = MOD.replace("x + 1", "x + 2")
    case.upstream.write({"pkg/mod.py": fixed})
    run_git(case.upstream.path, "commit", "-qam", "scratch")
    diff = case.upstream.diff_of({"pkg/mod.py": fixed.replace("x + 2", "x + 5")})
    run_git(case.upstream.path, "reset", "-q", "--hard", case.base)
    case.project.add_diff("fix-f2", diff)
    case.set_meta("fix-f2", 'title = "Fix f again"\nwhy = "f"\nrequires = ["fix-f"]\n')
    report = case.export("fix-f", "fix-f2")
    first, second = report.exports
    assert second.stacked_on == ("fix-f",) and second.parent == first.commit
    assert "does not apply without it" in second.text.body
    assert "x + 5" in case.git("show", f"{second.commit}:pkg/mod.py")


# -- publishing ----------------------------------------------------------------------------------
def bare(path: Path) -> Path:
    run_git(path.parent, "init", "-q", "--bare", str(path))
    return path


def test_push_to_a_fork_with_lease(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    fork = bare(tmp_path / "fork.git")
    case.git("remote", "add", "fork", str(fork))
    export = only(case.export("fix-f", push_remote="fork"))
    assert export.pushed_to == str(fork)
    assert run_git(fork, "rev-parse", FIX_F).decode().strip() == export.commit
    assert only(case.export("fix-f", push_remote="fork")).state == "unchanged"
    case.change("fix-f", {"pkg/mod.py": MOD.replace("1", "3")})
    moved = only(case.export("fix-f", push_remote="fork"))  # a re-export: forced, with lease
    assert run_git(fork, "rev-parse", FIX_F).decode().strip() == moved.commit


def test_push_refused_when_the_fork_moved(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    fork = bare(tmp_path / "fork.git")
    case.git("remote", "add", "fork", str(fork))
    only(case.export("fix-f", push_remote="fork"))
    run_git(
        case.upstream.path,
        "push",
        "-q",
        "--force",
        "fork",
        f"{case.base}:refs/heads/{FIX_F}",
    )
    case.change("fix-f", {"pkg/mod.py": MOD.replace("1", "3")})
    with pytest.raises(GitError, match="changed since patchkit last pushed"):
        case.export("fix-f", push_remote="fork")
    assert run_git(fork, "rev-parse", FIX_F).decode().strip() == case.base


def test_push_to_upstream_is_refused(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    upstream = bare(tmp_path / "vllm.git")
    lock = case.project.path / "upstream.lock"
    lock.write_text(lock.read_text().replace("https://example.com/vllm", f"file://{upstream}/"))
    case.git("remote", "add", "upstream", str(upstream))
    with pytest.raises(ConfigError, match="upstream repository"):
        case.export("fix-f", push_remote="upstream")
    assert run_git(upstream, "for-each-ref").strip() == b""
    export = only(case.export("fix-f", push_remote="upstream", force=True))
    assert run_git(upstream, "rev-parse", FIX_F).decode().strip() == export.commit


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://github.com/vllm-project/vllm", "git@github.com:vllm-project/vllm.git"),
        ("https://github.com/vllm-project/vllm/", "ssh://git@GitHub.com/vllm-project/vllm.git"),
    ],
)
def test_normalised_urls_match(a: str, b: str) -> None:
    assert normalise_url(a) == normalise_url(b)


def test_open_without_gh_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = vllm_case(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(ConfigError, match="GitHub CLI `gh`"):
        case.export("fix-f", push_remote="fork", open_pr=True)


def test_record_pr_is_idempotent(tmp_path: Path) -> None:
    meta = tmp_path / "patchsets" / "s" / "patches" / "p.toml"
    meta.parent.mkdir(parents=True)
    meta.write_text('id = "p"  # keep me\nprs = []\n\n[pr]\nscope = "fix"\n')
    record_pr(meta, "https://x/pull/1")
    record_pr(meta, "https://x/pull/1")
    text = meta.read_text()
    assert text.count("https://x/pull/1") == 1 and "# keep me" in text
    assert text.index('status = "forwarded"') < text.index("[pr]")


def test_errors_are_patchkit_errors(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    with pytest.raises(PatchkitError):
        case.export("no-such-patch")
    with pytest.raises(ConfigError, match="--open needs"):  # gh, then --push (test_upstream_check)
        case.export("fix-f", open_pr=True)


# -- bases ---------------------------------------------------------------------------------------
def test_onto_another_upstream_commit(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    newer = case.upstream.commit({"README": "moved on\n"}, "upstream moves")
    export = only(case.export("fix-f", onto="main"))
    assert export.parent == newer
    assert "based on main (" in export.text.body


def test_synthetic_release_commit_is_a_base_but_never_pushed(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    fake = "abcdef0123456789abcdef0123456789abcdef01"
    case.git("commit", "-q", "--amend", "-m", f"vllm 1.0\n\nUpstream-Commit: {fake}")
    lock = case.project.path / "upstream.lock"
    lock.write_text(lock.read_text().replace(case.base, fake))
    export = only(case.export("fix-f"))
    assert export.parent == case.git("rev-parse", "HEAD")
    assert f"(commit {fake[:12]})" in export.text.body
    fork = bare(tmp_path / "fork.git")
    with pytest.raises(SourceError, match="synthetic commit"):
        case.export("fix-f", push_remote=str(fork))


def test_a_stand_in_base_is_said_before_any_work_and_in_the_report(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An index source: its branches cannot become PRs; the export says so first (how to give
    a clone), still writes the series, and names where the branches and texts are."""
    case = vllm_case(tmp_path)
    fake = "abcdef0123456789abcdef0123456789abcdef01"
    case.git("commit", "-q", "--amend", "-m", f"vllm 1.0\n\nUpstream-Commit: {fake}")
    lock = case.project.path / "upstream.lock"
    lock.write_text(lock.read_text().replace(case.base, fake))
    with caplog.at_level("WARNING", logger="patchkit.export"):
        report = case.export("fix-f")
    (said,) = [r.getMessage() for r in caplog.records]
    assert "cannot become pull requests" in said and "--checkout CLONE" in said
    assert not report.upstream_base and report.checkout == str(case.upstream.path)
    lines = report_lines(report)
    assert f"branches in {case.upstream.path}, on a source release's stand-in" in lines[0]
    assert (report.exports[0].out_dir / "PR_BODY.md").is_file()


def test_exports_from_two_checkouts_keep_their_own_texts(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    first = only(case.export("fix-f"))
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(case.upstream.path), str(clone))
    project = load_project(case.project.path)
    report = export_pr(
        project=project, target="vllm", tree_root=clone, patch_ids=["fix-f"], identity=ADA
    )
    second = only(report)
    assert second.out_dir != first.out_dir
    assert (first.out_dir / "export.json").is_file() and (second.out_dir / "export.json").is_file()
    assert report_lines(report)[0] == f"branches in {clone}, on upstream's commit {case.base[:12]}"


def test_identity_must_name_an_email() -> None:
    assert (
        str(Identity.parse(" Ada Lovelace <ada@example.com> ")) == "Ada Lovelace <ada@example.com>"
    )
    with pytest.raises(ConfigError, match="Name <email>"):
        Identity.parse("ada@example.com")


# -- the command line ----------------------------------------------------------------------------
def test_cli_handler(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = vllm_case(tmp_path)
    parser = argparse.ArgumentParser()
    export_cli.add_arguments(parser)
    argv = ["fix-f", "--project", str(case.project.path), "--checkout", str(case.upstream.path)]
    assert export_cli.run(parser.parse_args(argv)) == 0  # identity from git config
    out = capsys.readouterr().out
    assert "created: test/fix-the-off-by-one-in-f" in out and "COMMIT_MSG" in out
    assert export_cli.run(parser.parse_args([*argv, "--json"])) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exports"][0]["state"] == "unchanged"
    message = case.git("log", "-1", "--format=%B", FIX_F)
    assert message.endswith("Signed-off-by: Test Person <test@example.com>")


def several_patches(tmp_path: Path) -> Case:
    """fix-f and new in the series, and opt-in left out of it unless named."""
    case = vllm_case(tmp_path)
    case.add("new", {"pkg/new.py": "VALUE = 1\n"}, 'title = "New"\nwhy = "n"\n')
    case.add("opt-in", {"pkg/opt.py": "OPT = 1\n"}, 'title = "Opt"\nwhy = "o"\noptional = true\n')
    return case


def exported(case: Case, capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    parser = argparse.ArgumentParser()
    export_cli.add_arguments(parser)
    where = ["--project", str(case.project.path), "--checkout", str(case.upstream.path)]
    assert export_cli.run(parser.parse_args([*argv, *where, "--json"])) == 0
    return [e["patch_id"] for e in json.loads(capsys.readouterr().out)["exports"]]


def test_no_ids_exports_the_targets_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = several_patches(tmp_path)
    assert [e.patch_id for e in case.export().exports] == ["fix-f", "new"]
    assert exported(case, capsys, "--target", "vllm") == ["fix-f", "new"]
    assert case.git("branch", "--list", "test/*").split() == [FIX_F, "test/new"]


def test_patch_option_names_patches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = several_patches(tmp_path)
    assert exported(case, capsys, "--patch", "opt-in") == ["opt-in"]  # opt-in, as it is named
    assert exported(case, capsys, "new", "--patch", "fix-f", "--patch", "new") == ["new", "fix-f"]


def test_neither_ids_nor_target_is_a_clear_error(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    parser = argparse.ArgumentParser()
    export_cli.add_arguments(parser)
    args = parser.parse_args(["--project", str(case.project.path)])
    with pytest.raises(ConfigError, match="name the patches to export") as info:
        export_cli.run(args)
    assert "--target" in (info.value.hint or "") and "--patch" in (info.value.hint or "")


def test_a_target_without_patches_is_a_clear_error(tmp_path: Path) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    with pytest.raises(ConfigError, match="no patches for vllm"):
        case.export()


def test_a_failing_patch_moves_no_branch(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    bad = case.upstream.diff_of({"pkg/mod.py": MOD.replace("x * 2", "x * 7")})
    case.project.add_diff("bad", bad.replace(b"return x * 2", b"return x * 9"))
    case.set_meta("bad", 'title = "Bad"\nwhy = "its context is not upstream"\n')
    with pytest.raises(PatchFailed, match="cannot export bad"):
        case.export("fix-f", "bad")
    assert case.git("branch", "--list", "test/*") == ""


def test_a_patch_already_upstream_is_not_exported(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    landed = case.upstream.commit({"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, "upstream fix")
    report = case.export("fix-f", onto=landed)  # onto another base: a note, no branch
    assert report.exports == () and report.stopped == ()
    (absorbed,) = report.absorbed
    assert absorbed.startswith(f"fix-f: upstream already has it at {landed} ({landed[:12]}): ")
    assert "NOTE.md in " in absorbed


def test_new_and_deleted_files(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.add("new", {"pkg/new.py": "VALUE = 1\n"}, 'title = "New"\nwhy = "n"\n')
    gone = (
        b"diff --git a/pkg/mod.py b/pkg/mod.py\ndeleted file mode 100644\n"
        b"index " + case.git("rev-parse", f"{case.base}:pkg/mod.py").encode() + b"..0000000\n"
        b"--- a/pkg/mod.py\n+++ /dev/null\n@@ -1,6 +0,0 @@\n"
        + b"".join(b"-" + line + b"\n" for line in MOD.encode().splitlines())
    )
    case.project.add_diff("gone", gone)
    case.set_meta("gone", 'title = "Gone"\nwhy = "g"\n')
    new, deleted = case.export("new", "gone").exports
    assert case.git("show", f"{new.commit}:pkg/new.py") == "VALUE = 1"
    assert case.git("ls-tree", "--name-only", "-r", new.commit, "pkg") == "pkg/mod.py\npkg/new.py"
    assert case.git("ls-tree", "--name-only", "-r", deleted.commit, "pkg") == ""
    assert deleted.files == ("pkg/mod.py",)


def test_a_renamed_file_moves_in_the_exported_commit(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    moved = (
        b"diff --git a/pkg/mod.py b/pkg/moved.py\nsimilarity index 100%\n"
        b"rename from pkg/mod.py\nrename to pkg/moved.py\n"
    )
    case.project.add_diff("move", moved)
    case.set_meta("move", 'title = "Move"\nwhy = "m"\n')
    (export,) = case.export("move").exports
    listing = case.git("ls-tree", "--name-only", "-r", export.commit, "pkg")
    assert listing == "pkg/moved.py"
    assert case.git("show", f"{export.commit}:pkg/moved.py") == MOD.rstrip("\n")
    assert export.files == ("pkg/mod.py", "pkg/moved.py")


SEARCHING = REWRITE.replace(
    'anchors = {"g": 1}', 'anchors = {"g": (1, 2)}\n    search = ("pkg/**/*.py",)'
)


def test_a_rewrite_that_searches_exports_every_file_apply_changes(tmp_path: Path) -> None:
    """Export is apply: a rewrite's sites in other files than its home are exported too."""
    case = vllm_case(tmp_path)
    other = "def g(y):\n    return y * 2\n"
    case.base = case.upstream.commit({"pkg/other.py": other}, "g twice")
    case.project.add_rewrite("rw", SEARCHING)
    case.set_meta("rw", 'title = "Triple g"\nwhy = "g must triple"\n')
    export = only(case.export("rw", onto=case.base))
    assert export.files == ("pkg/mod.py", "pkg/other.py")
    assert case.git("show", f"{export.commit}:pkg/other.py") == other.replace("2", "3").strip()


def test_vllm_is_not_pushed_without_a_persons_review(tmp_path: Path) -> None:
    """vLLM's AGENTS.md: no pure agent PRs. The review is said only when a person gives it."""
    case = vllm_case(tmp_path)
    fork = bare(tmp_path / "fork.git")
    with pytest.raises(ConfigError, match="--reviewed-by"):
        case.export("fix-f", push_remote=str(fork), reviewed_by=None)
    unreviewed = only(case.export("fix-f", reviewed_by=None))
    assert "reviewed every changed line" not in unreviewed.text.body
    grace = Identity("Grace Hopper", "grace@example.com")
    reviewed = only(case.export("fix-f", reviewed_by=grace))
    said = "Grace Hopper <grace@example.com> reviewed every changed line and ran the tests above."
    assert said in reviewed.text.body


def test_a_localhost_identity_is_refused(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    with pytest.raises(ConfigError, match="a person's address"):
        case.export("fix-f", identity=Identity("patchkit developers", "patchkit@localhost"))
