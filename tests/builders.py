"""Small builders for tests: an upstream repository with history, and a patch project
(``upstream.lock`` + ``patchsets/``) whose diffs are made from real edits."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DATE = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def run_git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **DATE}, check=True, capture_output=True,
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
