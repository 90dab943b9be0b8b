"""The series at a point of upstream history: the one run a rebase makes on the new release,
its bisection makes at the releases between, and the matrix makes per cell. The files are the
point's, code moved since the base is followed, and a patch whose change is on the tree (also
partly upstreamed) leaves its files for the next (:func:`~patchkit.engine.series.series_steps`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from patchkit.engine.series import Blobs, Given, Overlay, patch_paths, series_steps
from patchkit.gitrepo import GitRepo
from patchkit.model import PatchMeta
from patchkit.outcome import Outcome, PatchResult
from patchkit.upstream.history import History, Point
from patchkit.upstream.moved import HistoryFinder


def series_at(
    history: History,
    base: Point,
    point: Point,
    patches: Sequence[PatchMeta],
    blobs: Blobs,
    *,
    explain: bool = False,
    given: Given | None = None,
) -> tuple[Overlay, Iterator[PatchResult]]:
    """The overlay of ``point``'s files and the patches' results on it, one by one (each
    yielded while the overlay holds the files as the earlier patches left them)."""
    commit, repo = history.commit(point), history.repo
    overlay = Overlay(read_at(repo, commit), modes_at(repo, commit), listing=list_at(repo, commit))
    finder = HistoryFinder(repo, history.commit(base), commit)
    steps = series_steps(patches, overlay, blobs, explain=explain, finder=finder, given=given)
    return overlay, steps


@dataclass
class Prober:
    """Runs patches at points of history. For one patch only the earlier patches that share
    files with it (transitively) run before it: nothing else can change its outcome."""

    history: History
    patches: Sequence[PatchMeta]
    blobs: Blobs
    base: Point  # the locked point: moved code is followed from there
    runs: dict[str, dict[str, PatchResult]] = field(default_factory=dict)  # point -> results

    def outcome(self, point: Point, patch_id: str) -> Outcome:
        done = self.runs.setdefault(point.ref, {})
        if patch_id not in done:
            chain = chain_for(self.patches, patch_id)
            _, steps = series_at(self.history, self.base, point, chain, self.blobs)
            for result in steps:
                done[result.patch_id] = result
        return done[patch_id].outcome


def chain_for(patches: Sequence[PatchMeta], patch_id: str) -> list[PatchMeta]:
    """The patch and the earlier patches that share files with it (transitively): all that can
    change its outcome, in series order."""
    index = next(i for i, p in enumerate(patches) if p.id == patch_id)
    chain = [patches[index]]
    needed = set(patch_paths(chain[0]))
    for meta in reversed(patches[:index]):
        paths = set(patch_paths(meta))
        if paths & needed:
            chain.insert(0, meta)
            needed |= paths
    return chain


# -- a point's files, as an overlay's base -------------------------------------------------------
def read_at(repo: GitRepo, commit: str) -> Callable[[str], bytes | None]:
    """Files of ``commit`` as a reader (each read once)."""

    @functools.cache
    def read(path: str) -> bytes | None:
        return repo.read_file(commit, path)

    return read


def modes_at(repo: GitRepo, commit: str) -> Callable[[str], int | None]:
    """File modes of ``commit`` (regular files; None for others and for missing paths)."""

    @functools.cache
    def mode(path: str) -> int | None:
        found = repo.ls_tree(commit, [path]).get(path)
        return int(found[0], 8) if found and found[0] in ("100644", "100755") else None

    return mode


def list_at(repo: GitRepo, commit: str) -> Callable[[str], list[str]]:
    """Files of ``commit`` under a directory, as a lister (each directory listed once)."""

    @functools.cache
    def listing(directory: str) -> list[str]:
        return sorted(repo.ls_tree(commit, [directory] if directory else []))

    return listing
