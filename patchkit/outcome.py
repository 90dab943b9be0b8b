"""What an operation did to a patch, as values: the one ``Outcome`` (with its questions and the
one rule ``worst`` of a patch's parts), the step that placed it, the files it leaves, where
each hunk went and why (``Placement``), where it stopped (``ConflictDetail``): ``PatchResult``.

Plain frozen dataclasses and enums, kept as values until JSON is written or read. Nothing here
does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass


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
