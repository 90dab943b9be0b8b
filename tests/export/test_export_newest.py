"""``export-pr --check-against``: a change upstream made already since the pin is no PR (a
duplicate a maintainer closes at once); not being able to look is said, not fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.ops.context import open_checkout
from patchkit.ops.export_pr import export_pr
from patchkit.project.load import load_project
from testing.builders import run_git
from testing.fake_index import FakeIndex
from testing.fake_index import fake_index as fake_index  # the fixture
from tests.export.test_export import ADA, MOD, Case, only, vllm_case


def _upstream_release(case: Case, version: str, mod: str) -> None:
    """A later upstream release on a side branch; the checkout stays at the pin."""
    git = case.git
    git("checkout", "-q", "-b", f"rel-{version}")
    (case.upstream.path / "pkg" / "mod.py").write_text(mod)
    git("commit", "-qam", f"release {version}")
    git("tag", f"v{version}")
    git("checkout", "-q", "-")


def test_a_fix_upstream_made_since_the_pin_is_left_out_or_refused(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    _upstream_release(case, "2.0", "import os\n" + MOD.replace("x + 1", "x + 2"))
    report = case.export(check_against="v2.0")
    assert report.exports == ()
    assert report.left_out == ("fix-f: upstream vllm 2.0 already has this change",)
    # the only patch: no "none of the others" (there are none)
    assert report.checked == "checked against upstream vllm 2.0: already there: fix-f (left out)"
    with pytest.raises(ConfigError, match=r"upstream vllm 2\.0 already has the change of fix-f"):
        case.export("fix-f", check_against="v2.0")
    assert case.git("branch", "--list", "test/*") == ""
    (export,) = case.export("fix-f", check_against=None).exports  # asked not to look
    assert export.files == ("pkg/mod.py",)


def test_a_release_without_the_fix_is_said_and_the_export_goes_on(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    _upstream_release(case, "2.0", "import os\n" + MOD)
    report = case.export("fix-f", check_against="v2.0")
    assert len(report.exports) == 1
    assert report.checked == (
        "checked against upstream vllm 2.0: none of these changes is there yet"
    )


def test_a_release_that_cannot_be_looked_at_is_said_not_fatal(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    report = case.export("fix-f", check_against="v9.9")
    assert len(report.exports) == 1
    assert report.checked.startswith("not checked against upstream vllm v9.9: ")


def test_the_command_line_looks_at_the_newest_release_when_exporting_onto_the_pin() -> None:
    from patchkit.cli import build_parser
    from patchkit.ops.export_pr import check_against_for as _check_against

    args = build_parser().parse_args(["export-pr", "fix-f"])
    assert (args.onto, args.check_against) == ("newest", None)
    assert _check_against(None, "newest") is None  # the export onto the newest code finds it
    assert _check_against(None, "pin") == "latest"
    assert _check_against("none", "pin") is None and _check_against("v2.0", "newest") == "v2.0"


# -- onto upstream's newest commit ---------------------------------------------------------------
def _clone_with_newer_upstream(case: Case, tmp_path: Path, newer: str) -> Path:
    """A clone of the upstream (origin/HEAD at the pin); upstream then moves on to ``newer``."""
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(case.upstream.path), str(clone))
    case.upstream.commit({"pkg/mod.py": newer}, "upstream moves on")
    run_git(clone, "fetch", "-q", "origin")
    return clone


def test_onto_newest_carries_the_change_to_origins_newest_commit(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    clone = _clone_with_newer_upstream(case, tmp_path, "import os\n\n\n" + MOD)
    newest = case.git("rev-parse", "HEAD")
    report = export_pr(
        project=load_project(case.project.path), target="vllm", tree_root=clone,
        patch_ids=["fix-f"], onto="newest", identity=ADA,
    )  # fmt: skip
    (export,) = report.exports
    assert export.parent == newest and report.stopped == ()
    assert "import os" in run_git(clone, "show", f"{export.commit}:pkg/mod.py").decode()
    assert f"(this branch is based on vLLM at {newest[:12]} (origin's default branch))" in (
        export.text.body
    )


def test_onto_newest_stops_a_patch_that_does_not_carry_and_says_which(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.add("fix-g", {"pkg/mod.py": MOD.replace("x * 2", "x * 4")}, 'title = "Fix g"\nwhy = "g"\n')
    clone = _clone_with_newer_upstream(case, tmp_path, MOD.replace("x + 1", "x + 7"))
    report = export_pr(
        project=load_project(case.project.path), target="vllm", tree_root=clone,
        patch_ids=["fix-f", "fix-g"], onto="newest", identity=ADA,
    )  # fmt: skip
    assert [e.patch_id for e in report.exports] == ["fix-g"]
    (stopped,) = report.stopped
    assert stopped.startswith("fix-f: cannot export fix-f onto vLLM at ")
    assert "origin's default branch" in stopped


def test_a_git_source_exports_on_the_real_commit_then_onto_the_default_branch(
    tmp_path: Path,
) -> None:
    """A lock whose source is a git history (a small upstream here): the branch's parent is the
    lock's commit itself (pushable); onto newest fetches and takes the default branch's head."""
    case = vllm_case(tmp_path)
    lock = case.project.path / "upstream.lock"
    text = lock.read_text()
    lock.write_text(text.replace('kind = "path", path', 'kind = "git", url'))
    project = load_project(case.project.path)
    tree = open_checkout(project.entry("vllm"), None)  # the cache's tree of the git source
    kw = {"project": project, "target": "vllm", "tree_root": tree.root, "identity": ADA}
    first = export_pr(patch_ids=["fix-f"], **kw)  # type: ignore[arg-type]
    assert first.upstream_base and only(first).parent == case.base
    newest = case.upstream.commit({"pkg/other.py": "X = 1\n"}, "upstream moves on")
    second = export_pr(patch_ids=["fix-f"], onto="newest", **kw)  # type: ignore[arg-type]
    assert second.upstream_base and only(second).parent == newest
    assert f"vLLM main at {newest[:12]} (upstream's newest)" in only(second).text.body


# -- upstream's newest code by default -----------------------------------------------------------
def test_the_default_base_is_upstreams_newest_and_pin_keeps_the_lock(tmp_path: Path) -> None:
    from patchkit.cli import build_parser

    assert build_parser().parse_args(["export-pr", "fix-f"]).onto == "newest"
    case = vllm_case(tmp_path)
    clone = _clone_with_newer_upstream(case, tmp_path, "import os\n\n\n" + MOD)
    newest = case.git("rev-parse", "HEAD")
    kw = {"project": load_project(case.project.path), "target": "vllm", "tree_root": clone}
    default = export_pr(patch_ids=["fix-f"], identity=ADA, **kw)  # type: ignore[arg-type]
    assert only(default).parent == newest
    pinned = export_pr(patch_ids=["fix-f"], identity=ADA, onto="pin", **kw)  # type: ignore[arg-type]
    assert only(pinned).parent == case.base
    assert "this branch is based on" not in only(pinned).text.body


def test_a_change_upstreams_newest_code_has_gets_a_note_and_a_comment_not_a_pr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Upstream's newest commit makes the same change: no branch; NOTE.md says where upstream
    has it, and the open duplicate PR (another author's) gets a comment saying so."""
    case = vllm_case(tmp_path)
    meta = case.patches_dir / "fix-f.toml"
    meta.write_text(
        meta.read_text() + '\n[upstream]\npr = "https://github.com/vllm-project/vllm/pull/7"\n'
        'state = "open"\nauthor = "someone"\nours = false\n'
    )
    clone = _clone_with_newer_upstream(case, tmp_path, MOD.replace("x + 1", "x + 2"))
    newest = case.git("rev-parse", "HEAD")
    from patchkit.cli import main
    from patchkit.cli.export_pr import report_lines

    report = export_pr(
        project=load_project(case.project.path), target="vllm", tree_root=clone,
        patch_ids=["fix-f"], identity=ADA,
    )  # fmt: skip
    assert report.exports == () and report.stopped == ()
    (absorbed,) = report.absorbed
    out_dir = Path(absorbed.rsplit(" in ", 1)[1].rstrip("/"))
    note = (out_dir / "NOTE.md").read_text()
    assert f"Upstream vLLM already has this change at {newest[:12]} (vLLM at {newest[:12]}" in note
    comment = (out_dir / "COMMENT.md").read_text()
    assert comment.startswith(f"Upstream vLLM already has this change at {newest[:12]} ")
    assert "This PR may no longer be needed." in comment and "patchkit" not in comment.lower()
    assert run_git(clone, "branch", "--list", "test/*").decode() == ""
    assert report_lines(report)[-1].startswith("already upstream: fix-f: upstream already has it")
    argv = ["export-pr", "fix-f", "--project", str(case.project.path), "--checkout", str(clone),
            "--identity", "Ada <ada@example.com>"]  # fmt: skip
    assert main(argv) == 0  # a note is no failure
    assert "already upstream: fix-f" in capsys.readouterr().out


def test_an_index_source_takes_the_newest_release_fetched_without_the_network(
    tmp_path: Path, fake_index: FakeIndex
) -> None:
    from patchkit.gitrepo import GitRepo
    from patchkit.model import LockEntry, SourceKind, SourceSpec
    from patchkit.ops.export_newest import newest_base
    from patchkit.upstream.index import IndexConfig, PackageIndex
    from patchkit.upstream.sources import ReleaseStore
    from testing.fake_index import COMMITS, PROJECT

    store = ReleaseStore("vllm", PROJECT, index=PackageIndex(IndexConfig(fake_index.url, "t")))
    with store:
        store.ensure_release("0.1.0")
        newer = store.ensure_release("0.2.0")
    fake_index.stop()  # offline from here: the newest fetched is taken, 0.3.0 is not looked for
    spec = SourceSpec(SourceKind.INDEX, package=PROJECT)
    entry = LockEntry("vllm", "https://example/vllm", "0.1.0", COMMITS["0.1.0"], spec)
    with GitRepo(store.path) as repo:
        found = newest_base(entry, repo, cache_tree=True)
    assert found.commit == newer
    assert found.label == f"vLLM 0.2.0 (commit {COMMITS['0.2.0'][:12]}; the newest release fetched)"
