"""Diffs that create, retarget, rename or delete a symbolic link inside the tree are applied as
``git apply`` applies them (``port``, and ``apply``/``reset``/``status`` of a patch set), and
a link whose target upstream changed is a conflict, never a merge."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.errors import UnsafePathError
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Scenario, Upstream, diff_staged, run_git, snapshot

FILES = {"docs/a.txt": "a\n", "docs/b.txt": "b\n", "src/main.c": "int main;\n"}


def _upstream(tmp_path: Path) -> Upstream:
    up = Upstream(tmp_path / "up")
    up.write(FILES)
    os.symlink("a.txt", up.path / "docs" / "current")  # retargeted by the diff
    os.symlink("../docs/a.txt", up.path / "src" / "old")  # deleted by the diff
    os.symlink("b.txt", up.path / "docs" / "moving")  # renamed by the diff
    up.commit({}, "base")
    return up


def _edit(root: Path) -> None:
    os.symlink("../docs/b.txt", root / "src" / "new")
    (root / "docs" / "current").unlink()
    os.symlink("b.txt", root / "docs" / "current")
    (root / "src" / "old").unlink()
    os.rename(root / "docs" / "moving", root / "docs" / "moved")
    (root / "src" / "main.c").write_text("int main(void);\n")


def _git_apply(up: Upstream, diff: bytes, tmp_path: Path) -> dict[str, tuple[bytes, int]]:
    """The tree as ``git apply`` leaves a copy of ``up``."""
    copy = tmp_path / "git-apply"
    shutil.copytree(up.path, copy, symlinks=True)
    run_git(copy, "apply", input=diff)
    return snapshot(copy)


def test_links_made_retargeted_renamed_and_deleted_as_git_apply_makes_them(tmp_path: Path) -> None:
    up = _upstream(tmp_path)
    diff = diff_staged(up, _edit)
    assert b"new file mode 120000" in diff and b"deleted file mode 120000" in diff
    expected = _git_apply(up, diff, tmp_path)
    patch = tmp_path / "links.patch"
    patch.write_bytes(diff)
    report = port(patch_file=patch, base_commit=up.head(), checkout=up.path)
    assert report.outcome is Outcome.APPLIED
    assert snapshot(up.path) == expected
    assert os.readlink(up.path / "src" / "new") == "../docs/b.txt"
    assert os.readlink(up.path / "docs" / "moved") == "b.txt"
    assert run_git(up.path, "status", "--porcelain") != b""  # (the changes are in the tree)
    again = port(patch_file=patch, base_commit=up.head(), checkout=up.path)
    assert again.written == () and snapshot(up.path) == expected  # (the renamed one is gone)
    part = {d.path: d.reason for d in again.result.details}
    assert part == {"docs/moved": "docs/moving does not exist in the tree"}


def test_a_link_upstream_retargeted_is_a_conflict_naming_both_targets(tmp_path: Path) -> None:
    up = _upstream(tmp_path)
    base = up.head()
    diff = diff_staged(up, _edit)
    (up.path / "docs" / "current").unlink()
    os.symlink("../src/main.c", up.path / "docs" / "current")
    up.commit({}, "upstream retargets the link")
    before = snapshot(up.path)
    patch = tmp_path / "links.patch"
    patch.write_bytes(diff)
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert report.outcome is Outcome.CONFLICT
    detail = next(d for d in report.result.details if d.path == "docs/current")
    assert "expects a link to 'a.txt'" in detail.reason and "'../src/main.c'" in detail.reason
    assert snapshot(up.path) == before


def test_apply_reset_and_status_of_a_patch_set_that_makes_links(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"docs/a.txt": "a\n", "docs/b.txt": "b\n"})
    os.symlink("a.txt", s.root / "docs" / "current")
    s.upstream.commit({}, "a link")
    s.lock_to_head()
    before = snapshot(s.root)

    def edit(root: Path) -> None:
        (root / "docs" / "current").unlink()
        os.symlink("b.txt", root / "docs" / "current")
        os.symlink("docs/a.txt", root / "top")

    s.project.add_diff("links", diff_staged(s.upstream, edit))
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["apply", *where]) == 0
    assert os.readlink(s.root / "docs" / "current") == "b.txt"
    assert os.readlink(s.root / "top") == "docs/a.txt"
    assert s.status() == {"links": "applied"}
    assert main(["reset", *where]) == 0
    assert snapshot(s.root) == before


@pytest.mark.upstream
def test_links_on_a_real_vllm_release_as_git_apply_makes_them(
    real_tree: Callable[[str], Path], tmp_path: Path
) -> None:
    """On vLLM's source release: a link made beside its README, one retargeted and one
    removed, as ``git apply`` leaves a copy; a link out of the tree is refused there."""
    tree = real_tree("vllm")
    assert (tree / "README.md").is_file() and (tree / "vllm" / "__init__.py").is_file()
    os.symlink("../README.md", tree / "docs" / "README.link")
    os.symlink("../vllm/__init__.py", tree / "docs" / "init.link")
    run_git(tree, "add", "docs/README.link", "docs/init.link")
    run_git(tree, "commit", "-q", "-m", "two links")
    base = run_git(tree, "rev-parse", "HEAD").decode().strip()

    def edit(root: Path) -> None:
        os.symlink("../README.md", root / "vllm" / "README.link")
        (root / "docs" / "README.link").unlink()
        os.symlink("../pyproject.toml", root / "docs" / "README.link")
        (root / "docs" / "init.link").unlink()

    edit(tree)
    run_git(tree, "add", "-A", "docs", "vllm/README.link")
    diff = run_git(tree, "diff", "--cached", "--full-index")
    run_git(tree, "reset", "-q", "--hard")
    copy = tmp_path / "git-apply"
    run_git(tree, "worktree", "add", "-q", "--detach", str(copy), base)
    run_git(copy, "apply", input=diff)
    patch = tmp_path / "links.patch"
    patch.write_bytes(diff)
    assert port(patch_file=patch, base_commit=base, checkout=tree).outcome is Outcome.APPLIED
    for name in ("vllm/README.link", "docs/README.link", "docs/init.link"):
        assert os.path.lexists(tree / name) == os.path.lexists(copy / name)
        if os.path.lexists(copy / name):
            assert os.readlink(tree / name) == os.readlink(copy / name)
    assert run_git(tree, "status", "--porcelain") == run_git(copy, "status", "--porcelain")
    evil = tmp_path / "evil.patch"
    evil.write_bytes(diff.replace(b"+../README.md", b"+../../README.md"))
    run_git(tree, "reset", "-q", "--hard")
    run_git(tree, "clean", "-qf", "vllm/README.link")
    with pytest.raises(UnsafePathError, match=r"vllm/README\.link -> '\.\./\.\./README"):
        port(patch_file=evil, base_commit=base, checkout=tree)
    assert run_git(tree, "status", "--porcelain") == b""


def test_reset_force_never_writes_a_links_target_into_a_file_put_in_its_place(
    tmp_path: Path,
) -> None:
    s = Scenario(tmp_path, {"docs/a.txt": "a\n", "docs/b.txt": "b\n"})
    os.symlink("a.txt", s.root / "docs" / "current")
    s.upstream.commit({}, "a link")
    s.lock_to_head()

    def edit(root: Path) -> None:
        (root / "docs" / "current").unlink()
        os.symlink("b.txt", root / "docs" / "current")

    s.project.add_diff("links", diff_staged(s.upstream, edit))
    assert [r.outcome for r in s.apply().results] == [Outcome.APPLIED]
    (s.root / "docs" / "current").unlink()
    (s.root / "docs" / "current").write_text("mine\n")
    os.chmod(s.root / "docs" / "current", 0o755)
    report = s.reset(force=True)  # the person's file put aside, then the link replaces it
    assert os.readlink(s.root / "docs" / "current") == "a.txt"  # never 'a.txt' as a file
    assert (s.root / "docs" / "a.txt").read_text() == "a\n"
    assert report.saved_aside is not None
    kept = report.saved_aside / "docs" / "current"
    assert not kept.is_symlink() and kept.read_text() == "mine\n"
    assert os.stat(kept).st_mode & 0o111


def test_record_writes_links_as_links_and_apply_makes_them_again(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n", "docs/b.txt": "b\n"})
    os.symlink("b.txt", s.root / "docs" / "cur")
    s.upstream.commit({}, "a link")
    s.lock_to_head()
    committed = snapshot(s.root)
    os.symlink("docs/b.txt", s.root / "newlink")
    (s.root / "docs" / "cur").unlink()
    os.symlink("../a.txt", s.root / "docs" / "cur")
    edited = snapshot(s.root)
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["record", *where, "--patch", "links", "--title", "t", "--why", "w"]) == 0
    diff = (s.set_root / "patches" / "links.patch").read_bytes()
    assert b"new file mode 120000" in diff and b" 120000\n--- a/docs/cur" in diff
    assert main(["reset", *where]) == 0
    assert snapshot(s.root) == committed
    assert main(["apply", *where]) == 0
    assert snapshot(s.root) == edited
