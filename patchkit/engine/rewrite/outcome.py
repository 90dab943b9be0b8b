"""A rewrite patch's result from its files' runs, judged from the rewrites' selectors alone, and
the warm path: the whole result read from the cache without importing the rewrite module or
libcst (0.6 s of imports, and a parse of every file, saved on every re-apply).

The selectors (where each rewrite looks, its anchors and counts) are remembered by the rewrite
module's hash the first time it is imported; the candidate files then follow from text alone
(``patchkit.engine.rewrite.select``) and each file's run from the cache
(``patchkit.engine.rewrite.cache``). Anything missing, and the rewrite runs as usual.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.rewrite import cache
from patchkit.engine.rewrite.report import (
    AnchorReport,
    FileRun,
    judge_anchor,
    run_outcome,
)
from patchkit.engine.rewrite.select import Lister, Selector, admitting, searched, wanted
from patchkit.outcome import ConflictDetail, FileChange, Outcome, PatchResult, Placement, Rule, Step

Reader = Callable[[str], bytes | None]
# path -> what changes whenever the file does; () absent; None: read it (see Tree.fingerprint)
Fingerprinter = Callable[[str], tuple[int, ...] | None]


@dataclass(frozen=True)
class RewriteRun:
    """A rewrite module's rewrites over a whole tree."""

    outcome: Outcome
    anchors: tuple[AnchorReport, ...]  # every anchor, judged over all its candidate files
    files: tuple[FileRun, ...]  # every candidate file, in the order looked at
    missing: tuple[tuple[str, str], ...] = ()  # (home, why) of rewrites that found no file

    @property
    def changes(self) -> tuple[FileChange, ...]:
        if self.outcome not in (Outcome.APPLIED, Outcome.PARTLY_UPSTREAMED):
            return ()
        return tuple(FileChange(r.path, r.output) for r in self.files if r.output is not None)


def judge(selectors: Sequence[Selector], runs: Sequence[FileRun]) -> list[AnchorReport]:
    """Every anchor of every rewrite, judged over all the files' runs together."""
    reports = []
    for selector in selectors:
        for spec in selector.anchors:
            tallies = [
                t for r in runs for t in r.tallies
                if t.rewrite == selector.rewrite and t.anchor == spec.pattern
            ]  # fmt: skip
            reports.append(judge_anchor(selector.rewrite, spec, tallies, selector.home))
    return reports


def conclude(
    selectors: Sequence[Selector], files: tuple[FileRun, ...], seen: set[str], read: Reader
) -> RewriteRun:
    anchors = tuple(judge(selectors, files))
    missing = tuple((s.home, _missing(s, read)) for s in selectors if s.rewrite not in seen)
    outcomes = [a.outcome for a in anchors if a.rewrite in seen]
    outcomes += [Outcome.GONE for _ in missing]
    outcomes += [run_outcome(f) for f in files if f.failure]
    return RewriteRun(Outcome.worst(outcomes), anchors, files, missing)


def _missing(selector: Selector, read: Reader) -> str:
    """Why a rewrite has no candidate file."""
    elsewhere = f", nor is it under {searched([selector])}" if selector.search else ""
    if read(selector.home) is None:
        return f"the file does not exist{elsewhere}"
    names = ", ".join(a.pattern for a in selector.anchors)
    return f"no anchor of {selector.rewrite} ({names}) is defined in it any more{elsewhere}"


def patch_result(patch_id: str, run: RewriteRun) -> PatchResult:
    step = Step.PROBE if run.outcome is Outcome.UPSTREAMED else Step.REWRITE
    lines, details = _explain(run)
    message = "\n".join(f"{patch_id}: {line}" for line in lines)
    return PatchResult(
        patch_id, run.outcome, step, run.changes, message, tuple(details),
        placements=placements(run),
    )  # fmt: skip


def placements(run: RewriteRun) -> tuple[Placement, ...]:
    """Every edit site as ``--explain`` shows a hunk: file, scope, and the home it moved from."""
    return tuple(
        Placement(
            site.path,
            f"{a.anchor} ({a.rewrite})",
            Rule.UPSTREAM if site.present else Rule.ANCHOR,
            scope=tuple(site.qualname.split(".")),
            moved_from=a.home if a.home and site.path != a.home else None,
        )
        for a in run.anchors
        for site in a.sites
    )


def _explain(run: RewriteRun) -> tuple[list[str], list[ConflictDetail]]:
    lines: list[str] = []
    details: list[ConflictDetail] = []
    for home, why in run.missing:
        lines.append(f"{home}: {why}")
        details.append(ConflictDetail(home, "", why))
    for f in run.files:
        if f.failure:
            lines.append(f"{f.path}: {f.failure}")
            details.append(ConflictDetail(f.path, "", f.failure))
    judged = [a for a in run.anchors if a.defined or a.sites or not run.missing]
    bad = [a for a in judged if not a.outcome.ok and a.outcome is not Outcome.PARTLY_UPSTREAMED]
    if not lines:
        lines += [f"{a.path}: {a.message}" for a in (bad or judged)]
    details += [ConflictDetail(a.path, a.anchor, a.message, ours=a.code) for a in bad]
    return lines, details


# -- the warm path ---------------------------------------------------------------------------


def module_sha(source: bytes, files: Sequence[str] = ()) -> str:
    """The key of a rewrite module: its source, and the files its metadata declares (another
    declaration is another key, so it is checked against the rewrites again)."""
    digest = hashlib.sha256(source)
    for path in sorted(files):
        digest.update(b"\0" + path.encode())
    return digest.hexdigest()


def warm_run(
    source: bytes,
    files: Sequence[str],
    read: Reader,
    listing: Lister | None,
    fingerprint: Fingerprinter | None = None,
) -> tuple[RewriteRun, Callable[[str], bool]] | None:
    """The rewrite module's run, when its selectors and every candidate file's run are in the
    cache (None otherwise; imports neither libcst nor the rewrite), and whether a change to a path could change that run (the path is a
    rewrite's home or under a directory it searches): a series reuses the run until one does.
    With ``fingerprint``, a file unchanged since it was last looked at is not read again to
    learn whether a rewrite takes it."""
    key = module_sha(source, files)
    selectors = cache.load_selectors(key)
    if selectors is None:
        return None
    run = _from_cache(key, selectors, read, listing, fingerprint)
    if run is None:
        return None
    homes = {s.home for s in selectors}
    roots = tuple({root for s in selectors for root in s.roots()})

    def affects(path: str) -> bool:
        return path in homes or any(not r or path.startswith(r + "/") for r in roots)

    return run, affects


def _from_cache(
    key: str,
    selectors: Sequence[Selector],
    read: Reader,
    listing: Lister | None,
    fingerprint: Fingerprinter | None,
) -> RewriteRun | None:
    taken = _taken(key, selectors, read, listing, fingerprint)
    runs = []
    for path, chosen in taken.items():
        data = read(path) or b""
        run = cache.load(key, path, tuple(s.rewrite for s in chosen), data)
        if run is None:
            return None
        runs.append(run)
    seen = {s.rewrite for chosen in taken.values() for s in chosen}
    return conclude(selectors, tuple(runs), seen, read)


_SETTLED_NS = 2_000_000_000  # a file changed this recently may change again unseen


def _taken(
    key: str,
    selectors: Sequence[Selector],
    read: Reader,
    listing: Lister | None,
    fingerprint: Fingerprinter | None,
) -> dict[str, list[Selector]]:
    """The candidate files and the selectors that take each. A file whose fingerprint is as
    when it was last looked at keeps that verdict; any other is read. A new verdict is kept
    only for a file unchanged for two seconds: one changed within the same clock tick after it
    was looked at would otherwise keep its old fingerprint (git's "racily clean" rule)."""
    known = cache.load_verdicts(key) if fingerprint is not None else {}
    by_name = {s.rewrite: s for s in selectors}
    settled = time.time_ns() - _SETTLED_NS
    verdicts, found = {}, {}
    for path, wanting in wanted(selectors, listing).items():
        printed = fingerprint(path) if fingerprint is not None else None
        before = known.get(path)
        if printed is not None and before is not None and before[0] == printed:
            taking = [by_name[n] for n in before[1] if n in by_name]
        else:
            taking = admitting(wanting, read(path))
        if printed is not None and (not printed or max(printed[-2:]) < settled):
            verdicts[path] = (printed, tuple(s.rewrite for s in taking))
        elif before is not None:
            verdicts[path] = before  # stale, so never matched; kept to save a write
        if taking:
            found[path] = taking
    if fingerprint is not None and verdicts != known:
        cache.store_verdicts(key, verdicts)
    return found
