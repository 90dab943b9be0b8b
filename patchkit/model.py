"""The data model: targets and their lock, patch sets and patches, outcomes.

Plain frozen dataclasses; they are built by the loaders (``project/lock.py``, ``project/sets.py``)
and passed around by value. Nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
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


class Outcome(str, enum.Enum):
    APPLIED = "applied"  # applied as written
    CARRIED = "carried"  # applied after the code moved (3-way merge or rewrite re-run)
    UPSTREAMED = "upstreamed"  # the change is already in the tree
    PARTLY_UPSTREAMED = "partly-upstreamed"
    CONFLICT = "conflict"
    GONE = "gone"  # the code it changes no longer exists
    AMBIGUOUS = "ambiguous"  # its anchor or context matches more than one place
    FAILED = "failed"  # the patch itself is broken (bad rewrite, malformed diff)

    @property
    def ok(self) -> bool:
        return self in (Outcome.APPLIED, Outcome.CARRIED, Outcome.UPSTREAMED)

    @property
    def carried(self) -> bool:
        """The patch's change is on the tree: it ended well, or upstream took part of it and
        the rest is applied (the patches after it see its files)."""
        return self.ok or self is Outcome.PARTLY_UPSTREAMED

    @property
    def writes(self) -> bool:
        """The patch's own lines go into the tree: applied, carried, or the rest of a partly
        upstreamed patch."""
        return self in (Outcome.APPLIED, Outcome.CARRIED, Outcome.PARTLY_UPSTREAMED)

    @property
    def moved(self) -> bool:
        """Placed where the code moved, or merged with upstream's part of it (carried, partly
        upstreamed): what its tests proved before is stale."""
        return self in (Outcome.CARRIED, Outcome.PARTLY_UPSTREAMED)

    @property
    def absorbed(self) -> bool:
        """Upstream has the change, whole or in part."""
        return self in (Outcome.UPSTREAMED, Outcome.PARTLY_UPSTREAMED)

    @classmethod
    def worst(cls, outcomes: Iterable[Outcome]) -> Outcome:
        """The one rule for a patch's outcome from its parts' (its files, a rewrite's anchors):
        a part that did not land is the outcome, the worst first (failed, ambiguous, conflict,
        gone), whatever else landed; *partly upstreamed* only when every part is applied or
        already there, some of each; no part at all: failed (there is nothing to say). A
        conflicted hunk is never part of a success."""
        kinds = set(outcomes)
        for bad in _STOPS:
            if bad in kinds:
                return bad
        if not kinds:
            return cls.FAILED
        if kinds == {cls.UPSTREAMED}:
            return cls.UPSTREAMED
        if cls.PARTLY_UPSTREAMED in kinds or cls.UPSTREAMED in kinds:
            return cls.PARTLY_UPSTREAMED
        return cls.CARRIED if cls.CARRIED in kinds else cls.APPLIED

    def since_base(self, unchanged: Callable[[], bool]) -> Outcome:
        """This outcome judged against the patch's base: an *applied* patch whose files are not
        as they were at its base was *carried* (``unchanged`` is asked only then)."""
        if self is Outcome.APPLIED and not unchanged():
            return Outcome.CARRIED
        return self


# Worst first: any of these among a patch's parts is its outcome (Outcome.worst).
_STOPS = (Outcome.FAILED, Outcome.AMBIGUOUS, Outcome.CONFLICT, Outcome.GONE)


class Step(str, enum.Enum):
    EXACT = "exact"
    THREE_WAY = "three-way"
    REWRITE = "rewrite"
    PROBE = "probe"  # found already present
    NONE = "none"


@dataclass(frozen=True)
class FileChange:
    """The content a patch leaves a file with. ``content is None`` deletes the file."""

    path: str
    content: bytes | None
    mode: int | None = None  # 0o100644 / 0o100755; None keeps the current mode
    old_path: str | None = None  # set for a rename


class Rule(str, enum.Enum):
    """The evidence that put a hunk where it went (``--explain`` shows it)."""

    EXACT = "exact"  # the file is the diff's own base blob: the hunk's own line numbers
    CONTEXT = "context"  # its context occurs once in the file
    WHITESPACE = "whitespace"  # its context occurs once when whitespace is ignored
    ORDER = "order"  # one of several places, the only one between its neighbouring hunks
    END_OF_FILE = "end-of-file"  # it ends the file (no trailing context), and so does the place
    START_OF_FILE = "start-of-file"  # it starts the file (no leading context)
    SCOPE = "scope"  # the only place in the scope (function, class) it had at base
    SURROUNDINGS = "surroundings"  # the only place whose lines around match the base's
    OFFSET = "offset"  # the only place at the same offset as its neighbouring hunks
    THREE_WAY = "three-way"  # merged from the base blob, whole file, then scope-checked
    SCOPE_MERGE = "scope-merge"  # merged from the base blob, its scope against the same scope
    SCOPE_LINES = "scope-lines"  # lines inserted in its context: its lines, once in its scope
    ONE_SIDE = "one-side"  # one side of its context changed upstream: placed by the other side
    PARAGRAPH = "paragraph"  # upstream inserted lines at its point: the side blank lines tell
    UPSTREAM = "already-upstream"  # its new lines are there already: nothing written
    ANCHOR = "anchor"  # a rewrite's edit site, in a definition its anchor (name or pattern) matches
    NONE = "none"  # not placed (see the outcome)


@dataclass(frozen=True)
class Candidate:
    """A place in a file where a hunk's context occurs."""

    line: int  # 1-based line of the place in the file
    scope: tuple[str, ...] = ()  # its scope path, when the file's language has a grammar


@dataclass(frozen=True)
class Placement:
    """Where one hunk went, and why: a reviewer checks a carried patch from these."""

    path: str  # the file it was written to
    hunk: str  # its header, "@@ -10,7 +10,8 @@"
    rule: Rule
    line: int | None = None  # 1-based line of the place in the file as it was before
    scope: tuple[str, ...] = ()  # the scope path of that place ((): top level or unknown)
    moved_from: str | None = None  # the path the diff names, when the code moved elsewhere
    candidates: tuple[Candidate, ...] = ()  # the places it could not choose between
    note: str = ""  # the structure fallback ("no grammar for .md files: lines only"), etc.


@dataclass(frozen=True)
class PatchResult:
    """What happened to one patch in one operation: a value, not an exception."""

    patch_id: str
    outcome: Outcome
    step: Step
    changes: tuple[FileChange, ...] = ()
    message: str = ""
    details: tuple[ConflictDetail, ...] = ()
    conflicted: tuple[FileChange, ...] = ()  # files with labelled conflict markers, for a person
    placements: tuple[Placement, ...] = ()  # per hunk of a diff: where it went and by which rule

    def reasons(self) -> str:
        """Where and why each hunk stopped, on one line; the result's message when no hunk is
        named."""
        return "; ".join(f"{d.path} {d.hunk}: {d.reason}" for d in self.details) or self.message


@dataclass(frozen=True)
class ConflictDetail:
    """Where exactly a patch stopped: file, hunk, and both sides."""

    path: str
    hunk: str  # "@@ -10,7 +10,8 @@" or a rewrite anchor
    reason: str
    ours: str = ""  # the tree's text there
    theirs: str = ""  # what the patch wanted there
