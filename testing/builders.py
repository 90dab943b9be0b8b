"""Small builders for tests: an upstream repository with history, and a patch project
(``upstream.lock`` + ``patchsets/``) whose diffs are made from real edits."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from patchkit.engine.series import Blobs
from patchkit.model import LockEntry, PatchMeta, PatchSet
from patchkit.ops.apply_tree import ApplyReport, apply
from patchkit.ops.status import status
from patchkit.project.lock import load_lock, move_lock
from patchkit.project.sets import load_patchset
from patchkit.workspace.reset import ResetReport, reset
from patchkit.workspace.tree import Tree, checkout_tree

DATE = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def run_git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **DATE},
        check=True,
        capture_output=True,
        input=input,
    ).stdout


class Upstream:
    """A git repository standing in for vLLM or FlashInfer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        run_git(path, "init", "-q", "-b", "main")

    def write(self, files: dict[str, str | bytes]) -> None:
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)

    def commit(self, files: dict[str, str | bytes], message: str = "upstream change") -> str:
        self.write(files)
        run_git(self.path, "add", "-A")
        run_git(self.path, "commit", "-q", "-m", message)
        return self.head()

    def head(self) -> str:
        return run_git(self.path, "rev-parse", "HEAD").decode().strip()

    def diff_of(self, files: dict[str, str | bytes]) -> bytes:
        """The full-index diff that editing ``files`` would make; the tree is left unchanged."""
        self.write(files)
        run_git(self.path, "add", "-A", "-N")
        diff = run_git(self.path, "diff", "--full-index", "--binary")
        run_git(self.path, "reset", "-q")
        run_git(self.path, "checkout", "-q", "--", ".")
        run_git(self.path, "clean", "-qfd")
        return diff


class Project:
    """A patch repository: ``upstream.lock`` and one patch set for target ``demo``."""

    def __init__(self, path: Path, upstream: Upstream, commit: str, target: str = "demo") -> None:
        self.path, self.upstream, self.target = path, upstream, target
        self.series: list[str] = []
        (path / "patchsets" / "demo" / "patches").mkdir(parents=True)
        (path / "upstream.lock").write_text(
            f'[targets.{target}]\nrepository = "https://example.com/{target}"\n'
            f'version = "1.0"\ncommit = "{commit}"\n'
            f'source = {{ kind = "path", path = "{upstream.path}" }}\n'
        )
        self._manifest()

    def _manifest(self) -> None:
        series = ", ".join(f'"{s}"' for s in self.series)
        (self.path / "patchsets" / "demo" / "patchset.toml").write_text(
            f'[patchset]\nname = "demo"\nversion = "1.0.0"\ndescription = "test set"\n'
            f'targets = ["{self.target}"]\nseries = [{series}]\n'
        )

    def add_diff(self, patch_id: str, diff: bytes, **meta: str) -> Path:
        patches = self.path / "patchsets" / "demo" / "patches"
        (patches / f"{patch_id}.patch").write_bytes(diff)
        self._meta(patch_id, meta)
        return patches / f"{patch_id}.patch"

    def add_rewrite(self, patch_id: str, source: str, **meta: str) -> Path:
        patches = self.path / "patchsets" / "demo" / "patches"
        (patches / f"{patch_id}.py").write_text(source)
        self._meta(patch_id, meta)
        return patches / f"{patch_id}.py"

    def _meta(self, patch_id: str, meta: dict[str, str]) -> None:
        fields = {"title": f"Patch {patch_id}", "why": "because a test says so", **meta}
        body = "".join(f'{k} = "{v}"\n' for k, v in fields.items())
        path = self.path / "patchsets" / "demo" / "patches" / f"{patch_id}.toml"
        path.write_text(f'id = "{patch_id}"\ntarget = "{self.target}"\n{body}')
        self.series.append(patch_id)
        self._manifest()


def diff_staged(upstream: Upstream, edit: Callable[[Path], None]) -> bytes:
    """The full-index diff (renames found) that ``edit(upstream.path)`` makes: deletions, renames
    and mode changes too. The tree is put back afterwards."""
    edit(upstream.path)
    run_git(upstream.path, "add", "-A")
    diff = run_git(upstream.path, "diff", "--cached", "--full-index", "-M", "--binary")
    run_git(upstream.path, "reset", "-q", "--hard")
    run_git(upstream.path, "clean", "-qfd")
    return diff


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` (``.git`` left out): its bytes and permission bits; a symlink
    as its target."""
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if path.is_symlink():
            files[rel] = (os.readlink(path).encode(), -1)
        elif path.is_file():
            files[rel] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return files


def git_status(root: Path) -> bytes:
    return run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")


def file_stamps(root: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime in ns) of every file under ``root`` but ``.git``: changes when rewritten."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


class Scenario:
    """An upstream repository that is also the checkout being patched, and a project (target
    ``demo``, set ``demo``) locked at its first commit. Make every diff before applying: the
    diff builders put the checkout back to its last commit."""

    def __init__(self, root: Path, files: dict[str, str | bytes]) -> None:
        self.upstream = Upstream(root / "upstream")
        self.base = self.upstream.commit(files, "base")
        self.project = Project(root / "project", self.upstream, self.base)
        self.root = self.upstream.path

    # -- building --------------------------------------------------------------------------
    def add(self, patch_id: str, files: dict[str, str | bytes]) -> Path:
        return self.project.add_diff(patch_id, self.upstream.diff_of(files))

    def add_edit(self, patch_id: str, edit: Callable[[Path], None]) -> Path:
        return self.project.add_diff(patch_id, diff_staged(self.upstream, edit))

    def set_series(self, ids: list[str]) -> None:
        self.project.series = list(ids)
        self.project._manifest()

    def lock_to_head(self) -> None:
        move_lock(self.lock_path, "demo", version="1.1", commit=self.upstream.head())

    # -- reading ---------------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.project.path / "upstream.lock"

    @property
    def set_root(self) -> Path:
        return self.project.path / "patchsets" / "demo"

    def tree(self) -> Tree:
        return checkout_tree(self.root, "demo")

    def entry(self) -> LockEntry:
        return load_lock(self.lock_path).targets["demo"]

    def patch_set(self) -> PatchSet:
        return load_patchset(self.set_root)

    def patches(self) -> list[PatchMeta]:
        return list(self.patch_set().patches)

    def read(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    # -- operations ------------------------------------------------------------------------
    def blobs(self) -> Blobs:
        return Blobs([self.root])

    def apply(self, **kw: bool) -> ApplyReport:
        blobs = self.blobs()
        try:
            return apply(
                tree=self.tree(), entry=self.entry(), patches=self.patches(), blobs=blobs, **kw
            )
        finally:
            blobs.close()

    def reset(self, *, force: bool = False) -> ResetReport:
        return reset(tree=self.tree(), force=force)

    def status(self) -> dict[str, str]:
        report = status(tree=self.tree(), patches=self.patches())
        return {p.id: p.state.value for p in report.patches}
