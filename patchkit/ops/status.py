"""``patchkit status``: per patch, applied / not applied / modified since apply / outdated."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from patchkit.model import LockEntry, PatchMeta, UpstreamStatus
from patchkit.ops.context import CACHED, Where, open_tree
from patchkit.outcome import Outcome
from patchkit.project.load import Project
from patchkit.project.sets import patch_digest
from patchkit.targets import commits_match
from patchkit.upstream.absorbed import absorbed, history_repo
from patchkit.workspace.locks import reading
from patchkit.workspace.state import State, StateStore
from patchkit.workspace.tree import Tree
from patchkit.workspace.treecheck import tree_commit
from patchkit.workspace.txn import pending, rolled_back

Reader = Callable[[str], bytes | None]

if TYPE_CHECKING:
    from patchkit.verification.records import Record


class PatchState(str, enum.Enum):
    APPLIED = "applied"
    NOT_APPLIED = "not applied"
    MODIFIED = "modified since apply"  # a file it changed was edited afterwards
    OUTDATED = "outdated"  # applied, but the patch file changed since: apply again
    UPSTREAMED = "upstreamed"  # recorded as already present upstream when applied
    RETIRED = "retired"  # upstream merged it (status = "merged"); no longer applied
    PENDING = "pending"  # a rebase moved the lock past it (--allow-pending): fix it first
    ABSORBED = "absorbed"  # the locked upstream has the PR it carries (by its merge commit)


@dataclass(frozen=True)
class PatchStatus:
    """One patch as ``status`` sees it on a tree."""

    id: str
    set_name: str
    kind: str
    state: PatchState
    files: tuple[str, ...] = ()
    optional: bool = False
    verified: str = "never"  # the last verification, where it ran, and whether it is stale
    speed: str = ""  # the latest benchmark figures per GPU kind (``verify --bench``)
    slower: bool = False  # the latest figures on some GPU kind show a regression
    absorbed_by: str = ""  # "absorbed by PR #N (its merge commit ... is in 0.20.0)"


@dataclass(frozen=True)
class StatusReport:
    """``status`` of one target's tree: each patch, and a pending journal if any."""

    target: str
    commit: str | None
    root: str
    patches: tuple[PatchStatus, ...]
    pending: str | None = None  # a journal an interrupted write left, and what comes next

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "commit": self.commit,
            "tree": self.root,
            "pending": self.pending,
            "patches": [
                {
                    "id": p.id,
                    "set": p.set_name,
                    "kind": p.kind,
                    "state": p.state.value,
                    "files": list(p.files),
                    "optional": p.optional,
                    "verified": p.verified,
                    "speed": p.speed,
                    "slower": p.slower,
                    "absorbed_by": p.absorbed_by,
                }
                for p in self.patches
            ],
        }


def _edited(read: Reader, state: State, files: Sequence[str]) -> bool:
    return any(rec.edited(read(path)) for path in files if (rec := state.files.get(path)))


def _one(read: Reader, state: State | None, meta: PatchMeta) -> PatchStatus:
    applied = state.patch(meta.id) if state else None
    if (applied is None or state is None) and meta.status is UpstreamStatus.MERGED:
        return PatchStatus(
            meta.id, meta.set_name, meta.kind.value, PatchState.RETIRED, optional=meta.optional
        )
    if (applied is None or state is None) and meta.history.pending:
        return PatchStatus(
            meta.id, meta.set_name, meta.kind.value, PatchState.PENDING, optional=meta.optional
        )
    if applied is None or state is None:
        return PatchStatus(
            meta.id, meta.set_name, meta.kind.value, PatchState.NOT_APPLIED, optional=meta.optional
        )
    if _edited(read, state, applied.files):
        patch_state = PatchState.MODIFIED
    elif applied.digest != patch_digest(meta):
        patch_state = PatchState.OUTDATED
    elif applied.outcome is Outcome.UPSTREAMED:
        patch_state = PatchState.UPSTREAMED
    else:
        patch_state = PatchState.APPLIED
    return PatchStatus(
        meta.id, meta.set_name, meta.kind.value, patch_state, applied.files, meta.optional
    )


def verification_summary(records: Sequence[Record], meta: PatchMeta, entry: LockEntry) -> str:
    """The newest verification per environment kind among ``records`` (the patch's, oldest
    first), with its proof, e.g. "proven on NVIDIA H200 (sm_90) 2026-11-23"."""
    from patchkit.verification.proof import proof_text

    latest = list({r.environment.kind: r for r in records}.values())  # newest per kind
    digest = patch_digest(meta) if latest else ""
    parts = []
    for record in sorted(latest, key=lambda r: (r.time, r.patch), reverse=True):
        stale = record.digest != digest or not commits_match(record.lock_commit, entry.commit)
        partly = f" ({record.reason})" if record.reason and record.result == "passed" else ""
        parts.append(
            f"{proof_text(record)}{partly} on {record.environment.kind} {record.time[:10]}"
            f"{' (stale)' if stale else ''}"
        )
    return "; ".join(parts) or "never"


def speed_summary(records: Sequence[Record]) -> tuple[str, bool]:
    """The latest benchmark figures per GPU kind among ``records`` (the patch's, oldest first),
    and whether any shows the patch slower."""
    from patchkit.verification.records import bench_summary, latest_bench

    summaries = [bench_summary(r) for r in latest_bench(records).values()]
    return "; ".join(s.describe() for s in summaries), any(s.slower for s in summaries)


def _with_records(
    rows: Sequence[PatchStatus], patches: Sequence[PatchMeta], entry: LockEntry
) -> tuple[PatchStatus, ...]:
    """Each row with its verifications and benchmark figures; each set's records are read and
    grouped once, not once per patch."""
    from patchkit.verification.records import load_records, set_root_of

    by_set: dict[Path, dict[str, list[Record]]] = {}
    out = []
    for row, meta in zip(rows, patches, strict=True):
        root = set_root_of(meta)
        if root not in by_set:
            by_set[root] = {}
            for record in load_records(root):  # oldest first
                by_set[root].setdefault(record.patch, []).append(record)
        records = by_set[root].get(meta.id, [])
        speed, slower = speed_summary(records)
        verified = verification_summary(records, meta, entry)
        out.append(replace(row, verified=verified, speed=speed, slower=slower))
    return tuple(out)


def _with_absorbed(
    rows: Sequence[PatchStatus], patches: Sequence[PatchMeta], entry: LockEntry
) -> tuple[PatchStatus, ...]:
    """Each row whose carried PR the locked upstream has (``upstream.absorbed``) said so."""
    if not any(m.upstream.merge_commit or m.upstream.released_in for m in patches):
        return tuple(rows)
    repo = history_repo(entry)
    try:
        found = [
            absorbed(m.upstream, repo=repo, commit=entry.commit, version=entry.version)
            for m in patches
        ]
    finally:
        if repo is not None:
            repo.close()
    return tuple(
        replace(row, state=PatchState.ABSORBED, absorbed_by=a.describe()) if a else row
        for row, a in zip(rows, found, strict=True)
    )


def status(
    *, tree: Tree, patches: Sequence[PatchMeta], entry: LockEntry | None = None
) -> StatusReport:
    with reading(tree):
        store = StateStore(tree.state_dir)
        journal = pending(tree, store)
        # after a crash: the tree as the next writer's roll-back will leave it, not the half
        state, read = rolled_back(tree, store) if journal else (store.load(), tree.read)
        rows = tuple(_one(read, state, meta) for meta in patches)
        commit = tree_commit(tree)
    if entry is not None:
        rows = _with_records(_with_absorbed(rows, patches, entry), patches, entry)
    return StatusReport(
        tree.target, commit, str(tree.root), rows, journal.describe() if journal else None
    )


def status_target(*, project: Project, target: str, where: Where = CACHED) -> StatusReport:
    """Per patch of ``target`` (opt-in ones too): applied, not applied, modified, outdated,
    retired, and its last verification, on the tree ``where`` names."""
    entry = project.entry(target)
    return status(tree=open_tree(entry, where), patches=project.listed(target), entry=entry)
