"""What rewrites found, as values: per file (cacheable), then judged per anchor over every
candidate file together. Nothing here parses or reads files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.engine.rewrite.select import AnchorSpec
from patchkit.outcome import Outcome


@dataclass(frozen=True)
class Site:
    """An edit site: where a rewrite found the code it changes (or found it already changed)."""

    path: str
    qualname: str  # the definition matching the anchor: "Class.method"
    present: bool  # already there (True) or changed (False)

    def __str__(self) -> str:
        return f"{self.path}: {self.qualname}"


@dataclass(frozen=True)
class Tally:
    """One anchor of one rewrite in one file: definitions and edit sites found there."""

    path: str
    rewrite: str
    anchor: str
    defined: int
    sites: tuple[Site, ...] = ()
    definitions: tuple[str, ...] = ()  # qualnames that matched the anchor
    code: str = ""  # the first definition's source, for conflict reports


# A run whose output fails the structural check (:mod:`patchkit.engine.diff.resultcheck`) says so
# first: its file is a conflict (upstream has the code its own way), not a broken rewrite.
STRUCTURE = "its result fails the structural check: "


def run_outcome(run: FileRun) -> Outcome:
    """What a failed run makes its file: a conflict for a structural refusal, else failed."""
    return Outcome.CONFLICT if run.failure.startswith(STRUCTURE) else Outcome.FAILED


@dataclass(frozen=True)
class FileRun:
    """The rewrites that take one file, run over it. Patch-agnostic, so it can be cached."""

    path: str
    tallies: tuple[Tally, ...] = ()
    output: bytes | None = None  # the new content, only when it differs from the input
    failure: str = ""  # why the file could not be rewritten (parse error, a broken rewrite)


@dataclass(frozen=True)
class AnchorReport:
    """One anchor judged over every candidate file. ``message`` is patch-agnostic."""

    rewrite: str  # class name
    anchor: str
    expected: str  # "1", or a range "1-3"
    defined: int  # definitions matching the anchor, in all candidate files
    changed: int  # edit sites changed
    present: int  # edit sites found already changed
    outcome: Outcome
    message: str
    code: str = ""  # the anchor's current source, for conflict reports (only when not ok)
    sites: tuple[Site, ...] = ()
    path: str = ""  # the file the anchor was judged in: its sites', or the home
    home: str = ""  # the file the rewrite was made on


def judge_anchor(
    rewrite: str, spec: AnchorSpec, tallies: Sequence[Tally], home: str
) -> AnchorReport:
    """The outcome of one anchor from what every candidate file holds of it."""
    sites = tuple(s for t in tallies for s in t.sites)
    defined = sum(t.defined for t in tallies)
    changed = sum(not s.present for s in sites)
    present = len(sites) - changed
    outcome, message = _verdict(rewrite, spec, tallies, (defined, changed, present))
    paths = list(dict.fromkeys([s.path for s in sites] or [t.path for t in tallies if t.defined]))
    if sites and (paths != [home] or any(s.qualname != spec.pattern for s in sites)):
        message += "; at " + ", ".join(str(s) for s in sites)
        if home not in paths:
            message += f" (moved from {home})"
    code = ""
    if outcome in (Outcome.CONFLICT, Outcome.AMBIGUOUS):
        code = next((t.code for t in tallies if t.code), "")
    path = paths[0] if paths else home
    return AnchorReport(
        rewrite, spec.pattern, spec.expected, defined, changed, present, outcome, message, code,
        sites, path, home,
    )  # fmt: skip


def _verdict(
    rewrite: str, spec: AnchorSpec, tallies: Sequence[Tally], counts: tuple[int, int, int]
) -> tuple[Outcome, str]:
    defined, changed, present = counts
    anchor, expected = spec.pattern, spec.expected
    found = changed + present
    tally = f"found {found} (changed {changed}, already present {present})"
    if defined == 0:
        return Outcome.GONE, f"anchor {anchor} ({rewrite}) is not defined in the file any more"
    twice = [t for t in tallies if t.defined > 1]
    if spec.exact and twice:
        return Outcome.AMBIGUOUS, f"anchor {anchor} ({rewrite}) is defined {twice[0].defined} times"
    if found == 0:
        return (
            Outcome.CONFLICT,
            f"anchor {anchor} ({rewrite}): expected {expected} edit site(s), found none",
        )
    if found > spec.high:
        return (
            Outcome.AMBIGUOUS,
            f"anchor {anchor} ({rewrite}): expected {expected} edit site(s), {tally}",
        )
    if found < spec.low:
        return (
            Outcome.CONFLICT,
            f"anchor {anchor} ({rewrite}): expected {expected} edit site(s), {tally}",
        )
    if present == found:
        return Outcome.UPSTREAMED, f"anchor {anchor} ({rewrite}): all {found} already present"
    if changed == found:
        return Outcome.APPLIED, f"anchor {anchor} ({rewrite}): changed {changed}"
    return Outcome.PARTLY_UPSTREAMED, f"anchor {anchor} ({rewrite}): {tally}"


@dataclass(frozen=True)
class FileReport:
    """What the rewrites of one patch did to one file, judged as if it were their only file."""

    path: str
    outcome: Outcome
    anchors: tuple[AnchorReport, ...] = ()
    output: bytes | None = None  # the new content, only when it differs from the input
    message: str = ""  # file-level reason (missing file, parse error, broken rewrite)
    cached: bool = False

    def messages(self) -> list[str]:
        """The file message and every anchor message that is not a plain success."""
        lines = [self.message] if self.message else []
        lines += [a.message for a in self.anchors if not a.outcome.ok]
        return lines or [a.message for a in self.anchors]
