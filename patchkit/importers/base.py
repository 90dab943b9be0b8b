"""Finding the base of an imported patch: the release (or commit) where it applies exactly.

A diff with ``index`` lines names the blobs it was made against, in full or abbreviated: every
local release is checked by blob id (``git ls-tree``, no file read) and the match nearest the
lock wins. Without index lines, or for a replace script, releases are tried in order of
distance from the lock (the lock first): a diff applies exactly when every hunk's old lines sit
at the line it names; a script when every text it replaces is there. When nothing local
matches, up to ``budget`` releases are fetched from the source and tried. Every try is
reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from patchkit.engine.diff.parse import FilePatch, split_lines
from patchkit.importers.edits import redo
from patchkit.importers.model import FileEdits
from patchkit.importers.releases import Release, Releases

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class BaseFound:
    release: Release | None  # None: no release tried holds the patch's base
    how: str  # for people: "index lines match 1.1 of v1.0, v1.1, v1.2"
    tried: tuple[str, ...]
    fetched: tuple[str, ...]


def reader(releases: Releases, commit: str) -> Reader:
    """Files of ``commit``, read once each, as the patches imported before left them."""
    seen: dict[str, bytes | None] = dict(releases.earlier.get(commit, {}))

    def read(path: str) -> bytes | None:
        if path not in seen:
            seen[path] = releases.repo.read_file(commit, path)
        return seen[path]

    return read


def _has_ids(patches: Sequence[FilePatch]) -> bool:
    return any(fp.old_blob for fp in patches if fp.old_path)


def _ids_match(patches: Sequence[FilePatch], releases: Releases, commit: str) -> bool:
    paths = [fp.old_path or fp.path for fp in patches]
    tree = releases.repo.ls_tree(commit, paths)
    for fp in patches:
        found = tree.get(fp.old_path or "")
        if fp.old_path is None:
            if fp.path in tree:
                return False
        elif found is None or (fp.old_blob and not found[1].startswith(fp.old_blob)):
            return False
    return True


def diff_applies_exactly(patches: Sequence[FilePatch], read: Reader) -> bool:
    """Every hunk's old lines at exactly the line its header names (no offset, no fuzz)."""
    for fp in patches:
        content = read(fp.old_path) if fp.old_path else read(fp.path)
        if (content is None) != (fp.old_path is None):
            return False
        lines = split_lines(content or b"")
        for hunk in fp.hunks:
            start = max(hunk.old_start - 1, 0)
            if [x.rstrip(b"\r\n") for x in lines[start : start + len(hunk.old)]] != [
                x.rstrip(b"\r\n") for x in hunk.old
            ]:
                return False
    return True


def edits_apply(edits: Sequence[FileEdits], read: Reader) -> bool:
    """Every text a script replaces (or asserts) is in its file."""
    for fe in edits:
        content = read(fe.path)
        if content is None and fe.content is None:
            return False
        if redo(fe, content)[1]:
            return False
    return True


Matcher = Callable[[Release], bool]


def matcher(
    releases: Releases, patches: Sequence[FilePatch] | None, edits: Sequence[FileEdits]
) -> tuple[Matcher, str]:
    """How a release is tested for being the base, and that test's name for the report."""
    if patches is not None and _has_ids(patches):
        return (lambda r: _ids_match(patches, releases, r.commit)), "index lines match"
    if patches is not None:
        return (
            lambda r: diff_applies_exactly(patches, reader(releases, r.commit))
        ), "applies exactly at"
    return (lambda r: edits_apply(edits, reader(releases, r.commit))), "every replaced text is in"


def find_base(
    releases: Releases,
    patches: Sequence[FilePatch] | None,
    edits: Sequence[FileEdits] = (),
    *,
    given: str | None = None,
    budget: int = 2,
) -> BaseFound:
    match, test = matcher(releases, patches, edits)
    if given:
        release = releases.resolve(given)
        ok = match(release)
        how = f"given (--base {given})" + ("" if ok else f"; but it fails '{test}' there")
        return BaseFound(release, how, (release.label,), tuple(releases.fetched))
    every = test == "index lines match"  # cheap: check all, report the ambiguity
    tried, matches = [], []
    for release in releases.in_order():
        tried.append(release.label)
        if match(release):
            matches.append(release)
            if not every:
                break
    if not matches and budget > 0:
        for version in releases.unfetched()[:budget]:
            release = releases.fetch(version)
            tried.append(version)
            if match(release):
                matches.append(release)
                break
    return _found(releases, test, tried, matches, budget)


def _found(
    releases: Releases, test: str, tried: list[str], matches: list[Release], budget: int
) -> BaseFound:
    where = ", ".join(tried)
    fetched = tuple(releases.fetched)
    fetch_note = f"; fetched {', '.join(fetched)}" if fetched else ""
    if not matches:
        limit = f"; fetch budget {budget} spent" if releases.remote and budget else ""
        return BaseFound(
            None, f"not found: {test} none of {where}{fetch_note}{limit}", tuple(tried), fetched
        )
    chosen = matches[0]
    also = [m.label for m in matches[1:]]
    more = f" (also {', '.join(also)}; the nearest the lock taken)" if also else ""
    lock = " (the lock)" if chosen.commit == releases.lock.commit else ""
    how = f"{test} {chosen.label}{lock}{more}; tried {where}{fetch_note}"
    return BaseFound(chosen, how, tuple(tried), fetched)
