"""Rebase onto a moved upstream: outcomes per patch, bisection, refresh, the atomic lock move,
the conflict report, --continue and --abort. Upstream is a small repository whose tagged commits
stand in for releases (a path source); one test uses a fake package index."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from patchkit.cli import rebase as rebase_cli
from patchkit.engine.series import Blobs
from patchkit.errors import ConfigError, PatchkitError, RebaseStopped, TreeError
from patchkit.ops.apply_tree import apply
from patchkit.ops.rebase import RebaseReport, abort_rebase, changed_patches, continue_rebase, rebase
from patchkit.outcome import Outcome
from patchkit.project.load import load_project
from patchkit.rebasing.bisect import first_change
from patchkit.upstream.history import Point
from patchkit.verification.records import records_path
from patchkit.workspace.tree import checkout_tree
from testing.builders import Project, Upstream, diff_staged, run_git, snapshot

MOD = """\
import os


def helper():
    return 0


def compute(a, b):
    total = a + b
    return total


def tail():
    return 1


def launch(kernel, grid):
    return run(kernel, grid, stream=None)
"""

REWRITE = '''\
import libcst as cst

from patchkit.engine.rewrite import Rewrite


class Bump(Rewrite):
    """``total = a + b`` inside ``compute`` becomes ``total = a + b + 1``."""

    path = "pkg/mod.py"
    anchors = {"compute": 1}

    def leave_Assign(self, original_node, updated_node):
        if self.current_anchor != "compute":
            return updated_node
        code = "".join(cst.Module([]).code_for_node(updated_node.value).split())
        if code == "a+b+1":
            return self.present(updated_node)
        if code != "a+b":
            return updated_node
        new = cst.parse_expression("a + b + 1")
        return self.changed(updated_node.with_changes(value=new))
'''


class Releases:
    """An upstream whose tagged commits are releases, and a project locked at ``v1.0``."""

    def __init__(self, root: Path, files: dict[str, str | bytes]) -> None:
        self.upstream = Upstream(root / "upstream")
        self.base = self.upstream.commit(files, "release 1.0")
        run_git(self.upstream.path, "tag", "v1.0")
        self.project = Project(root / "project", self.upstream, self.base)
        self.root = self.project.path
        self.patches_dir = self.root / "patchsets" / "demo" / "patches"

    def diff(self, patch_id: str, files: dict[str, str | bytes], **meta: str) -> Path:
        return self.project.add_diff(patch_id, self.upstream.diff_of(files), **meta)

    def rewrite(self, patch_id: str, source: str = REWRITE) -> Path:
        return self.project.add_rewrite(patch_id, source)

    def release(
        self, version: str, files: dict[str, str | bytes], delete: tuple[str, ...] = ()
    ) -> str:
        for name in delete:
            (self.upstream.path / name).unlink()
        commit = self.upstream.commit(files, f"release {version}")
        run_git(self.upstream.path, "tag", f"v{version}")
        return commit

    def rebase(self, onto: str, allow_pending: bool = False) -> RebaseReport:
        project = load_project(self.root)
        return rebase(project=project, target="demo", onto=onto, allow_pending=allow_pending)

    def outcomes(self, report: RebaseReport) -> dict[str, tuple[str, str]]:
        return {p.id: (p.outcome.value, p.step) for p in report.patches}

    def meta(self, patch_id: str) -> dict[str, Any]:
        return tomlkit.parse((self.patches_dir / f"{patch_id}.toml").read_text()).unwrap()

    def lock(self) -> dict[str, Any]:
        doc = tomlkit.parse((self.root / "upstream.lock").read_text()).unwrap()
        return doc["targets"]["demo"]


def fix(text: str) -> dict[str, str | bytes]:
    return {"pkg/mod.py": text}


@pytest.fixture
def rel(tmp_path: Path) -> Releases:
    return Releases(tmp_path, {"pkg/mod.py": MOD, "pkg/other.py": "X = 1\n"})


BUMPED = MOD.replace("total = a + b\n", "total = a + b + 1\n")


# -- outcomes ---------------------------------------------------------------------------------
def test_unchanged_patch_is_applied_and_not_rewritten(rel: Releases) -> None:
    patch = rel.diff("bump", fix(BUMPED))
    before = (patch.read_bytes(), patch.stat().st_mtime_ns, patch.stat().st_ino)
    new = rel.release("1.1", {"pkg/other.py": "X = 2\n"})
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("applied", "exact")}
    assert (patch.read_bytes(), patch.stat().st_mtime_ns, patch.stat().st_ino) == before
    assert report.lock_moved and not report.stopped
    assert rel.lock()["version"] == "1.1" and rel.lock()["commit"] == new


def test_moved_code_is_carried_and_refreshed_against_the_new_base(rel: Releases) -> None:
    patch = rel.diff("bump", fix(BUMPED))
    moved = MOD.replace("import os\n", "import os\nimport sys\n\nDEBUG = False\n")
    rel.release("1.1", fix(moved))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("carried", "exact")}
    assert report.patches[0].refreshed
    expected = rel.upstream.diff_of(fix(moved.replace("total = a + b\n", "total = a + b + 1\n")))
    assert patch.read_bytes() == expected  # full-index, made against the new base


def test_context_edited_upstream_is_carried_by_three_way_merge(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    changed = MOD.replace("\n\ndef compute", "\n# the sum\ndef compute")
    rel.release("1.1", fix(changed))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("carried", "three-way")}
    assert b"+    total = a + b + 1" in (rel.patches_dir / "bump.patch").read_bytes()


def test_fix_landed_reformatted_is_upstreamed_and_retired(rel: Releases) -> None:
    fixed = "return run(kernel, grid, stream=None, sync=True)"
    rel.diff("bump", fix(MOD.replace("return run(kernel, grid, stream=None)", fixed)))
    meta = rel.patches_dir / "bump.toml"
    meta.write_text("# keep this comment\n" + meta.read_text())
    landed = "return run(\n        kernel, grid,\n        stream=None, sync=True\n    )"
    reformatted = MOD.replace("return run(kernel, grid, stream=None)", landed)
    rel.release("1.1", {"pkg/other.py": "X = 2\n"})
    rel.release("1.2", fix(reformatted))
    rel.release("1.3", {"pkg/other.py": "X = 3\n"})
    report = rel.rebase("v1.3")
    assert rel.outcomes(report) == {"bump": ("upstreamed", "probe")}
    assert report.patches[0].absorbed_by == "1.2" and report.lock_moved
    data = rel.meta("bump")
    assert (data["status"], data["merged_in"], data["history"]["absorbed_by"]) == (
        "merged",
        "1.2",
        "1.2",
    )
    assert meta.read_text().startswith("# keep this comment\n")


def test_rewrite_is_carried_by_rerunning_it_and_never_rewritten(rel: Releases) -> None:
    source = rel.rewrite("bump")
    before = source.read_bytes()
    rel.release("1.1", fix("import sys\n" + MOD))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("carried", "rewrite")}
    assert source.read_bytes() == before


def test_rewrite_recognises_its_change_upstream(rel: Releases) -> None:
    rel.rewrite("bump")
    rel.release("1.1", fix(MOD.replace("a + b\n", "a  +  b  +  1\n")))
    assert rel.outcomes(rel.rebase("v1.1")) == {"bump": ("upstreamed", "probe")}


def test_look_alike_inserted_above_is_ambiguous_not_a_wrong_apply(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    twin = "def compute_v2(a, b):\n    total = a + b\n    return total\n\n\n"
    copy = MOD.replace("def helper", twin + "def helper")
    rel.release("1.1", fix(copy.replace("def compute_v2", "def compute")))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report)["bump"][0] == "ambiguous"
    assert report.stopped and not report.lock_moved
    assert rel.lock()["version"] == "1.0"


def test_deleted_code_is_gone(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", {"pkg/other.py": "X = 2\n"}, delete=("pkg/mod.py",))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report)["bump"][0] == "gone"
    assert report.patches[0].broken_by == "1.1"


def test_deleted_function_is_gone_for_a_rewrite(rel: Releases) -> None:
    rel.rewrite("bump")
    rel.release("1.1", fix(MOD.replace("def compute(a, b):", "def summed(a, b):")))
    assert rel.outcomes(rel.rebase("v1.1"))["bump"][0] == "gone"


def test_half_landed_patch_is_partly_upstreamed_and_carries_the_rest(rel: Releases) -> None:
    """Upstream took one file of the patch: the rest is carried, the lock moves, and the
    refreshed patch holds only what is still needed."""
    patch = rel.diff("two", {"pkg/mod.py": BUMPED, "pkg/other.py": "X = 10\n"})
    rel.release("1.1", {"pkg/other.py": "X = 10\n"})
    report = rel.rebase("v1.1")
    assert rel.outcomes(report)["two"][0] == "partly-upstreamed"
    assert report.lock_moved and not report.stopped
    assert report.patches[0].absorbed_by == "1.1" and report.patches[0].refreshed
    assert patch.read_bytes() == rel.upstream.diff_of(fix(BUMPED))
    assert rel.meta("two")["history"] == {"partly_absorbed_by": "1.1"}
    assert rel.lock()["version"] == "1.1"


def test_a_renamed_file_is_followed(rel: Releases) -> None:
    """Upstream renamed the patched file (and edited it): the patch follows it there."""
    patch = rel.diff("bump", fix(BUMPED))
    moved = MOD.replace("def tail():\n    return 1", "def tail():\n    return 2")
    rel.release("1.1", {"pkg/core.py": moved}, delete=("pkg/mod.py",))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report)["bump"][0] == "carried", report.patches[0].details
    (mark,) = report.patches[0].placements
    assert mark.moved_from == "pkg/mod.py" and mark.path == "pkg/core.py"
    bumped = moved.replace("total = a + b\n", "total = a + b + 1\n")
    assert patch.read_bytes() == rel.upstream.diff_of({"pkg/core.py": bumped})


def test_a_function_moved_to_another_file_is_followed(rel: Releases) -> None:
    """Upstream moved ``compute`` out of the patched file into another one: the patch goes
    where the function went."""
    patch = rel.diff("bump", fix(BUMPED))
    compute = "def compute(a, b):\n    total = a + b\n    return total\n\n\n"
    other = "X = 1\n\n\n" + compute.rstrip("\n") + "\n"
    rel.release("1.1", {"pkg/mod.py": MOD.replace(compute, ""), "pkg/other.py": other})
    report = rel.rebase("v1.1")
    assert rel.outcomes(report)["bump"][0] == "carried", report.patches[0].details
    bumped = other.replace("total = a + b\n", "total = a + b + 1\n")
    assert patch.read_bytes() == rel.upstream.diff_of({"pkg/other.py": bumped})


def test_added_lines_already_there_are_never_added_twice(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", fix("# moved\n" + BUMPED))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("upstreamed", "probe")}


# -- bisection ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n, bad", [(8, 6), (13, 1), (13, 13), (2, 2)])
def test_bisection_finds_the_first_bad_release_in_log_n(tmp_path: Path, n: int, bad: int) -> None:
    rel = Releases(tmp_path, {"pkg/mod.py": MOD, "pkg/other.py": "X = 0\n"})
    rel.diff("bump", fix(BUMPED))
    for i in range(1, n + 1):
        if i == bad:
            rel.release(f"1.{i}", fix(MOD.replace("total = a + b", "total = a - b")))
        else:
            rel.release(f"1.{i}", {"pkg/other.py": f"X = {i}\n"})
    report = rel.rebase(f"v1.{n}", allow_pending=True)
    found = report.patches[0]
    assert found.outcome is Outcome.CONFLICT
    assert found.broken_by == f"1.{bad}"
    assert found.probes <= math.ceil(math.log2(n))
    assert rel.meta("bump")["history"]["broken_by"] == f"1.{bad}"


def test_first_change_probes_ceil_log2() -> None:
    for n in range(1, 40):
        for bad in range(n):
            probed: list[int] = []
            points = [Point(str(i), str(i)) for i in range(n)]

            def changed(p: Point, bad: int = bad, probed: list[int] = probed) -> bool:
                probed.append(int(p.ref))
                return int(p.ref) >= bad

            index, probes = first_change(points, changed)
            assert index == bad and probes == len(probed)
            assert probes <= math.ceil(math.log2(n)) if n > 1 else probes == 0


# -- stopping, the report, --continue and --abort ----------------------------------------------
def conflicted(rel: Releases) -> RebaseReport:
    rel.diff("bump", fix(BUMPED))
    rel.diff("tail", {"pkg/other.py": "X = 10\n"})
    rel.release("1.1", fix(MOD.replace("total = a + b\n", "total = b + a\n")))
    return rel.rebase("v1.1")


def test_conflict_stops_with_a_report_and_a_worktree_and_keeps_the_project(
    rel: Releases,
) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.diff("tail", {"pkg/other.py": "X = 10\n"})
    rel.release("1.1", fix(MOD.replace("total = a + b\n", "total = b + a\n")))
    project_before = snapshot(rel.root)
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {
        "bump": ("conflict", "three-way"),
        "tail": ("applied", "exact"),
    }
    assert report.stopped and not report.lock_moved
    assert snapshot(rel.root) == project_before
    assert report.worktree and report.report
    text = (report.worktree / "pkg/mod.py").read_text()
    assert "<<<<<<< tree" in text and ">>>>>>> patch bump" in text
    md = report.report.read_text()
    assert "## bump: conflict (first at 1.1)" in md and "`pkg/mod.py` @@" in md
    assert "total = b + a" in md and "total = a + b + 1" in md  # both sides
    data = json.loads(report.report.with_suffix(".json").read_text())
    bump = data["patches"][0]
    assert (bump["id"], bump["outcome"], bump["broken_by"]) == ("bump", "conflict", "1.1")
    conflict = bump["conflicts"][0]
    assert conflict["file"] == "pkg/mod.py" and conflict["hunk"].startswith("@@ -")
    assert "total = b + a" in conflict["ours"] and "a + b + 1" in conflict["theirs"]
    assert "three-way merge conflict" in conflict["reason"]
    with pytest.raises(RebaseStopped):
        rel.rebase("v1.1")  # one rebase at a time


def test_abort_leaves_everything_as_before(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", fix(MOD.replace("total = a + b\n", "total = b + a\n")))
    before = snapshot(rel.root), snapshot(rel.upstream.path)
    report = rel.rebase("v1.1")
    assert report.worktree is not None and report.worktree.exists()
    abort_rebase(project_root=rel.root, target="demo")
    assert (snapshot(rel.root), snapshot(rel.upstream.path)) == before
    assert not report.worktree.exists()
    assert b"worktree" not in run_git(rel.upstream.path, "worktree", "list").split(b"\n")[-1]
    with pytest.raises(PatchkitError, match="no rebase"):
        continue_rebase(project_root=rel.root, target="demo")
    assert rel.outcomes(rel.rebase("v1.1"))["bump"][0] == "conflict"  # can start again


def test_a_stopped_rebase_keeps_only_the_files_a_person_fixes(rel: Releases) -> None:
    """A sparse worktree of the stopped patches' files, not a checkout of the whole tree."""
    report = conflicted(rel)  # the tree has pkg/other.py too; only pkg/mod.py stopped
    assert report.worktree is not None
    kept = sorted(
        p.relative_to(report.worktree).as_posix()
        for p in report.worktree.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )
    assert kept == ["pkg/mod.py"]
    assert "<<<<<<< tree" in (report.worktree / "pkg/mod.py").read_text()


def test_continue_records_the_fix_from_the_worktree_and_finishes(rel: Releases) -> None:
    report = conflicted(rel)
    assert report.worktree is not None
    with pytest.raises(RebaseStopped, match="conflict markers"):
        continue_rebase(project_root=rel.root, target="demo")
    fixed = MOD.replace("total = a + b\n", "total = b + a + 1\n")
    (report.worktree / "pkg/mod.py").write_text(fixed)
    done = continue_rebase(project_root=rel.root, target="demo")
    assert rel.outcomes(done) == {"bump": ("carried", "manual"), "tail": ("applied", "exact")}
    assert done.lock_moved and rel.lock()["version"] == "1.1"
    assert (rel.patches_dir / "bump.patch").read_bytes() == rel.upstream.diff_of(fix(fixed))
    assert rel.meta("bump")["history"]["broken_by"] == "1.1"
    assert not report.worktree.exists()


def test_allow_pending_moves_the_lock_and_marks_the_rest_pending(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", fix(MOD.replace("total = a + b\n", "total = b + a\n")))
    patch_before = (rel.patches_dir / "bump.patch").read_bytes()
    report = rel.rebase("v1.1", allow_pending=True)
    assert report.lock_moved and not report.stopped
    assert rel.meta("bump")["history"] == {"broken_by": "1.1", "pending": "conflict on 1.1"}
    assert (rel.patches_dir / "bump.patch").read_bytes() == patch_before


def test_a_pending_patch_is_not_applied_until_fixed(rel: Releases) -> None:
    from patchkit.ops.status import PatchState, status

    rel.diff("bump", fix(BUMPED))
    rel.diff("tail", {"pkg/other.py": "X = 10\n"})
    rel.release("1.1", fix(MOD.replace("total = a + b\n", "total = b + a\n")))
    rel.rebase("v1.1", allow_pending=True)
    project = load_project(rel.root)
    assert [p.id for p in project.patches("demo")] == ["tail"]  # bump would conflict at 1.1
    run_git(rel.upstream.path, "checkout", "-q", "v1.1")
    tree = checkout_tree(rel.upstream.path, "demo")
    apply(
        tree=tree,
        entry=project.entry("demo"),
        patches=project.patches("demo"),
        blobs=Blobs([rel.upstream.path]),
    )
    states = {p.id: p.state for p in status(tree=tree, patches=project.listed("demo")).patches}
    assert states == {"bump": PatchState.PENDING, "tail": PatchState.APPLIED}


def test_lock_moves_only_when_all_patches_end_well(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.diff("tail", {"pkg/other.py": "X = 10\n"})
    rel.release("1.1", {"pkg/other.py": "X = 2\n"})
    lock_before = (rel.root / "upstream.lock").read_bytes()
    report = rel.rebase("v1.1")
    assert not report.lock_moved and (rel.root / "upstream.lock").read_bytes() == lock_before
    assert rel.outcomes(report)["tail"][0] == "conflict"
    assert rel.outcomes(report)["bump"] == ("applied", "exact")


def test_a_failed_publish_rolls_back_every_file(
    rel: Releases, monkeypatch: pytest.MonkeyPatch
) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", fix("import sys\n" + MOD))
    before = snapshot(rel.root)

    from patchkit.workspace import txn

    written: list[object] = []

    def broken(path: Path, content: bytes, mode: int | None) -> None:
        if path.name == "upstream.lock":  # the patch files were written; the lock fails
            raise OSError("disk full")
        written.append(path)
        real(path, content, mode)

    real = txn.write_file
    monkeypatch.setattr(txn, "write_file", broken)
    with pytest.raises(TreeError, match="disk full"):
        rel.rebase("v1.1")
    assert written, "the patch file was written before the lock failed"
    assert snapshot(rel.root) == before


def test_renamed_and_edited_file_is_carried_and_applies_at_the_new_lock(tmp_path: Path) -> None:
    text = "alpha\nbeta\ngamma\ndelta\neps\nzeta\neta\ntheta\n"
    rel = Releases(tmp_path, {"A.txt": text})

    def move(root: Path) -> None:
        (root / "A.txt").rename(root / "B.txt")
        (root / "B.txt").write_text(text.replace("gamma", "GAMMA"))

    rel.project.add_diff("mv", diff_staged(rel.upstream, move))
    rel.release("1.1", {"A.txt": "new first line\n" + text})
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"mv": ("carried", "exact")} and report.lock_moved
    project = load_project(rel.root)
    tree = checkout_tree(rel.upstream.path, "demo")
    blobs = Blobs([rel.upstream.path])
    try:
        apply(tree=tree, entry=project.entry("demo"), patches=project.patches("demo"), blobs=blobs)
    finally:
        blobs.close()
    assert not (rel.upstream.path / "A.txt").exists()
    moved = "new first line\n" + text.replace("gamma", "GAMMA")
    assert (rel.upstream.path / "B.txt").read_text() == moved


# -- the command line --------------------------------------------------------------------------
def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    rebase_cli.add_arguments(parser)
    return rebase_cli.run(parser.parse_args(list(argv)))


def test_cli_json_shape_and_exit_code(rel: Releases, capsys: pytest.CaptureFixture[str]) -> None:
    rel.diff("bump", fix(BUMPED))
    rel.release("1.1", fix(MOD.replace("total = a + b\n", "total = b + a\n")))
    with pytest.raises(RebaseStopped) as stopped:
        run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1", "--json")
    assert stopped.value.exit_code == 8
    data = json.loads(capsys.readouterr().out)
    assert (data["target"], data["from"], data["onto"]) == ("demo", "1.0", "1.1")
    assert data["patches"] == [
        {
            "id": "bump",
            "outcome": "conflict",
            "engine_outcome": "conflict",
            "kind": "diff",
            "step": "three-way",
            "absorbed_by": None,
            "broken_by": "1.1",
        }
    ]
    assert run_cli("--target", "demo", "--project", str(rel.root), "--abort") == 0


def test_missing_onto_is_a_config_error_with_a_hint(rel: Releases) -> None:
    with pytest.raises(ConfigError) as missing:
        run_cli("--target", "demo", "--project", str(rel.root))
    assert missing.value.exit_code == 2
    assert missing.value.hint and "--onto" in missing.value.hint


# -- an index source: releases fetched only when probed ----------------------------------------
def test_index_bisection_fetches_only_the_releases_it_probes(tmp_path: Path) -> None:
    from patchkit.upstream.history import open_history
    from patchkit.upstream.index import IndexConfig, PackageIndex
    from testing.fake_index import FakeIndex, make_tarball

    scratch = Upstream(tmp_path / "scratch")
    scratch.commit({"vllm/core.py": MOD})
    project = Project(tmp_path / "project", scratch, "0" * 40)
    project.add_diff("bump", scratch.diff_of({"vllm/core.py": BUMPED}))
    (project.path / "upstream.lock").write_text(
        '[targets.demo]\nrepository = "https://example.com/demo"\nversion = "1.0"\n'
        'commit = "1111111"\nsource = { kind = "index", package = "fake-vllm" }\n'
    )
    fake = FakeIndex()
    for i in range(9):
        core = MOD.replace("a + b", "a - b") if i >= 5 else MOD
        top = f"fake_vllm-1.{i}"
        files = {f"{top}/vllm/core.py": core.encode(), f"{top}/README.md": f"{i}\n".encode()}
        fake.add(f"{top}.tar.gz", make_tarball(files))
    fake.start()
    try:
        loaded = load_project(project.path)
        history = open_history(loaded.entry("demo"), index=PackageIndex(IndexConfig(fake.url, "t")))
        report = rebase(project=loaded, target="demo", onto="latest", history=history)
    finally:
        fake.stop()
    bump = report.patches[0]
    assert (bump.outcome, bump.step, bump.broken_by) == (Outcome.CONFLICT, "three-way", "1.5")
    downloads = [r for r in fake.requests if r.startswith("/files/")]
    assert bump.probes <= 3 and len(downloads) == 2 + bump.probes < 9
    assert report.points == bump.probes
    assert (report.onto, report.lock_moved) == ("1.8", False)


def test_git_source_fetches_tags_into_the_cache_mirror(rel: Releases) -> None:
    rel.diff("bump", fix(BUMPED))
    lock = rel.root / "upstream.lock"
    lock.write_text(
        lock.read_text().replace(
            f'{{ kind = "path", path = "{rel.upstream.path}" }}',
            f'{{ kind = "git", url = "{rel.upstream.path}" }}',
        )
    )
    new = rel.release("1.1", fix("import sys\n" + MOD))
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("carried", "exact")}
    assert rel.lock()["source"]["kind"] == "git"
    assert (rel.lock()["version"], rel.lock()["commit"]) == ("1.1", new)


def test_absorbed_then_changed_upstream_stops_for_a_person_naming_both_releases(
    rel: Releases,
) -> None:
    call = "return run(kernel, grid, stream=None)"
    rel.diff("sync", fix(MOD.replace(call, "return run(kernel, grid, stream=None, sync=True)")))
    landed = "return run(\n        kernel, grid, stream=None, sync=True\n    )"
    rel.release("1.1", fix(MOD.replace(call, landed)))
    rel.release("1.2", {"pkg/other.py": "X = 2\n"})
    rel.release("1.3", fix(MOD.replace(call, "return launch_v2(kernel, grid, sync=True)")))
    rel.release("1.4", {"pkg/other.py": "X = 4\n"})
    before = rel.meta("sync")
    report = rel.rebase("v1.4")
    sync = report.patches[0]
    # Whether 1.3 still has the fix is a person's call: a wrong "upstreamed" would drop it.
    assert not sync.outcome.ok and not report.lock_moved and report.stopped
    assert (sync.absorbed_by, sync.broken_by) == ("1.1", "1.3")
    assert "absorbed the change in 1.1" in sync.message and "retire the patch" in sync.message
    assert rel.meta("sync") == before
    abort_rebase(project_root=rel.root, target="demo")


def test_absorbed_then_reworked_is_reported_absorbed_with_the_retire_command(
    rel: Releases, capsys: pytest.CaptureFixture[str]
) -> None:
    """Never `absorbed by 1.1` beside `conflict` on one row, nor upstream's code to fix: the
    report offers `patchkit retire` with the release, and after it `--continue` finishes."""
    from patchkit.ops.retire import retire

    call = "return run(kernel, grid, stream=None)"
    rel.diff("sync", fix(MOD.replace(call, "return run(kernel, grid, stream=None, sync=True)")))
    rel.release(
        "1.1",
        fix(MOD.replace(call, "return run(\n        kernel, grid, stream=None, sync=True\n    )")),
    )
    rel.release("1.2", fix(MOD.replace(call, "return launch_v2(kernel, grid, sync=True)")))
    with pytest.raises(RebaseStopped) as stopped:
        run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.2")
    retire_cmd = "patchkit retire sync --merged-in 1.1"
    assert retire_cmd in (stopped.value.hint or "")
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "sync" in line)
    assert "absorbed" in row and "conflict" not in row and "1.1" in row
    report_md = next(
        line for line in out.splitlines() if line.startswith("conflict report: ")
    ).removeprefix("conflict report: ")
    md = Path(report_md).read_text()
    assert "| sync | absorbed |" in md and "conflict" not in md.split("## What to do")[0]
    assert retire_cmd in md and "Upstream now (ours)" not in md
    data = json.loads(Path(report_md).with_suffix(".json").read_text())
    assert data["patches"][0]["outcome"] == "absorbed" and data["patches"][0]["conflicts"] == []
    retire(project=load_project(rel.root), patch_id="sync", merged_in="1.1")
    done = continue_rebase(project_root=rel.root, target="demo")
    assert done.lock_moved and rel.lock()["version"] == "1.2"
    assert (rel.meta("sync")["status"], rel.meta("sync")["merged_in"]) == ("merged", "1.1")


def test_a_stopped_rewrite_is_told_to_change_its_py_not_markers(
    rel: Releases, capsys: pytest.CaptureFixture[str]
) -> None:
    rel.rewrite("bump")
    rel.release("1.1", fix(MOD.replace("def compute(a, b):", "def compute_sum(a, b):")))
    with pytest.raises(RebaseStopped) as stopped:
        run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1")
    hint = stopped.value.hint or ""
    assert "patchsets/demo/patches/bump.py" in hint and "conflict marker" not in hint
    assert "re-run" in hint
    md = Path(str(stopped.value.message).split("report: ")[1]).read_text()
    steps = md.split("## What to do")[1]
    assert "bump.py" in steps and "conflict marker" not in steps


def test_bisection_runs_the_earlier_patches_that_share_its_files(
    rel: Releases, tmp_path: Path
) -> None:
    rel.diff("bump", fix(BUMPED))
    on_top = Upstream(tmp_path / "on-top")
    on_top.commit(fix(BUMPED))
    doubled = BUMPED.replace("return total\n", "return total * 2\n")
    rel.project.add_diff("double", on_top.diff_of(fix(doubled)))
    rel.diff("other", {"pkg/other.py": "X = 10\n"})
    for i in range(1, 4):
        rel.release(f"1.{i}", {"pkg/README": f"{i}\n"})
    rel.release("1.4", fix(MOD.replace("return total\n", "return int(total)\n")))
    report = rel.rebase("v1.4", allow_pending=True)
    found = {p.id: (p.outcome.value, p.broken_by) for p in report.patches}
    assert found == {
        "bump": ("conflict", "1.4"),
        "double": ("conflict", "1.4"),  # alone, without bump, it would break at 1.1
        "other": ("applied", None),
    }


# -- after a rebase: the changed patches are verified ------------------------------------------
BUMP_TEST = """\
from pkg.mod import compute


def test_compute_is_bumped():
    assert compute(1, 2) == {expected}
"""


def _git_source(rel: Releases) -> None:
    lock = rel.root / "upstream.lock"
    lock.write_text(
        lock.read_text().replace(
            f'{{ kind = "path", path = "{rel.upstream.path}" }}',
            f'{{ kind = "git", url = "{rel.upstream.path}" }}',
        )
    )


def _bump_with_test(rel: Releases, expected: int) -> Path:
    tests = rel.root / "patchsets" / "demo" / "tests"
    tests.mkdir()
    (tests / "test_bump.py").write_text(BUMP_TEST.format(expected=expected))
    rel.diff("bump", fix(BUMPED))
    meta = rel.patches_dir / "bump.toml"
    meta.write_text(meta.read_text() + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_bump.py"\n')
    return records_path(rel.root / "patchsets" / "demo", tracked=False)  # kept in the cache


def test_carried_patches_are_verified_on_the_new_release(rel: Releases) -> None:
    records = _bump_with_test(rel, expected=4)
    _git_source(rel)
    rel.release("1.1", fix("import sys\n" + MOD))
    assert run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1") == 0
    saved = json.loads(records.read_text())
    assert [(r["patch"], r["result"], r["lock_version"]) for r in saved] == [
        ("bump", "passed", "1.1")
    ]
    assert not records_path(rel.root / "patchsets" / "demo").exists()  # the working copy: clean


def test_a_carried_patch_whose_test_fails_keeps_the_lock_and_names_the_test(
    rel: Releases, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock moves only once the carried patches' tests pass on the new release: a failure
    leaves it (and every project file) as it was, names the whole test id, and the rebase can
    be continued once fixed, or with --allow-pending (which says so)."""
    records = _bump_with_test(rel, expected=5)  # the patch makes it 4: the test must fail
    _git_source(rel)
    rel.release("1.1", fix("import sys\n" + MOD))
    before = snapshot(rel.root)
    with pytest.raises(PatchkitError) as failed:
        run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1")
    assert failed.value.exit_code == 7
    assert "tests/test_bump.py::test_compute_is_bumped" in failed.value.message
    assert "lock stays at 1.0" in failed.value.message and "--continue" in (failed.value.hint or "")
    assert snapshot(rel.root) == before and rel.lock()["version"] == "1.0"
    saved = json.loads(records.read_text())
    assert [(r["patch"], r["result"], r["lock_version"]) for r in saved] == [
        ("bump", "failed", "1.1")
    ]
    with pytest.raises(PatchkitError) as again:  # nothing changed: it fails again
        run_cli("--target", "demo", "--project", str(rel.root), "--continue")
    assert again.value.exit_code == 7 and rel.lock()["version"] == "1.0"
    capsys.readouterr()
    assert (
        run_cli("--target", "demo", "--project", str(rel.root), "--continue", "--allow-pending")
        == 0
    )
    assert rel.lock()["version"] == "1.1"
    err = capsys.readouterr().err
    assert "--allow-pending" in err and "tests/test_bump.py::test_compute_is_bumped" in err


def test_a_fixed_test_lets_continue_move_the_lock(rel: Releases) -> None:
    _bump_with_test(rel, expected=5)
    _git_source(rel)
    rel.release("1.1", fix("import sys\n" + MOD))
    with pytest.raises(PatchkitError):
        run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1")
    test = rel.root / "patchsets/demo/tests/test_bump.py"
    test.write_text(BUMP_TEST.format(expected=4))
    assert run_cli("--target", "demo", "--project", str(rel.root), "--continue") == 0
    assert rel.lock()["version"] == "1.1"


def test_only_carried_patches_count_as_changed(rel: Releases) -> None:
    _bump_with_test(rel, expected=4)
    rel.release("1.1", {"pkg/other.py": "X = 2\n"})  # the patch applies unchanged
    report = rel.rebase("v1.1")
    assert changed_patches(report) == []


def test_carried_opt_in_patches_are_verified_too(rel: Releases) -> None:
    records = _bump_with_test(rel, expected=4)
    meta = rel.patches_dir / "bump.toml"
    meta.write_text(meta.read_text().replace("[[tests]]", "optional = true\n\n[[tests]]"))
    _git_source(rel)
    rel.release("1.1", fix("import sys\n" + MOD))
    assert run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1") == 0
    saved = json.loads(records.read_text())
    assert [(r["patch"], r["result"], r["lock_version"]) for r in saved] == [
        ("bump", "passed", "1.1")
    ]
    assert not records_path(rel.root / "patchsets" / "demo").exists()  # the working copy: clean


def test_path_source_warns_that_carried_patches_were_not_verified(
    rel: Releases, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _bump_with_test(rel, expected=4)
    rel.release("1.1", fix("import sys\n" + MOD))
    assert run_cli("--target", "demo", "--project", str(rel.root), "--onto", "v1.1") == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "bump" in err and "NOT verified" in err
    assert "patchkit apply --target demo --verify" in err
    assert not records.exists()


def test_the_lock_takes_the_pins_of_the_release_it_moves_to(tmp_path: Path) -> None:
    upstream = Upstream(tmp_path / "vllm")
    reqs = "requirements/cuda.txt"
    base = upstream.commit({reqs: "flashinfer-python==0.6.6\n", "vllm/x.py": "x = 1\n"})
    run_git(upstream.path, "tag", "v1.0")
    project = Project(tmp_path / "project", upstream, base, target="vllm")
    project.add_diff("p", upstream.diff_of({"vllm/x.py": "x = 2\n"}))
    lock = project.path / "upstream.lock"
    lock.write_text(lock.read_text() + 'pins = { flashinfer = "0.6.6" }  # moves with vllm\n')
    upstream.commit({reqs: "flashinfer-python==0.7.1\n"}, "release 1.1")
    run_git(upstream.path, "tag", "v1.1")
    report = rebase(project=load_project(project.path), target="vllm", onto="v1.1")
    assert report.lock_moved
    text = lock.read_text()
    assert 'pins = { flashinfer = "0.7.1" }' in text and "# moves with vllm" in text
