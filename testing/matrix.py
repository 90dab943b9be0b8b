"""A small upstream whose tagged commits stand in for releases (a path source), and a set whose
patches take every fate across them: the matrix tests' world."""

from __future__ import annotations

from pathlib import Path

from patchkit.matrix.store import CellStore
from patchkit.matrix.table import Matrix
from patchkit.ops.matrix import matrix
from patchkit.project.load import load_project
from testing.builders import Project, Upstream, run_git

MOD = "def compute(a, b):\n    total = a + b\n    return total\n"
TAIL = "def tail():\n    return 1\n"
BUMPED = MOD.replace("total = a + b\n", "total = a + b + 1\n")


class Releases:
    """Upstream releases 1.0 (locked) to 1.4, a set with three patches, one of them opt-in:
    ``bump`` applies, is carried, then upstream takes it; ``tail`` applies, then conflicts."""

    def __init__(self, root: Path) -> None:
        self.upstream = Upstream(root / "upstream")
        files = {"pkg/mod.py": MOD, "pkg/tail.py": TAIL, "pkg/other.py": "X = 1\n"}
        base = self.upstream.commit(files, "1.0")
        run_git(self.upstream.path, "tag", "v1.0")
        self.project = Project(root / "project", self.upstream, base)
        self.root = self.project.path
        diff = self.upstream.diff_of
        self.project.add_diff("bump", diff({"pkg/mod.py": BUMPED}))
        self.project.add_diff("tail", diff({"pkg/tail.py": TAIL.replace("return 1", "return 2")}))
        self.project.add_diff("other", diff({"pkg/other.py": "X = 3\n"}))
        meta = self.root / "patchsets" / "demo" / "patches" / "other.toml"
        meta.write_text(meta.read_text() + "optional = true\n")
        self.release("1.1", {"pkg/other.py": "X = 1\nY = 2\n"})
        self.release("1.2", {"pkg/mod.py": "import os\n\n\n" + MOD, "pkg/tail.py": "#\n" + TAIL})
        self.release("1.3", {"pkg/mod.py": "import os\n\n\n" + BUMPED})
        self.release("1.4", {"pkg/tail.py": "#\n" + TAIL.replace("return 1", "return 9")})

    def release(self, version: str, files: dict[str, str | bytes]) -> None:
        self.upstream.commit(files, f"release {version}")
        run_git(self.upstream.path, "tag", f"v{version}")

    def matrix(self, **kw: object) -> Matrix:
        store = kw.pop("store", None) or CellStore()
        try:
            return matrix(project=load_project(self.root), target="demo", store=store, **kw)  # type: ignore[arg-type]
        finally:
            store.close()


def rows(m: Matrix) -> dict[str, list[str]]:
    return {r.patch: [m.cell(r.patch, rel).outcome for rel in m.releases] for r in m.rows}
