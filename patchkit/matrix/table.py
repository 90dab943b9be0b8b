"""The matrix as a value: which releases, which patches, every cell, and its JSON shape
(documented in ``docs/matrix.md``; keys are only ever added)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from patchkit.errors import ConfigError, shown
from patchkit.model import PatchMeta
from patchkit.outcome import Outcome
from patchkit.upstream.history import History, IndexHistory, Point

SCHEMA = 1


@dataclass(frozen=True)
class Row:
    patch: str
    set: str
    kind: str  # "diff" or "rewrite"
    optional: bool  # opt-in
    title: str
    absorbed_by: str | None  # the first release in range where upstream had its change
    broken_by: str | None  # the first release in range where it stopped applying, before absorption
    reworked_in: str | None = None  # after absorption: the first release whose code moved on again


@dataclass(frozen=True)
class Cell:
    patch: str
    release: str
    outcome: Outcome  # its value only in the JSON (to_json)
    step: str
    absorbed_by: str | None  # for an (partly) upstreamed cell: the release that absorbed it
    verified: dict[str, dict[str, Any]] | None  # GPU kind -> the last record there
    detail: dict[str, Any] = field(default_factory=dict)  # what the outcome value carries

    @property
    def tests_fail(self) -> bool:
        """The patch's change is in this release, and its tests' run there (for the patch as
        it is now) failed on some GPU kind."""
        runs = (self.verified or {}).values()
        failed = any(v.get("result") == "failed" and not v.get("stale") for v in runs)
        return failed and self.outcome.writes

    @property
    def shown(self) -> str:
        """The outcome as people read it: ``carried, tests fail`` where a run says so."""
        return f"{self.outcome.value}, tests fail" if self.tests_fail else self.outcome.value

    def to_json(self, set_name: str) -> dict[str, Any]:
        return {
            "patch": self.patch,
            "set": set_name,
            "release": self.release,
            "outcome": self.outcome.value,
            "step": self.step,
            "absorbed_by": self.absorbed_by,
            "verified": self.verified,
            "detail": self.detail,
            "shown": self.shown,
        }


@dataclass(frozen=True)
class Run:
    """How this matrix was made (not part of the stable shape's promises: figures vary)."""

    executor: str
    computed: int  # cells computed now
    reused: int  # cells taken from the store
    fetch_s: float  # releases brought into the cache (downloads)
    cells_s: float  # computing the cells
    cell_s_total: float  # sum of the computed cells' own times


@dataclass(frozen=True)
class Matrix:
    target: str
    locked: str  # the lock's release: the base every cell is judged against
    releases: tuple[str, ...]
    rows: tuple[Row, ...]
    cells: tuple[Cell, ...]  # row-major: every release of the first patch, then the next
    engine: str
    run: Run

    def cell(self, patch: str, release: str) -> Cell:
        return next(c for c in self.cells if c.patch == patch and c.release == release)

    def to_json(self) -> dict[str, Any]:
        sets = {r.patch: r.set for r in self.rows}
        return {
            "schema": SCHEMA,
            "target": self.target,
            "locked": self.locked,
            "engine": self.engine,
            "releases": list(self.releases),
            "patches": [vars(r) for r in self.rows],
            "cells": [c.to_json(sets[c.patch]) for c in self.cells],
            "run": vars(self.run),
        }


# -- which releases ---------------------------------------------------------------------------
def select_points(history: History, spec: str) -> list[Point]:
    """``FROM..TO`` (either side may be empty: the lock's release, the newest), ``all`` (every
    release on the index), or empty (the lock's release to the newest)."""
    if spec == "all":
        if not isinstance(history, IndexHistory):
            raise ConfigError(
                "--releases all needs a target whose source is the package index",
                hint="give a range of commits or tags: --releases FROM..TO",
            )
        return [Point(v, v) for v in history.versions if not _prerelease(v)]
    low, sep, high = spec.partition("..")
    if spec and not sep:
        raise ConfigError(
            f"--releases {shown(spec)} is not FROM..TO or all",
            hint="e.g. --releases 0.19.0..latest",
        )
    start = history.resolve(low) if low else history.start()
    end = history.resolve(high or ("latest" if isinstance(history, IndexHistory) else "HEAD"))
    return [start, *history.between(start, end)]


def _prerelease(version: str) -> bool:
    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return True


# -- assembling -------------------------------------------------------------------------------
Verified = Mapping[tuple[str, str], dict[str, dict[str, Any]]]  # (patch, release) -> kinds


def assemble_rows(
    patches: Sequence[PatchMeta],
    labels: Sequence[str],
    outcomes: Mapping[tuple[str, str], Outcome],
) -> list[Row]:
    rows = []
    for meta in patches:
        row = [outcomes[(meta.id, label)] for label in labels]
        first = next((i for i, o in enumerate(row) if o.absorbed), len(row))
        absorbed = labels[first] if first < len(row) else None
        broken = next((labels[i] for i in range(first) if not row[i].carried), None)
        # Once upstream took the change the patch is retired: a later break is upstream reworking
        # its own code, not the patch breaking, and is named apart.
        reworked = next((labels[i] for i in range(first, len(row)) if not row[i].carried), None)
        kind = meta.kind.value
        rows.append(
            Row(meta.id, meta.set_name, kind, meta.optional, meta.title, absorbed, broken, reworked)
        )
    return rows


def absorbed_at(labels: Sequence[str], row: Sequence[Outcome], index: int) -> str | None:
    """For an absorbed cell: the first release of the run of absorbed cells that ends here."""
    if not row[index].absorbed:
        return None
    start = index
    while start > 0 and row[start - 1].absorbed:
        start -= 1
    return labels[start]
