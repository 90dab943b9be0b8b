"""Following code that moved: a file renamed between the base and the target commit, or the
patched scope (a function, a class) gone from its file and found in another one.

A :class:`~patchkit.engine.diff.result.Finder` (a job's) answers two questions about the target
tree (``ops.port`` asks git); the hunks are then placed in the new file by the same evidence as
anywhere else, and each placement names the path the diff was made for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.parse import FilePatch, split_lines
from patchkit.engine.diff.placement import Placer, Plan, base_at
from patchkit.engine.diff.result import FileResult, Finder, Job
from patchkit.engine.structure import same_language_patterns
from patchkit.outcome import ConflictDetail, Outcome, Step

Apply = Callable[[Job, bytes], FileResult]

Reader = Callable[[str], bytes | None]
_LOOKED_AT = 12  # candidate files tried at most, per scope


def retarget(fp: FilePatch, path: str) -> FilePatch:
    """The same hunks, for a file that now lives at ``path``."""
    return dataclasses.replace(fp, old_path=path, new_path=path)


def scope_headers(fp: FilePatch, base: bytes, plans: Sequence[Plan]) -> list[str]:
    """The first line of each scope the hunks change at base (``def compute(a, b):``)."""
    view = FileView(fp.old_path or fp.path, split_lines(base))
    tree = view.tree
    headers: list[str] = []
    for plan in plans:
        if tree is None or plan.base_at is None:
            continue
        path = view.hunk_scope(plan.hunk, plan.base_at)
        row = plan.base_at + plan.hunk.lead
        scope = next((s for s in tree.find(path) if s.holds(row)), None) if path else None
        if scope is not None:
            header = view.lines[scope.start].decode(errors="replace").strip()
            if header and header not in headers:
                headers.append(header)
    return headers


def candidate_files(finder: Finder, fp: FilePatch, headers: Sequence[str]) -> list[str]:
    """Files other than the diff's own that hold every scope header, same language first."""
    if not headers:
        return []
    patterns = same_language_patterns(fp.old_path or fp.path)
    found: list[str] | None = None
    for header in headers:
        paths = finder.files_with(header, patterns)
        found = paths if found is None else [p for p in found if p in paths]
    own = {fp.old_path, fp.new_path}
    found = [p for p in (found or []) if p not in own]
    # more files than are tried: a generic header (``def apply(``) says nothing; never a pick
    # among the first few (the definition is followed by its name and body instead)
    return found if len(found) <= _LOOKED_AT else []


def scopes_gone(placer: Placer) -> bool:
    """Every hunk's base scope is missing from the target file (the code moved away)."""
    base, tree = placer.base, placer.target.tree
    if base is None or tree is None:
        return False
    for plan in placer.plans:
        scope = base.hunk_scope(plan.hunk, plan.base_at) if plan.base_at is not None else ()
        if not scope or tree.find(scope):
            return False
    return True


def moved_file(job: Job, apply: Apply) -> FileResult | None:
    """The diff's file is gone: renamed (git's rename detection between base and target), or
    its scopes now live in another file."""
    fp, finder, read = job.fp, job.finder, job.read
    if finder is None or read is None or fp.old_path is None:
        return None
    new = finder.renamed(fp.old_path)
    content = read(new) if new else None
    if new and content is not None:
        moved = dataclasses.replace(job, fp=retarget(fp, new), finder=None)
        there = _as_moved(apply(moved, content), fp.old_path)
        if there.outcome.carried:  # the rename partner, only when the code is there
            return there
        return elsewhere(job, apply) or there
    return elsewhere(job, apply)


def elsewhere(job: Job, apply: Apply) -> FileResult | None:
    """The scopes the hunks change at base, searched across the tree: the one other file
    where all of them place well takes the change."""
    fp, finder, read = job.fp, job.finder, job.read
    base = job.blob(fp.old_blob) if fp.old_blob else None
    if finder is None or read is None or base is None:
        return None
    view = FileView(fp.path, split_lines(base))
    plans = [Plan(h, [], base_at=base_at(view, h)) for h in fp.hunks]
    found = []
    for path in candidate_files(finder, fp, scope_headers(fp, base, plans)):
        content = read(path)
        if content is None:
            continue
        there = apply(dataclasses.replace(job, fp=retarget(fp, path), finder=None), content)
        if there.outcome.carried:
            found.append((path, there))
    if len(found) != 1:
        return _many_homes(fp, [p for p, _ in found]) if found else None
    return _as_moved(found[0][1], fp.path)


def _many_homes(fp: FilePatch, paths: list[str]) -> FileResult:
    why = f"the code it changes moved, and fits {len(paths)} files: {', '.join(paths)}"
    detail = ConflictDetail(fp.path, "moved", why)
    return FileResult(Outcome.AMBIGUOUS, Step.NONE, details=(detail,))


def _as_moved(result: FileResult, old_path: str) -> FileResult:
    marks = tuple(dataclasses.replace(m, moved_from=old_path) for m in result.placements)
    return dataclasses.replace(result, placements=marks)
