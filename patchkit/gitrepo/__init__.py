"""The one place that talks to git.

Every git command patchkit runs goes through this package: :func:`run` (``command``) runs one
in a clean environment and raises :class:`GitError` with the command, exit code and stderr;
:class:`GitRepo` (``repo``) is a repository, reading objects through one long-lived
``git cat-file --batch`` (``catfile``); ``checkout`` finds the checkout holding a path;
``files`` works on bytes and directories outside any repository (blob ids, three-way merges,
directory diffs). Callers import these names from ``patchkit.gitrepo`` itself.
"""

from __future__ import annotations

from patchkit.gitrepo.checkout import git_dirs, is_repo, locate_checkout
from patchkit.gitrepo.command import FIXED_IDENTITY, clean_env, run
from patchkit.gitrepo.files import MergeResult, blob_id, diff_dirs, merge_file
from patchkit.gitrepo.repo import GitRepo, open_repo

__all__ = [
    "FIXED_IDENTITY",
    "GitRepo",
    "MergeResult",
    "blob_id",
    "clean_env",
    "diff_dirs",
    "git_dirs",
    "is_repo",
    "locate_checkout",
    "merge_file",
    "open_repo",
    "run",
]
