"""Following the definition, not the file: a hunk's scope gone from its file (the file kept or
not, a module turned package included) is looked for by name and body across the tree.

Candidates are picked from text alone first (the definition's name, the names around it, and
the hunk's most telling line: all in one file, a name upstream changed left out); only those
files are parsed, and none when more are left than are tried. A definition with the same
qualified name wins over look-alikes under other names; among several, the one whose body is
nearest the base's (then git's rename partner); a close second is *ambiguous*, naming both. The base scope is then
merged against that scope alone (:class:`~patchkit.engine.diff.scopemerge.ScopeMerge`), so context
lines upstream changed inside it are merged, not refused, when the patch's own lines are
untouched.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence

from patchkit.engine.diff.fileview import FileView, squash
from patchkit.engine.diff.parse import split_lines
from patchkit.engine.diff.placement import Placer, Plan, base_at
from patchkit.engine.diff.relocate import retarget
from patchkit.engine.diff.result import FileResult, Job, file_result
from patchkit.engine.diff.scopemerge import ScopeMerge
from patchkit.engine.structure import Scope, same_language_patterns
from patchkit.outcome import ConflictDetail, Outcome, Placement, Step

_LOOKED_AT = 12  # candidate files parsed at most, per definition
_NEAR = 0.5  # a body at least this alike the base's is the same definition
_CLEAR = 0.1  # the best must beat the second by this much


@dataclasses.dataclass(frozen=True)
class Home:
    path: str
    content: bytes
    scope: Scope
    score: float


def gone_scopes(
    base: FileView, target: FileView | None, plans: Sequence[Plan]
) -> dict[Scope, list[Plan]]:
    """Each hunk's innermost definition at base, by definition, when every one of them is
    gone from ``target`` (by scope path); empty otherwise."""
    tree = base.tree
    if tree is None:
        return {}
    groups: dict[Scope, list[Plan]] = {}
    for plan in plans:
        if plan.base_at is None:
            return {}
        row = plan.base_at + plan.hunk.lead
        holding = [s for s in tree.scopes if s.named and s.holds(row)]
        if not holding:
            return {}
        scope = max(holding, key=lambda s: len(s.path))
        if target is not None and target.tree is not None and target.tree.find(scope.path):
            return {}
        groups.setdefault(scope, []).append(plan)
    return groups


def _needle(name: str) -> str:
    """Text a definition's first line holds: ``def apply(``, ``class Foo``, ``compute``."""
    if name.startswith("def "):
        return f"{name}("
    return name if name.startswith(("class ", "struct ", "namespace ")) else name.split("(")[0]


def _needles(scope: Scope, plans: Sequence[Plan]) -> list[str]:
    """Text every home of the definition holds: its name, the names of the scopes around it
    (dropped when upstream renamed them), the hunks' most telling old line."""
    needles = [_needle(scope.path[-1]), *(_needle(n) for n in reversed(scope.path[:-1]))]
    old = [line for p in plans for line in p.hunk.old if len(squash(line)) > 8]
    if old:
        needles.append(max(old, key=len).decode(errors="replace").strip())
    return needles


def _candidates(job: Job, needles: Sequence[str]) -> list[str]:
    """Files holding the needles (one that no file holds with the others is left out); none
    when more than ``_LOOKED_AT`` remain (never a pick among the first few)."""
    finder = job.finder
    assert finder is not None
    patterns = same_language_patterns(job.fp.old_path or job.fp.path)
    found = finder.files_with(needles[0], patterns)
    for needle in needles[1:]:
        holding = set(finder.files_with(needle, patterns))
        narrowed = [p for p in found if p in holding]
        found = narrowed or found
    return found if len(found) <= _LOOKED_AT else []


def find_homes(job: Job, base: FileView, scope: Scope, plans: Sequence[Plan]) -> list[Home]:
    """The definitions named like ``scope`` across the tree, nearest body first."""
    want = base.lines[scope.start : scope.end + 1]
    homes = []
    for path in _candidates(job, _needles(scope, plans)):
        content = job.read(path) if job.read else None
        view = FileView(path, split_lines(content)) if content is not None else None
        tree = view.tree if view is not None else None
        if view is None or tree is None or content is None:
            continue
        for there in tree.scopes:
            if there.named and there.path[-1] == scope.path[-1]:
                lines = view.lines[there.start : there.end + 1]
                score = difflib.SequenceMatcher(None, want, lines, autojunk=False).ratio()
                homes.append(Home(path, content, there, score))
    partner = job.finder.renamed(job.fp.old_path) if job.finder and job.fp.old_path else None
    return sorted(homes, key=lambda h: (-h.score, h.path != partner))


def _pick(scope: Scope, homes: list[Home]) -> list[Home]:
    """The home by qualified name when one alike enough has it (its twins elsewhere under
    other names do not count), else the nearest bodies."""
    named = [h for h in homes if h.scope.path == scope.path]
    return named if named else homes


def follow(
    job: Job, base: FileView, target: FileView | None, plans: Sequence[Plan]
) -> FileResult | None:
    """The hunks merged into the one file where their definitions went, or None when they are
    not all gone, not found, or not all in one file."""
    if job.finder is None or job.read is None:
        return None
    groups = gone_scopes(base, target, [dataclasses.replace(p) for p in plans])
    chosen: list[tuple[Scope, Home, list[Plan]]] = []
    for scope, group in groups.items():
        homes = _pick(scope, [h for h in find_homes(job, base, scope, group) if h.score >= _NEAR])
        if not homes:
            return None
        if len(homes) > 1 and homes[0].score - homes[1].score < _CLEAR:
            return _ambiguous(job, scope, homes[:2])
        chosen.append((scope, homes[0], group))
    if not chosen or len({home.path for _, home, _ in chosen}) != 1:
        return None
    return _merged(job, base, chosen)


def _merged(job: Job, base: FileView, chosen: list[tuple[Scope, Home, list[Plan]]]) -> FileResult:
    home = chosen[0][1]
    placer = Placer(FileView(home.path, split_lines(home.content)), base)
    labels = (home.path, f"base {(job.fp.old_blob or '')[:12]}", job.label)
    merger = ScopeMerge(placer, job.merge, labels, moved=True)
    for scope, there, group in sorted(chosen, key=lambda c: -c[1].scope.start):
        stop = merger.merge_into(scope, there.scope, group)
        if stop is not None:
            why = f"{stop.reasons[0][1]} (the definition moved to {home.path})"
            detail = ConflictDetail(job.fp.path, stop.reasons[0][0].header, why)
            return FileResult(Outcome.CONFLICT, Step.THREE_WAY, details=(detail,))
    out = list(placer.target.lines)
    for edit in sorted(merger.edits, key=lambda e: -e.start):
        out[edit.start : edit.end] = edit.lines
    fp = retarget(job.fp, home.path)
    plans = sorted((p for _, _, group in chosen for p in group), key=lambda p: p.base_at or 0)
    marks = tuple(_mark(home.path, plan, job.fp.path) for plan in plans)
    return file_result(fp, Outcome.CARRIED, Step.THREE_WAY, out, marks)


def _mark(path: str, plan: Plan, moved_from: str) -> Placement:
    line, scope = plan.merged_into if plan.merged_into is not None else (-1, ())
    return Placement(
        path, plan.hunk.header, plan.rule, line + 1 if line >= 0 else None, scope, moved_from
    )


def follow_file(job: Job) -> FileResult | None:
    """The diff's file is gone (or its rename partner does not hold the code): its hunks'
    definitions followed across the tree."""
    fp = job.fp
    content = job.blob(fp.old_blob) if fp.old_blob else None
    if content is None:
        return None
    base = FileView(fp.old_path or fp.path, split_lines(content))
    plans = [Plan(h, [], base_at=base_at(base, h)) for h in fp.hunks]
    return follow(job, base, None, plans)


def _ambiguous(job: Job, scope: Scope, homes: list[Home]) -> FileResult:
    where = "; ".join(f"{h.path}:{h.scope.start + 1} ({' > '.join(h.scope.path)})" for h in homes)
    why = f"{' > '.join(scope.path)} moved, and two definitions fit it alike: {where}"
    return FileResult(
        Outcome.AMBIGUOUS, Step.NONE, details=(ConflictDetail(job.fp.path, "moved", why),)
    )
