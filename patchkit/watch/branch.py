"""The patch repository's watch branch: one per target and upstream version, never the default
branch, rewritten only while it still holds exactly what watch wrote.

Each commit watch makes carries a trailer ``Patchkit-Watch: <target> <version> base=<commit>
tree=<tree>``. A branch whose tip lacks it, or whose tree is not the one it names (a person
amended or added a commit), is *edited* and left alone. A branch that is watch's own and would
get the same tree on the same base is *unchanged*: nothing is written, so a second run changes
nothing.
"""

from __future__ import annotations

import contextlib
import enum
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import ConfigError
from patchkit.gitrepo import FIXED_IDENTITY, GitRepo, run

TRAILER = "Patchkit-Watch:"
_MARK = re.compile(
    rf"^{TRAILER} (?P<target>\S+) (?P<version>\S+) base=(?P<base>[0-9a-f]{{40}}) "
    r"tree=(?P<tree>[0-9a-f]{40})$",
    re.MULTILINE,
)
_ZERO = "0" * 40


class BranchState(str, enum.Enum):
    NEW = "new"  # no such branch yet
    OURS = "ours"  # watch's own commit, untouched since
    EDITED = "edited"  # a person changed it: never overwritten


@dataclass(frozen=True)
class Existing:
    """Where the branch stands before this run (locally, else on the remote)."""

    state: BranchState
    tip: str | None = None
    base: str | None = None  # the default branch's commit it was made on (OURS only)
    tree: str | None = None


def default_name(target: str, version: str) -> str:
    return f"watch/{target}-{version}"


def check_name(repo: GitRepo, name: str, default: str | None) -> None:
    """``name`` must be a valid branch name and not the repository's default branch."""
    proc = run(["check-ref-format", "--branch", name], cwd=repo.path, ok_codes=(0, 1, 128))
    if proc.returncode != 0 or name.startswith("-"):
        raise ConfigError(f"{name!r} is not a valid branch name", hint="pass another --branch")
    if name in {default, "main", "master"}:
        raise ConfigError(
            f"watch never writes the default branch ({name})",
            hint="pass another --branch (default: watch/<target>-<version>)",
        )


def default_branch(repo: GitRepo) -> str | None:
    """The branch checked out in the patch repository (``main``), None when detached."""
    proc = run(["symbolic-ref", "--quiet", "--short", "HEAD"], cwd=repo.path, ok_codes=(0, 1))
    return proc.stdout.decode().strip() or None


def existing(repo: GitRepo, name: str, remote: str | None) -> Existing:
    """The branch as watch finds it: local first; with ``remote``, the remote's copy when there
    is no local one (a CI job starts from a fresh clone)."""
    tip = repo.resolve(f"refs/heads/{name}")
    if tip is None and remote is not None:
        tip = _fetch_remote(repo, remote, name)
    if tip is None:
        return Existing(BranchState.NEW)
    match = _MARK.search(repo.commit_message(tip))
    tree = repo.text("rev-parse", f"{tip}^{{tree}}")
    if match is None or match["tree"] != tree:
        return Existing(BranchState.EDITED, tip)
    return Existing(BranchState.OURS, tip, match["base"], tree)


def _fetch_remote(repo: GitRepo, remote: str, name: str) -> str | None:
    ref = f"refs/patchkit-watch/{name}"
    proc = run(
        ["fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{name}:{ref}"],
        cwd=repo.path,
        ok_codes=(0, 1, 128),
    )
    return repo.resolve(ref) if proc.returncode == 0 else None


@contextlib.contextmanager
def worktree(repo: GitRepo, base: str) -> Iterator[Path]:
    """A linked worktree of the patch repository at ``base``, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="patchkit-watch-") as tmp:
        path = Path(tmp) / "project"
        repo.git("worktree", "add", "--quiet", "--detach", str(path), base)
        try:
            yield path
        finally:
            repo.remove_worktree(path)


def commit(work: Path, *, base: str, target: str, version: str, message: str) -> tuple[str, str]:
    """Commit everything changed in the worktree ``work`` on ``base``, marked as watch's own;
    the same inputs give the same commit id (fixed identity, the base's date)."""
    with GitRepo(work) as repo:
        repo.git("add", "-A")
        tree = repo.text("write-tree")
        date = repo.text("show", "-s", "--format=%cI", base)
        env = {**FIXED_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        trailer = f"{TRAILER} {target} {version} base={base} tree={tree}"
        text = f"{message.rstrip()}\n\n{trailer}\n"
        return repo.commit_tree(tree, [base], text, env), tree


def move(repo: GitRepo, name: str, new: str, old: str | None) -> None:
    """Point ``refs/heads/name`` at ``new``, only if it is still at ``old`` (None: absent):
    git refuses the update otherwise (someone moved the branch while watch ran)."""
    repo.update_ref(f"refs/heads/{name}", new, old or _ZERO)
