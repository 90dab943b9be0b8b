"""Applying a diff patch to file contents, never with fuzz.

For each file the chain is:

1. **exact** — the file is the very blob the diff was made against: hunks go at their line
   numbers, and the result must be the blob its ``index`` line names.
2. **placement by evidence** (:mod:`patchkit.engine.diff.placement`) — the file differs: each hunk's
   context gives candidate places, narrowed by hunk order, file ends, scope paths, the lines
   around it at base and its neighbours' offsets; ``ambiguous`` when that cannot decide. A hunk
   whose new lines are already there is already upstream (also when only whitespace differs).
3. **three-way** (:mod:`patchkit.engine.diff.scopemerge`) — a hunk's context is gone: merged from the base
   blob scope by scope (or the whole file, scope-checked); conflicts stop the patch with
   labelled markers for a person; the last ways leave out change blocks upstream already made
   (:mod:`patchkit.engine.diff.present`) and merge lines one side only respaced
   (:mod:`patchkit.engine.diff.respace`).

Each hunk's :class:`~patchkit.outcome.Placement` says where it went and by which rule.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.follow import follow, follow_file
from patchkit.engine.diff.lastpass import by_statements, last_pass
from patchkit.engine.diff.listend import place_at_list_end
from patchkit.engine.diff.onesided import place_one_sided
from patchkit.engine.diff.paragraph import place_in_paragraph
from patchkit.engine.diff.parse import FilePatch, Hunk, split_lines
from patchkit.engine.diff.placement import Placer, Plan, PlanState, overlapping, place, replacement
from patchkit.engine.diff.present import carried_rest
from patchkit.engine.diff.relocate import elsewhere, moved_file, scopes_gone
from patchkit.engine.diff.respace import by_keys
from patchkit.engine.diff.result import (
    BlobReader,
    FileResult,
    Finder,
    Job,
    Merger,
    Reader,
    corrupt,
    detail,
    file_result,
    no_base,
    stopped,
)
from patchkit.engine.diff.resultcheck import checked
from patchkit.engine.diff.scopemerge import Edit, ScopeMerge, Stop, apply_at_base, misplaced
from patchkit.engine.diff.spanning import merged_by_parts
from patchkit.engine.diff.wholefile import deleted_file, new_file
from patchkit.gitrepo import blob_id
from patchkit.outcome import FileChange, Outcome, Placement, Rule, Step


def apply_file(
    fp: FilePatch,
    read: Reader,
    blob: BlobReader,
    merge: Merger,
    label: str,
    *,
    explain: bool = False,
    finder: Finder | None = None,
) -> FileResult:
    """Apply one file's part of a diff to the file as ``read`` returns it; with a ``finder``,
    follow the code to where it moved. A result is written only when it passes the structural
    check (:mod:`patchkit.engine.diff.resultcheck`)."""
    result = _apply_file(fp, read, blob, merge, label, explain=explain, finder=finder)
    return checked(fp, result, read, blob)


def _apply_file(
    fp: FilePatch,
    read: Reader,
    blob: BlobReader,
    merge: Merger,
    label: str,
    *,
    explain: bool = False,
    finder: Finder | None = None,
) -> FileResult:
    path = fp.path
    if fp.binary:
        return stopped(Outcome.FAILED, path, "binary", "binary changes are not applied by patchkit")
    current = read(fp.old_path) if fp.old_path else read(path)
    if fp.old_path is None:
        return new_file(fp, current)
    job = Job(fp, blob, merge, label, explain, finder, read)
    if current is None:
        moved = moved_file(job, apply_content)
        if moved is None or not moved.outcome.carried:  # the definitions, not the file
            moved = follow_file(job) or moved
        why = f"{fp.old_path} does not exist in the tree"
        return moved or stopped(Outcome.GONE, path, "file", why)
    if fp.new_path is None:
        return deleted_file(fp, current)
    if fp.new_path != fp.old_path and read(fp.new_path) is not None:
        why = f"the patch renames {fp.old_path} to {fp.new_path}, but {fp.new_path} already exists"
        return stopped(Outcome.CONFLICT, path, "rename", why)
    return apply_content(job, current)


def apply_content(job: Job, current: bytes) -> FileResult:
    """The hunks of ``job`` on ``current`` (the file's content, wherever it now lives)."""
    fp = job.fp
    lines = split_lines(current)
    if not fp.hunks:  # a pure rename or mode change
        return file_result(fp, Outcome.APPLIED, Step.EXACT, lines)
    sha = blob_id(current)
    if fp.new_blob and fp.new_blob != fp.old_blob and sha.startswith(fp.new_blob):
        target = FileView(fp.path, lines)
        if all(target.find(h.new) for h in fp.hunks):  # the content agrees with the index
            marks = tuple(_mark(fp.path, h, Rule.UPSTREAM) for h in fp.hunks)
            return file_result(fp, Outcome.UPSTREAMED, Step.PROBE, lines, marks)
    if fp.old_blob and sha.startswith(fp.old_blob):
        return _exact(fp, lines, job.explain)
    return _placed(job, lines)


def _mark(path: str, hunk: Hunk, rule: Rule, line: int | None = None) -> Placement:
    return Placement(path, hunk.header, rule, line)


def _exact(fp: FilePatch, lines: list[bytes], explain: bool = False) -> FileResult:
    """The file is the diff's base blob: hunks at their own line numbers, and the result
    must be the blob the ``index`` line names."""
    spans = []
    for hunk in fp.hunks:
        start = max(hunk.old_start - 1, 0) if hunk.old else hunk.old_start
        spans.append((start, start + len(hunk.old), hunk.new))
        if lines[start : start + len(hunk.old)] != list(hunk.old):
            return corrupt(
                fp, f"hunk {hunk.header}: its old lines are not at line {hunk.old_start}"
            )
    spans.sort(key=lambda span: span[0])
    if any(a[1] > b[0] for a, b in itertools.pairwise(spans)):
        return corrupt(fp, "two of its hunks claim the same lines")
    out = splice(lines, spans)
    content = b"".join(out)
    written = blob_id(content)
    if fp.new_blob and not written.startswith(fp.new_blob):
        return corrupt(
            fp,
            f"its hunks make blob {written[:12]}, not {fp.new_blob[:12]} as its index line "
            "says (a hunk lost or edited by hand)",
        )
    view = FileView(fp.path, lines) if explain else None
    marks = tuple(
        Placement(
            fp.path,
            h.header,
            Rule.EXACT,
            h.old_start,
            view.hunk_scope(h, max(h.old_start - 1, 0)) if view else (),
        )
        for h in fp.hunks
    )
    return file_result(fp, Outcome.APPLIED, Step.EXACT, out, marks, content)


def splice(
    lines: Sequence[bytes], spans: Sequence[tuple[int, int, Sequence[bytes]]]
) -> list[bytes]:
    """``lines`` with each ``(start, end, replacement)`` span replaced, in one pass (the spans
    in order, none overlapping): a file of many hunks costs its length once, not per hunk."""
    out: list[bytes] = []
    cursor = 0
    for start, end, new_lines in spans:
        out += lines[cursor:start]
        out += new_lines
        cursor = end
    out += lines[cursor:]
    return out


def _placed(job: Job, lines: list[bytes]) -> FileResult:
    fp = job.fp
    base_content = job.blob(fp.old_blob) if fp.old_blob else None
    base = FileView(fp.path, split_lines(base_content)) if base_content is not None else None
    placer = Placer(FileView(fp.path, lines), base)
    plans = place(placer, fp.hunks)
    if any(p.state == PlanState.AMBIGUOUS for p in plans):
        return _ambiguous(placer, job)
    applying = [p for p in plans if p.state == PlanState.APPLY]
    if overlapping(applying):  # two hunks found the same lines: only a merge can tell
        for plan in applying:
            plan.state, plan.spots = PlanState.MISSING, []
    missing = [p for p in plans if p.state == PlanState.MISSING]
    if not missing:
        edits = [Edit(p.at, p.end, replacement(p, lines[p.at : p.end]), (p,)) for p in applying]
        return _finish(job, placer, edits, Step.EXACT)
    if base is None:
        return no_base(fp, [p.hunk for p in missing])
    if len(missing) == len(plans) and scopes_gone(placer):
        moved = elsewhere(job, apply_content) or follow(job, base, placer.target, plans)
        if moved is not None:
            return moved
    saved = [dataclasses.replace(p) for p in plans]  # as placed, before a merge changes them
    merged = _merged(job, placer, missing)
    if merged.outcome is Outcome.CONFLICT:
        again, parts = ([dataclasses.replace(p) for p in saved] for _ in range(2))
        return (
            _one_sided(job, placer, saved)
            or _by_parts(job, placer, parts)
            or follow(job, base, placer.target, again)
            or last_pass(job, placer, _merged)
            or carried_rest(job, placer, _merged)
            or by_keys(job, placer, _merged)
            or merged
        )
    return merged


def _by_parts(job: Job, placer: Placer, plans: list[Plan]) -> FileResult | None:
    """The merge conflicted: a hunk spanning several scopes merged part by part, each in
    its own scope (:mod:`patchkit.engine.diff.spanning`), or None (the conflict stands)."""
    edits = merged_by_parts(placer, plans, job.merge, _labels(job))
    return _finish(job, placer, edits, Step.THREE_WAY) if edits is not None else None


def _labels(job: Job) -> tuple[str, str, str]:
    return ("tree", f"base {(job.fp.old_blob or '')[:12]}", job.label)


def _one_sided(job: Job, placer: Placer, saved: list[Plan]) -> FileResult | None:
    """The merge conflicted: each missing hunk placed by the lines it changes and the one
    side of its context upstream left intact, or None (the conflict stands)."""
    placer.plans = saved
    rules = (place_one_sided, place_in_paragraph, place_at_list_end)
    for plan in saved:
        if plan.state != PlanState.MISSING:
            continue
        if not any(rule(placer, plan) for rule in rules):
            return None
    applying = [p for p in placer.plans if p.state == PlanState.APPLY]
    if overlapping(applying):
        return None
    lines = placer.target.lines
    edits = [Edit(p.at, p.end, replacement(p, lines[p.at : p.end]), (p,)) for p in applying]
    return _finish(job, placer, edits, Step.EXACT)


def _merged(job: Job, placer: Placer, missing: list[Plan]) -> FileResult:
    labels = _labels(job)
    scoped = ScopeMerge(placer, job.merge, labels)
    stop = scoped.run(missing)
    if stop is not None:
        return _from_stop(job, placer, stop)
    if scoped.leftover:
        return _whole_file(job, placer, labels)
    folded = {id(p) for e in scoped.edits for p in e.plans}
    edits = list(scoped.edits)
    for plan in placer.plans:
        if plan.state == PlanState.APPLY and id(plan) not in folded:
            lines = placer.target.lines[plan.at : plan.end]
            edits.append(Edit(plan.at, plan.end, replacement(plan, lines), (plan,)))
    return _finish(job, placer, edits, Step.THREE_WAY)


def _finish(job: Job, placer: Placer, edits: list[Edit], step: Step) -> FileResult:
    """Write the edits (all on the target's own line numbers), check each hunk's added lines
    are where it was put, and name the outcome."""
    edits.sort(key=lambda e: e.start)
    if any(a.end > b.start for a, b in itertools.pairwise(edits)):
        hunk = edits[0].plans[0].hunk
        return FileResult(
            Outcome.CONFLICT,
            Step.NONE,
            details=(detail(job.fp.path, hunk, "two hunks claim the same lines"),),
        )
    out = splice(placer.target.lines, [(e.start, e.end, e.lines) for e in edits])
    lost = [p for e in edits for p in e.plans if not _holds_added(e.lines, p.hunk)]
    if lost:
        why = "its added lines are not in the result at the place chosen; nothing is written"
        return FileResult(
            Outcome.FAILED, step, details=tuple(detail(job.fp.path, p.hunk, why) for p in lost)
        )
    states = {p.state for p in placer.plans}
    marks = _placements(job, placer)
    if states == {PlanState.PRESENT}:
        return file_result(job.fp, Outcome.UPSTREAMED, Step.PROBE, out, marks)
    outcome = Outcome.PARTLY_UPSTREAMED if PlanState.PRESENT in states else Outcome.CARRIED
    return file_result(job.fp, outcome, step, out, marks)


def _runs(hunk: Hunk) -> list[list[bytes]]:
    """The hunk's added lines, in runs of consecutive ones."""
    runs: list[list[bytes]] = []
    for kind, group in itertools.groupby(hunk.ops, key=lambda op: op[0]):
        if kind == "+":
            runs.append([text for _, text in group])
    return runs


def _holds_added(lines: Sequence[bytes], hunk: Hunk) -> bool:
    view = FileView("", lines)
    return all(view.find(run) or view.find_loose(run) for run in _runs(hunk))


def _whole_file(job: Job, placer: Placer, labels: tuple[str, str, str]) -> FileResult:
    fp, base, target = job.fp, placer.base, placer.target
    assert base is not None
    theirs = apply_at_base(base.lines, [p for p in placer.plans if p.base_at is not None])
    current = b"".join(target.lines)
    merged = by_statements(job.merge, fp.path, current, base.lines, theirs, labels)
    missing = [p for p in placer.plans if p.state == PlanState.MISSING]
    if merged.conflicts:
        why = "three-way merge conflict with an upstream change"
        details = tuple(detail(fp.path, p.hunk, why, current) for p in missing)
        conflicted = FileChange(fp.path, merged.content)
        return FileResult(Outcome.CONFLICT, Step.THREE_WAY, details=details, conflicted=conflicted)
    out = split_lines(merged.content)
    wrong = misplaced(placer, out)
    if wrong:
        scope, line = wrong[0]
        why = (
            f"a three-way merge would change line {line} in {' > '.join(scope) or 'the top level'}, "
            "outside every scope the patch changes at base; refusing it"
        )
        return FileResult(
            Outcome.CONFLICT,
            Step.THREE_WAY,
            details=tuple(detail(fp.path, p.hunk, why) for p in missing),
        )
    lost = [
        p for p in placer.plans if p.state != PlanState.PRESENT and not _holds_added(out, p.hunk)
    ]
    if lost:
        why = "the three-way merge dropped its added lines; nothing is written"
        return FileResult(
            Outcome.FAILED,
            Step.THREE_WAY,
            details=tuple(detail(fp.path, p.hunk, why) for p in lost),
        )
    for plan in missing:
        plan.rule, plan.state = Rule.THREE_WAY, PlanState.MERGED
    present = any(p.state == PlanState.PRESENT for p in placer.plans)
    outcome = Outcome.PARTLY_UPSTREAMED if present else Outcome.CARRIED
    return file_result(fp, outcome, Step.THREE_WAY, out, _placements(job, placer))


def _placements(job: Job, placer: Placer) -> tuple[Placement, ...]:
    target, note = placer.target, placer.structure_note()
    parsed = job.explain or "tree" in vars(target)
    marks = []
    for plan in placer.plans:
        at = plan.spots[0] if len(plan.spots) == 1 else -1
        scope = target.hunk_scope(plan.hunk, at) if parsed and at >= 0 else ()
        if plan.state == PlanState.MERGED and at < 0 and placer.base and plan.base_at is not None:
            scope = placer.base.hunk_scope(plan.hunk, plan.base_at) if parsed else ()
        line = at + 1 if at >= 0 else None
        if plan.merged_into is not None:
            line, scope = plan.merged_into[0] + 1, plan.merged_into[1]
        text = "; ".join(n for n in (plan.note, note) if n)
        marks.append(
            Placement(
                job.fp.path, plan.hunk.header, plan.rule, line, scope, plan.moved_from, note=text
            )
        )
    return tuple(marks)


def _ambiguous(placer: Placer, job: Job) -> FileResult:
    details, marks = [], []
    for plan in placer.plans:
        if plan.state != PlanState.AMBIGUOUS:
            continue
        found = placer.candidates(plan)
        where = "; ".join(f"line {c.line} ({' > '.join(c.scope) or 'top level'})" for c in found)
        why = f"its context matches {len(found)} places the evidence cannot tell apart: {where}"
        details.append(detail(job.fp.path, plan.hunk, why))
        marks.append(Placement(job.fp.path, plan.hunk.header, Rule.NONE, candidates=tuple(found)))
    return FileResult(Outcome.AMBIGUOUS, Step.NONE, details=tuple(details), placements=tuple(marks))


def _from_stop(job: Job, placer: Placer, stop: Stop) -> FileResult:
    details = tuple(detail(job.fp.path, hunk, why, ours) for hunk, why, ours in stop.reasons)
    marks = tuple(
        Placement(job.fp.path, hunk.header, Rule.NONE, candidates=stop.candidates)
        for hunk, _, _ in stop.reasons
    )
    if stop.kind == "ambiguous":
        return FileResult(Outcome.AMBIGUOUS, Step.NONE, details=details, placements=marks)
    conflicted = FileChange(job.fp.path, stop.conflicted) if stop.conflicted is not None else None
    return FileResult(
        Outcome.CONFLICT, Step.THREE_WAY, details=details, conflicted=conflicted, placements=marks
    )
