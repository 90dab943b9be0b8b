"""The one module that runs git: files of a commit read in the object session."""

from __future__ import annotations

from pathlib import Path

from patchkit.gitrepo import GitRepo
from testing.builders import Upstream


def test_read_files_keeps_the_files_asked_for_that_the_commit_holds(tmp_path: Path) -> None:
    up = Upstream(tmp_path / "up")
    first = up.commit({"a.py": "a\n", "pkg/b.py": "b\n", "odd\nname.txt": "odd\n"})
    up.commit({"a.py": "changed\n"})
    with GitRepo(up.path) as repo:
        found = repo.read_files(first, ["a.py", "pkg", "missing.py", "odd\nname.txt", "a.py"])
        assert found == {"a.py": b"a\n", "odd\nname.txt": b"odd\n"}  # a directory is no file
        assert repo.read_files("HEAD", ["a.py", "pkg/b.py"]) == {
            "a.py": b"changed\n",
            "pkg/b.py": b"b\n",
        }
        assert repo.read_files(first, []) == {}
