"""A stopped rebase: its state under the cache, the worktree for a person (each stopped patch's
files, conflict markers where there are some) and, at ``--continue``, the person's fixes read
back from it.

A stopped rebase lives in ``<cache>/rebase/<target>-<project digest>/``; the project itself is
not touched until the rebase finishes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from patchkit.cache import Cache
from patchkit.errors import ConfigError, RebaseStopped
from patchkit.gitrepo import GitRepo
from patchkit.outcome import FileChange, Outcome, PatchResult, Step
from patchkit.rebasing.bisect import Bisected
from patchkit.upstream.history import Point
from patchkit.workspace.tree import Tree, write_file

STATE = "state.json"


@dataclass(frozen=True)
class RebaseState:
    project: str  # the project root
    target: str
    sets: list[str] | None  # patch sets asked for (None: all)
    onto: Point
    allow_pending: bool
    stopped: list[str]  # ids of the patches a person must fix
    found: dict[str, Bisected] = field(default_factory=dict)
    points: int = 0  # points of history the series ran at while bisecting
    verify: bool = False  # verify the carried patches on the new release before the lock moves
    python: str | None = None  # the interpreter for those tests


def state_dir(project: Path, target: str) -> Path:
    digest = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:12]
    return Cache.current().rebase(f"{target}-{digest}")


def worktree_of(directory: Path) -> Path:
    return directory / "tree"


def save_state(directory: Path, state: RebaseState) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    raw = asdict(state)
    tmp = directory / f"{STATE}.tmp"
    tmp.write_text(json.dumps(raw, indent=1, sort_keys=True))
    tmp.replace(directory / STATE)


def load_state(directory: Path) -> RebaseState | None:
    path = directory / STATE
    if not path.is_file():
        return None
    try:
        raw: dict[str, Any] = json.loads(path.read_text())
        raw["onto"] = Point(**raw["onto"])
        raw["found"] = {k: _bisected(**v) for k, v in raw["found"].items()}
        return RebaseState(**raw)
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path}: the saved rebase state is unreadable ({exc})",
            hint="`patchkit rebase --abort` drops it",
        ) from None


def _bisected(outcome: str | None = None, **fields: Any) -> Bisected:
    """A patch's bisection as the state file holds it (its outcome as the enum's value)."""
    return Bisected(outcome=Outcome(outcome) if outcome is not None else None, **fields)


def drop_state(directory: Path, repo: GitRepo | None) -> None:
    """Forget a rebase: its worktree (through git) and everything in its directory."""
    tree = worktree_of(directory)
    if tree.exists() and repo is not None:
        repo.remove_worktree(tree)
    shutil.rmtree(directory, ignore_errors=True)


def write_conflicted(tree: Tree, stopped: list[dict[str, bytes | None]]) -> None:
    """Each stopped patch's files (as the earlier patches leave them, with the merge's conflict
    markers where there are some) into the worktree; the first patch to name a file wins."""
    written: set[str] = set()
    for files in stopped:
        for path, content in files.items():
            if path in written or content is None:
                continue
            write_file(tree.disk_path(path), content, None)
            written.add(path)


# -- what a person fixed (--continue) --------------------------------------------------------
_MARKERS = (b"<<<<<<< ", b">>>>>>> ")


def worktree_fixes(tree: Tree, paths: dict[str, list[str]]) -> dict[str, dict[str, bytes | None]]:
    """Patch id -> its files as the person left them in the worktree; refuses conflict
    markers."""
    fixes = {}
    for patch_id, names in paths.items():
        files = {p: tree.read(p) for p in names}
        marked = [p for p, c in files.items() if c and any(m in c for m in _MARKERS)]
        if marked:
            raise RebaseStopped(
                f"{patch_id}: {', '.join(marked)} still has conflict markers in {tree.root}",
                hint="resolve them, then --continue again (or --abort)",
            )
        fixes[patch_id] = files
    return fixes


def manual_result(
    patch_id: str, before: dict[str, bytes | None], after: dict[str, bytes | None]
) -> PatchResult:
    """A patch as a person fixed it: carried, with the files that differ from ``before``."""
    changes = tuple(FileChange(p, c) for p, c in after.items() if c != before.get(p))
    if not changes:
        raise RebaseStopped(
            f"{patch_id}: the worktree shows no change for it",
            hint=f"fix its files in the worktree, or drop {patch_id} from the series, "
            "then --continue again",
        )
    return PatchResult(patch_id, Outcome.CARRIED, Step.NONE, changes)
