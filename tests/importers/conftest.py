"""A small vLLM stand-in with three releases (tags v1.0, v1.1, v1.2), and a project locked at
v1.2 whose source is that repository: bases are looked for among the tags."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from patchkit.model import LockEntry
from patchkit.ops.import_ import ImportReport, import_patches
from patchkit.project.load import load_project
from patchkit.project.lock import move_lock
from testing.builders import Project, Upstream, run_git

MODEL_V10 = "class Model:\n    def __init__(self):\n        self.a = None\n        self.b = None\n\n    def run(self):\n        return 1\n"
MODEL_V11 = MODEL_V10.replace("return 1", "return 2")
HEADER = "# vLLM model file\n# (upstream moved lines about between releases)\n\n"
MODEL_V12 = HEADER + MODEL_V11
UTIL = "def helper(x):\n    return x + 1\n\n\ndef other(y):\n    return y * 2\n"


@dataclass
class Releases3:
    upstream: Upstream
    project: Project
    commits: dict[str, str]

    def entry(self) -> LockEntry:
        return load_project(self.project.path).entry("vllm")

    def import_(self, *sources: str | Path, **kw: object) -> ImportReport:
        return import_patches(
            project=load_project(self.project.path),
            target="vllm",
            sources=[str(s) for s in sources],
            into=str(kw.pop("into", "imported")),
            **kw,  # type: ignore[arg-type]
        )

    def set_dir(self, name: str = "imported") -> Path:
        return self.project.path / "patchsets" / name

    def file_at(self, tag: str, path: str) -> str:
        return run_git(self.upstream.path, "show", f"{tag}:{path}").decode()


@pytest.fixture
def releases3(tmp_path: Path) -> Releases3:
    up = Upstream(tmp_path / "vllm")
    commits = {}
    for tag, model in (("v1.0", MODEL_V10), ("v1.1", MODEL_V11), ("v1.2", MODEL_V12)):
        commits[tag] = up.commit(
            {"vllm/model.py": model, "vllm/util.py": UTIL, "README.md": tag}, tag
        )
        run_git(up.path, "tag", tag)
    project = Project(tmp_path / "project", up, commits["v1.2"], target="vllm")
    move_lock(project.path / "upstream.lock", "vllm", version="1.2", commit=commits["v1.2"])
    return Releases3(up, project, commits)
