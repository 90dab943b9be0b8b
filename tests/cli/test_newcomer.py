"""What a newcomer meets first (issue 15's walk, on temporary repositories): the README's first
command in an empty cache, and every bad input answered with the patch, the file and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario

FILES = {"a.txt": "a one\na two\n", "tool.sh": "#!/bin/sh\n", "sub/f.txt": "f\n"}


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    return s


def from_git(s: Scenario) -> None:
    """The lock takes the upstream from a git URL: the tree is fetched into the cache."""
    lock = s.lock_path.read_text()
    path_source = f'{{ kind = "path", path = "{s.upstream.path}" }}'
    assert path_source in lock
    s.lock_path.write_text(lock.replace(path_source, f'{{ kind = "git", url = "{s.root}" }}'))


def test_the_first_apply_and_status_in_an_empty_cache_fetch_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    from_git(s)
    project = ["--target", "demo", "--project", str(s.project.path)]
    assert main(["status", *project]) == 0  # the cache has no trees/ yet: fetched, not a crash
    assert main(["apply", *project]) == 0
    out = capsys.readouterr()
    assert "internal error" not in out.err
    assert "p1" in out.out
