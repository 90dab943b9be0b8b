"""Records of proof: which tests proved which patch, where, against which lock.

They live in the patch repository, beside the set they prove, as
``patchsets/<set>/verification.json``: a JSON list, oldest first, sorted by time then patch, with
sorted keys and one key per line, so a new run is a small diff. Only the last ``KEEP`` records
per patch and environment kind are kept.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from patchkit.cache import Cache
from patchkit.errors import ConfigError
from patchkit.model import LockEntry, PatchMeta
from patchkit.project.sets import patch_digest
from patchkit.targets import commits_match
from patchkit.verification.environment import Environment

RECORDS_NAME = "verification.json"
KEEP = 5  # records kept per patch and environment kind


class Proof(str, enum.Enum):
    PROVEN = "proven"
    PROVES_NOTHING = "proves nothing"
    FAILED = "failed"
    NOT_RUN = "not run"


@dataclass(frozen=True)
class TestRecord:
    """One test of a verification run and its result."""

    node: str  # the pytest node id as the patch metadata names it
    where: str  # "set" or "upstream"
    result: str  # "passed", "failed", "not run"
    reason: str = ""
    passed: int = 0
    failed: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class BenchRecord:
    """One benchmark case, before (the unpatched tree, or its fallback) against after (the
    patched tree), timed alternately in one GPU session (``bench``)."""

    bench: str  # the [[bench]] name
    case: str
    metric: str  # "time" (ms per call), "tokens/s", "bytes/s"
    status: str  # "compared", "not compared" (unpatched cannot run it), "failed", "not run"
    compared_with: str = "unpatched"  # or "unpatched, fallback: <label>"
    before: float | None = None  # in the metric's unit (median)
    after: float | None = None
    ratio: float | None = None  # after's speed / before's: above 1 is faster
    ratio_spread: float | None = None  # IQR of the per-round ratios, relative
    before_spread: float | None = None  # IQR of the samples, relative to the median
    after_spread: float | None = None
    before_cold_s: float | None = None  # setup + first call: imports, JIT, autotuning
    after_cold_s: float | None = None
    before_label: str = ""  # what ran, in the callable's words
    after_label: str = ""
    rounds: int = 0
    tolerance: float = 0.05
    slower: bool = False  # three rounds in four under 1 - tolerance (``bench.is_slower``)
    reason: str = ""
    timing: str = ""  # "graph" (CUDA graph replays), "eager" (calls), "host" (host clock)


@dataclass(frozen=True)
class Record:
    """One verification of one patch: what ran, where, on which tree, and how it ended."""

    patch: str
    digest: str  # sha256 of the patch file that was tested (patch_digest)
    target: str
    lock_commit: str  # the lock's commit for the target when it ran
    lock_version: str
    tree_commit: str | None  # the upstream commit the tree itself named, if known
    result: str  # "passed", "failed", "not run"
    reason: str
    tests: tuple[TestRecord, ...]
    environment: Environment
    time: str  # UTC, ISO 8601 to the second: "2026-11-22T10:00:00Z"
    duration_s: float
    bench: tuple[BenchRecord, ...] = ()  # `verify --bench`: speed before and after
    # the proof (verification.proof): "proven", "proves nothing", "failed", "not run"; "" in
    # records made before proofs were kept
    proof: str = ""
    proof_reason: str = ""
    unpatched: tuple[TestRecord, ...] = ()  # the same tests on the unpatched tree
    unpatched_time: str = ""  # when that run was made (an earlier run's, when reused)
    tests_digest: str = ""  # of the tests it ran (proof.tests_digest): a new test re-proves

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["environment"] = self.environment.to_json()
        data["tests"] = [asdict(t) for t in self.tests]
        data["bench"] = [asdict(b) for b in self.bench]
        data["unpatched"] = [asdict(t) for t in self.unpatched]
        for key in ("bench", "proof", "proof_reason", "unpatched", "unpatched_time"):
            if not data[key]:
                del data[key]  # records without figures or proof stay as they were
        if not data["tests_digest"]:
            del data["tests_digest"]
        return data

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Record:
        """A record as read; a field of the wrong type or an unknown proof is a ValueError
        (the records file is data anyone may have edited)."""
        for key in ("patch", "time", "result", "digest", "target"):
            if not isinstance(raw.get(key), str):
                raise ValueError(f"{key} must be a string (got {raw.get(key)!r:.40})")
        if raw.get("proof", "") not in {"", *(p.value for p in Proof)}:
            raise ValueError(
                f"proof {raw.get('proof')!r:.40} is none of {[p.value for p in Proof]}"
            )
        return cls(
            **{
                **raw,
                "tests": tuple(TestRecord(**t) for t in raw["tests"]),
                "bench": tuple(BenchRecord(**b) for b in raw.get("bench", ())),
                "unpatched": tuple(TestRecord(**t) for t in raw.get("unpatched", ())),
                "environment": Environment.from_json(raw["environment"]),
            }
        )


def set_root_of(patch: PatchMeta) -> Path:
    """The patch set directory (the one holding ``patchset.toml``) a patch belongs to."""
    found = _set_root(patch.meta_file)
    if found is None:
        raise ConfigError(f"{patch.meta_file}: no patchset.toml above it for patch {patch.id}")
    return found


@functools.lru_cache(maxsize=4096)
def _set_root(meta_file: Path) -> Path | None:
    return next((d for d in meta_file.parents if (d / "patchset.toml").is_file()), None)


def records_path(set_root: Path, *, tracked: bool = True) -> Path:
    """The set's tracked records (``patchsets/<set>/verification.json``, committed by choice:
    ``verify --record``), or (``tracked=False``) this machine's, kept in patchkit's cache so
    that normal use leaves the working copy clean."""
    if tracked:
        return set_root / RECORDS_NAME
    return _machine_records(set_root, os.environ.get("PATCHKIT_CACHE"))


@functools.lru_cache(maxsize=64)
def _machine_records(set_root: Path, cache: str | None) -> Path:
    """(``cache``: the cache the path is in, as the environment names it: part of the key.)"""
    key = hashlib.sha256(str(set_root.resolve()).encode()).hexdigest()[:16]
    return Cache.current().records(set_root.name, key)  # the file: made when written


def load_records(set_root: Path) -> list[Record]:
    """Every record of the set, the tracked ones and this machine's, oldest first."""
    both = [*_read(records_path(set_root)), *_read(records_path(set_root, tracked=False))]
    return sorted(both, key=_key)  # a run is written to one of the two, never both


def tracked_records(set_root: Path) -> list[Record]:
    """The set's tracked records only (``verification.json``): the same on every machine."""
    return sorted(_read(records_path(set_root)), key=_key)


def _read(path: Path) -> list[Record]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return []
    return list(_parsed(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=16)
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[Record, ...]:
    """A records file parsed once per content (status asks per patch, several times)."""
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return ()
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"{path}: unreadable verification records ({exc})",
            hint="fix the JSON by hand, or remove the file and run `patchkit verify` again",
        ) from None
    try:
        return tuple(Record.from_json(item) for item in raw)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(
            f"{path}: malformed verification record ({exc})",
            hint="fix the record by hand, or remove the file and run `patchkit verify` again",
        ) from None


def _key(record: Record) -> tuple[str, str]:
    return (record.time, record.patch)


def _capped(records: Iterable[Record], keep: int) -> list[Record]:
    ordered = sorted(records, key=_key)
    counts: dict[tuple[str, str], int] = {}
    kept = []
    for record in reversed(ordered):
        group = (record.patch, record.environment.kind)
        counts[group] = counts.get(group, 0) + 1
        if counts[group] <= keep:
            kept.append(record)
    return kept[::-1]


def render_records(records: Sequence[Record]) -> str:
    return json.dumps([r.to_json() for r in records], indent=2, sort_keys=True) + "\n"


def add_records(
    set_root: Path, new: Sequence[Record], *, keep: int = KEEP, tracked: bool = True
) -> Path:
    """Merge ``new`` into the set's tracked records file, or this machine's (sorted, capped),
    and write it atomically."""
    path = records_path(set_root, tracked=tracked)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render_records(_capped([*_read(path), *new], keep))
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path


def last_results(set_root: Path, patch: PatchMeta | str) -> list[Record]:
    """The newest record of ``patch`` for each environment kind it ran in, newest last."""
    patch_id = patch if isinstance(patch, str) else patch.id
    latest: dict[str, Record] = {}
    for record in load_records(set_root):
        if record.patch == patch_id:
            latest[record.environment.kind] = record  # records are oldest first
    return sorted(latest.values(), key=_key)


def latest_bench(records: Iterable[Record]) -> dict[str, Record]:
    """Environment kind ("NVIDIA H100 80GB HBM3 (sm_90)") -> the newest of ``records`` (one
    patch's, oldest first) that carries benchmark figures (``record.bench``)."""
    return {r.environment.kind: r for r in records if r.bench}


def same_code(bench: BenchRecord) -> bool:
    """Before and after ran the same code (the callable says so: the same label on both trees,
    e.g. the SM90 gate, which the patch does not change): its ratio measures noise, not the
    patch, and is shown as ``same code``."""
    return bool(bench.before_label) and bench.before_label == bench.after_label


@dataclass(frozen=True)
class BenchSummary:
    """The figures of one record in a line: its worst and best compared case."""

    kind: str  # Environment.kind: where they were measured
    time: str
    compared: int  # cases compared (same code excluded)
    slower: bool  # some case's ratio is under 1 - its tolerance
    worst: BenchRecord | None = None
    best: BenchRecord | None = None
    same: int = 0  # cases whose before and after ran the same code

    def describe(self) -> str:
        same = f"; {self.same} same code" if self.same else ""
        if self.worst is None or self.best is None:
            return f"no case compared{same} on {self.kind} {self.time[:10]}"
        worst = f"x{self.worst.ratio:.2f} ({self.worst.bench}: {self.worst.case}"
        worst += "" if self.worst.compared_with == "unpatched" else f"; {self.worst.compared_with}"
        flag = "slower: " if self.slower else ""
        span = f"{flag}{worst})"
        if self.best is not self.worst:
            span += f" to x{self.best.ratio:.2f}"
        return f"{span}, {self.compared} cases{same} on {self.kind} {self.time[:10]}"


def bench_summary(record: Record) -> BenchSummary:
    measured = [b for b in record.bench if b.status == "compared" and b.ratio is not None]
    compared = [b for b in measured if not same_code(b)]
    ordered = sorted(compared, key=lambda b: b.ratio or 0.0)
    return BenchSummary(
        kind=record.environment.kind,
        time=record.time,
        compared=len(compared),
        slower=any(b.slower for b in compared),
        worst=ordered[0] if ordered else None,
        best=ordered[-1] if ordered else None,
        same=len(measured) - len(compared),
    )


def is_stale(record: Record, patch: PatchMeta, lock_entry: LockEntry) -> bool:
    """The record no longer proves the patch: the patch file or the locked commit changed."""
    if record.digest != patch_digest(patch):
        return True
    return not commits_match(record.lock_commit, lock_entry.commit)


# -- in the tree's state, after apply --verify -----------------------------------------------

STATE_NAME = "verified.json"  # in the tree's state directory, beside state.json


@dataclass(frozen=True)
class StateVerdict:
    """The last verification of a patch as applied to this tree."""

    patch: str
    digest: str
    result: str
    reason: str
    environment: str  # Environment.kind
    time: str


def record_in_state(state_dir: Path, records: Sequence[Record]) -> Path:
    """Remember in the tree's state what ``records`` found for each patch (newest wins)."""
    path = state_dir / STATE_NAME
    known = {v.patch: v for v in state_results(state_dir).values()}
    for rec in records:
        known[rec.patch] = StateVerdict(
            rec.patch, rec.digest, rec.result, rec.reason, rec.environment.kind, rec.time
        )
    state_dir.mkdir(parents=True, exist_ok=True)
    data = {k: vars(v) for k, v in sorted(known.items())}
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def state_results(state_dir: Path) -> dict[str, StateVerdict]:
    """Patch id -> the last verification recorded in this tree's state (empty when none)."""
    try:
        raw = json.loads((state_dir / STATE_NAME).read_text())
        return {k: StateVerdict(**v) for k, v in raw.items()}
    except (FileNotFoundError, json.JSONDecodeError, TypeError):
        return {}
