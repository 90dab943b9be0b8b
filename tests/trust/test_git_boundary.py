"""gitrepo passes values after ``--end-of-options`` (or refuses a leading ``-`` where git takes
none): a value that looks like an option is never read as one."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import GitError
from patchkit.gitrepo import GitRepo
from testing.builders import Upstream


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    up = Upstream(tmp_path / "up")
    up.commit({"a": "1\n"}, "one")
    up.commit({"a": "2\n"}, "two")
    return GitRepo(up.path)


def test_revisions_that_look_like_options_are_never_options(repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "written"
    hostile = f"--output={out}"
    assert repo.resolve(hostile) is None
    for call in (
        lambda: repo.commit_message(hostile),
        lambda: repo.renames(hostile, "HEAD"),
        lambda: repo.rev_list(hostile, "HEAD"),
        lambda: repo.ls_tree(hostile),
        lambda: repo.format_patch(hostile),
        lambda: repo.tag("t", hostile),
        lambda: repo.checkout_detached(hostile),
        lambda: repo.files_with("x", rev=hostile),
        lambda: repo.commit_tree(hostile, [], "m", {}),
    ):
        with pytest.raises(GitError):
            call()
    assert not out.exists()
