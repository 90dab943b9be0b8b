"""The data model: targets and their lock, patch sets and patches (what an operation did to
a patch is ``outcome``'s).

Plain frozen dataclasses; they are built by the loaders (``project/lock.py``, ``project/sets.py``)
and passed around by value. Nothing here does I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class SourceKind(str, enum.Enum):
    INDEX = "index"  # source releases on the Python package index pip is configured with
    GIT = "git"  # a git remote or URL
    PATH = "path"  # a local checkout or mirror


@dataclass(frozen=True)
class SourceSpec:
    """Where a target's upstream releases come from: the package index, a git URL or a path."""

    kind: SourceKind
    package: str | None = None  # INDEX: the distribution name ("vllm", "flashinfer-python")
    url: str | None = None  # GIT: clone URL
    path: str | None = None  # PATH: local checkout or mirror


@dataclass(frozen=True)
class LockEntry:
    """One target pinned: the exact upstream commit and release the patch sets are made for."""

    name: str  # "vllm", "flashinfer"
    repository: str  # upstream repository URL, for links and export
    version: str  # release version, "0.19.0"
    commit: str  # upstream commit id, full or abbreviated ("2a69949bd")
    source: SourceSpec
    pins: dict[str, str] = field(default_factory=dict)  # other target -> version it must be at


@dataclass(frozen=True)
class Lock:
    """``upstream.lock``: the pinned upstream of each target."""

    path: Path
    targets: dict[str, LockEntry]


class UpstreamStatus(str, enum.Enum):
    LOCAL = "local"  # only here
    FORWARDED = "forwarded"  # a PR is open upstream
    MERGED = "merged"  # upstream merged it (merged_in says where)


class PatchKind(str, enum.Enum):
    DIFF = "diff"
    REWRITE = "rewrite"


@dataclass(frozen=True)
class TestSpec:
    """A test that proves a patch: shipped with the set, or an upstream test id in the tree."""

    where: str  # "set" (patchsets/<set>/...) or "upstream" (inside the target tree)
    node: str  # pytest node id, relative to the set directory or to the tree root
    gpu: bool = False
    min_capability: tuple[int, int] | None = None
    gpu_kinds: tuple[str, ...] = ()  # Ray accelerator types to prove it on ("H100", "H200")


class BenchMetric(str, enum.Enum):
    TIME = "time"  # milliseconds per call (lower is better)
    TOKENS = "tokens/s"  # the callable's ``work`` (tokens per call) over the time per call
    BYTES = "bytes/s"  # likewise, bytes per call

    @property
    def unit(self) -> str:
        return "ms" if self is BenchMetric.TIME else self.value


Args = tuple[tuple[str, Any], ...]  # keyword arguments of a case, as sorted (key, value) pairs


@dataclass(frozen=True)
class BenchCase:
    """One input of a benchmark: shapes, dtypes and switches the callable reads."""

    name: str  # unique within the benchmark: "batch=64 kv_len=4096" unless named
    args: Args

    def as_dict(self) -> dict[str, Any]:
        return dict(self.args)


@dataclass(frozen=True)
class BenchFallback:
    """What to compare against where the unpatched tree cannot run a case at all: the case's
    arguments with ``args`` laid over them, run on the unpatched tree, named by ``label``."""

    label: str  # "tensor-core decode (any group size)"
    args: Args


@dataclass(frozen=True)
class BenchSpec:
    """A benchmark of the code a patch changes (``[[bench]]`` in the patch metadata): a callable
    in the set's tests directory, run on the unpatched and the patched tree, case by case."""

    name: str
    callable: str  # "tests/bench_decode.py::decode", relative to the set directory
    cases: tuple[BenchCase, ...]
    metric: BenchMetric = BenchMetric.TIME
    tolerance: float = 0.05  # a speed ratio (after / before) under 1 - tolerance is a regression
    fallbacks: tuple[BenchFallback, ...] = ()
    gpu: bool = True
    min_capability: tuple[int, int] | None = None
    rounds: int = 8  # alternating rounds (before, after) at least; up to 4x as many if noisy
    reps: int = 20  # timed calls per side per round
    warmup: int = 10  # untimed calls per side before the first round
    graph: bool = True  # time CUDA graph replays of the call (no host launch overhead)

    @property
    def file(self) -> str:
        return self.callable.split("::")[0]

    @property
    def function(self) -> str:
        return self.callable.split("::")[1]


@dataclass(frozen=True)
class PatchHistory:
    """What upstream did to a patch: absorbed it, broke it, or left it pending a fix."""

    absorbed_by: str | None = None  # upstream release/commit that made the change itself
    broken_by: str | None = None  # upstream release/commit where the patch stopped applying
    pending: str | None = None  # "conflict on 0.33.0": left behind by `rebase --allow-pending`


class PrState(str, enum.Enum):
    """Where an upstream pull request for the same fix stands (``[upstream] state``)."""

    NONE = "none"  # no upstream PR known
    OPEN = "open"
    MERGED = "merged"
    CLOSED = "closed"  # closed unmerged: a new PR may be made, naming it


@dataclass(frozen=True)
class RelatedPr:
    """``[[upstream.related]]``: an upstream PR in the same files and code, found by the
    upstream check (the same change, or a related one), listed in the PR text."""

    pr: str  # its URL
    state: PrState  # open, merged or closed (none: not recorded)
    why: str = ""  # "changes mamba_mixer2.py (is_blackwell)", "the same change"


@dataclass(frozen=True)
class UpstreamPr:
    """``[upstream]`` of a patch's metadata: the upstream PR for the same fix, if any."""

    pr: str | None = None  # its URL
    state: PrState = PrState.NONE
    checked: str | None = None  # "YYYY-MM-DD": when the state was last looked up
    author: str | None = None  # the PR's author (a GitHub login), as the check found it
    ours: bool | None = None  # whether that author is the exporter (None: not known)
    related: tuple[RelatedPr, ...] = ()  # other PRs in the same files and code
    merge_commit: str | None = None  # the PR's merge commit upstream (an imported merged PR)
    released_in: str | None = None  # the first release that has it, where that is known

    @property
    def number(self) -> str | None:
        tail = self.pr.rstrip("/").rsplit("/", 1)[-1] if self.pr else ""
        return tail if tail.isdigit() else None


@dataclass(frozen=True)
class UpstreamTest:
    """``[export.test]``: the test a PR adds to upstream's own suite (upstream never sees the
    set's ``tests/``). ``file`` is a unified diff (``.diff``/``.patch``; a ``.py`` rewrite is refused)
    against the upstream tree, applied after the patch in the same exported commit."""

    file: Path  # absolute
    run: tuple[str, ...]  # pytest arguments, run at the tree root: ("tests/x.py", "-k", "y")
    gpu: bool = False  # needs a GPU: export says "not run: needs a GPU" where there is none
    min_capability: tuple[int, int] | None = None
    noconftest: bool = False  # run with --noconftest (upstream's conftest imports too much)


@dataclass(frozen=True)
class ExportSpec:
    """``[export]`` of a patch's metadata: what makes its exported commit the same everywhere,
    and the upstream test its PR adds."""

    identity: str | None = None  # "Name <email>": author, committer and sign-off
    date: str | None = None  # ISO 8601: author and committer date
    test: UpstreamTest | None = None


@dataclass(frozen=True)
class PatchMeta:
    """One patch of a set: its file (a diff or a rewrite) and what its metadata says."""

    id: str
    title: str
    why: str
    target: str
    kind: PatchKind
    file: Path  # the .patch or rewrite .py, absolute
    meta_file: Path  # the .toml holding this metadata, absolute
    set_name: str
    author: str = ""
    issues: tuple[str, ...] = ()
    prs: tuple[str, ...] = ()
    status: UpstreamStatus = UpstreamStatus.LOCAL
    merged_in: str | None = None
    requires: tuple[str, ...] = ()
    tests: tuple[TestSpec, ...] = ()
    benches: tuple[BenchSpec, ...] = ()  # ``[[bench]]``: speed before and after
    optional: bool = False  # opt-in: applied only when asked for by id
    on_failure: str = "stop"  # "skip": a failure leaves it out, the rest apply (exit 11)
    pr_tags: tuple[str, ...] = ()  # vLLM title tags ("Bugfix", "Hardware][NVIDIA") or
    pr_scope: str | None = None  # FlashInfer conventional-commit type(scope)
    # ``[pr] hardware``: compute capabilities the change is for ((12, 1)); the PR text says
    # which of them no verification record comes from
    pr_hardware: tuple[tuple[int, int], ...] = ()
    pr_caveats: str | None = None  # ``[pr] caveats``: the PR's caveats (None: ``notes``)
    pr_since: str = ""  # ``[pr] since``: the upstream release or commit where the problem began
    notes: str = ""  # what remains unproven, caveats
    history: PatchHistory = PatchHistory()
    # A rewrite's files, declared so they are known without importing it; () = not declared
    files: tuple[str, ...] = ()
    upstream: UpstreamPr = UpstreamPr()  # ``[upstream]``: an upstream PR for the same fix
    export: ExportSpec = ExportSpec()  # ``[export]``: identity, date, upstream test


@dataclass(frozen=True)
class PatchSet:
    """A patch set (``patchsets/<name>/``): its manifest and its patches in series order."""

    name: str
    version: str
    description: str
    targets: tuple[str, ...]
    root: Path
    patches: tuple[PatchMeta, ...]  # in series order

    def for_target(self, target: str) -> tuple[PatchMeta, ...]:
        return tuple(p for p in self.patches if p.target == target)
