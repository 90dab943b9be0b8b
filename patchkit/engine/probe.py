"""Running a series at points of upstream history (bisection and the matrix): for one patch, only
the earlier patches that share files with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from patchkit.engine.series import Blobs, Overlay, run_series, touched_paths
from patchkit.errors import PatchkitError
from patchkit.model import Outcome, PatchMeta, PatchResult
from patchkit.upstream.history import History, Point, list_at, read_at


@dataclass
class Prober:
    """Runs patches at points of history. For one patch only the earlier patches that share
    files with it (transitively) run before it: nothing else can change its outcome."""

    history: History
    patches: Sequence[PatchMeta]
    blobs: Blobs
    runs: dict[str, dict[str, PatchResult]] = field(default_factory=dict)  # point -> results

    def outcome(self, point: Point, patch_id: str) -> Outcome:
        done = self.runs.setdefault(point.ref, {})
        if patch_id not in done:
            commit = self.history.commit(point)
            repo = self.history.repo
            overlay = Overlay(read_at(repo, commit), listing=list_at(repo, commit))
            chain = chain_for(self.patches, patch_id)
            for result in run_series(chain, overlay, self.blobs, stop_on_failure=False):
                done[result.patch_id] = result
        return done[patch_id].outcome


def chain_for(patches: Sequence[PatchMeta], patch_id: str) -> list[PatchMeta]:
    """The patch and the earlier patches that share files with it (transitively): all that can
    change its outcome, in series order."""
    index = next(i for i, p in enumerate(patches) if p.id == patch_id)
    chain = [patches[index]]
    needed = set(_paths(chain[0]))
    for meta in reversed(patches[:index]):
        paths = set(_paths(meta))
        if paths & needed:
            chain.insert(0, meta)
            needed |= paths
    return chain


def _paths(meta: PatchMeta) -> list[str]:
    try:
        return touched_paths(meta)
    except PatchkitError:
        return []
