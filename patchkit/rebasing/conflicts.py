"""What a rebase leaves behind: its report values; when it stops, its state under the cache,
the worktree for a person and the conflict report (Markdown for people, JSON for tools) naming
patch, file, hunk, both sides and reason; when it finishes, the metadata it writes (through the
project writer, :mod:`patchkit.project.writer`).

A stopped rebase lives in ``<cache>/rebase/<target>-<project digest>/``; the project itself is
not touched until the rebase finishes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patchkit.cache import Cache
from patchkit.errors import ConfigError, RebaseStopped
from patchkit.gitrepo import GitRepo
from patchkit.model import (
    ConflictDetail,
    FileChange,
    Outcome,
    PatchMeta,
    PatchResult,
    Placement,
    Step,
)
from patchkit.project.edits import with_history
from patchkit.upstream.history import Point
from patchkit.workspace.tree import Tree, write_file

if TYPE_CHECKING:
    from patchkit.rebasing.verify import Proof

STATE = "state.json"


@dataclass(frozen=True)
class PatchRebase:
    """What a rebase did with one patch."""

    id: str
    outcome: Outcome
    step: str  # a Step value, or "manual"
    absorbed_by: str | None = None  # release/commit where upstream first had the change
    broken_by: str | None = None  # release/commit where the patch first stopped applying
    probes: int = 0  # apply attempts bisection made for this patch
    refreshed: bool = False  # its patch file is rewritten
    details: tuple[ConflictDetail, ...] = ()
    message: str = ""
    placements: tuple[Placement, ...] = ()  # per hunk of a diff: where it went, by which rule
    kind: str = "diff"  # a PatchKind value: what a person changes to fix it
    patch_file: str = ""  # its patch file (.patch or .py), relative to the project
    absorbed: bool = False  # upstream absorbed the change, then reworked that code: retire it

    @property
    def shown(self) -> str:
        """The outcome as people read it: a patch upstream absorbed and later reworked is
        ``absorbed``, never a conflict to fix."""
        return "absorbed" if self.absorbed else self.outcome.value


@dataclass(frozen=True)
class RebaseReport:
    target: str
    from_version: str
    onto: str
    commit: str  # the upstream commit the lock moves to
    patches: tuple[PatchRebase, ...]
    lock_moved: bool
    stopped: bool
    report: Path | None = None  # conflicts.md, when stopped
    worktree: Path | None = None  # the tree left for a person, when stopped
    points: int = 0  # points of history bisection ran the series at (releases fetched)
    proof: Proof | None = None  # the carried patches verified on the new release, when asked

    @property
    def verify_failed(self) -> bool:
        return self.proof is not None and self.proof.failed

    @property
    def probes(self) -> int:
        return sum(p.probes for p in self.patches)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "from": self.from_version,
            "onto": self.onto,
            "patches": [
                {
                    "id": p.id,
                    "outcome": p.shown,
                    "engine_outcome": p.outcome.value,
                    "kind": p.kind,
                    "step": p.step,
                    "absorbed_by": p.absorbed_by,
                    "broken_by": p.broken_by,
                }
                for p in self.patches
            ],
            "commit": self.commit,
            "lock_moved": self.lock_moved,
            "stopped": self.stopped,
            "report": str(self.report) if self.report else None,
            "bisect": {"points": self.points, "attempts": self.probes},
            "verification": None
            if self.proof is None
            else {
                "patches": list(self.proof.changed),
                "failed": self.proof.failures(),
                "unverified": self.proof.unverified or None,
            },
        }


@dataclass(frozen=True)
class Bisected:
    """What bisection learnt about one patch (kept so --continue does not probe again)."""

    absorbed_by: str | None = None
    broken_by: str | None = None
    probes: int = 0
    outcome: Outcome | None = None  # the outcome history settles on (upstreamed before it broke)


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


# -- finishing: the metadata a rebase writes (the project writer writes it) ------------------
def meta_text(meta: PatchMeta, patch: PatchRebase, label: str) -> str | None:
    """The patch's metadata with its new history (tomlkit: comments and layout kept); None if
    nothing changes."""
    history = {}
    if patch.absorbed_by:
        partly = patch.outcome is Outcome.PARTLY_UPSTREAMED
        history["partly_absorbed_by" if partly else "absorbed_by"] = patch.absorbed_by
    if patch.broken_by:
        history["broken_by"] = patch.broken_by
    stopped = not patch.outcome.carried
    return with_history(
        meta.meta_file.read_text(),
        merged_in=(patch.absorbed_by or label) if patch.outcome is Outcome.UPSTREAMED else None,
        history=history,
        pending=f"{patch.outcome.value} on {label}" if stopped else None,
    )
