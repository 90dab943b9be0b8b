"""``patchkit import SOURCE... --target T --into SET``: the patches people already carry made
into a patch set. Per source: its form (told from content), its base (by blob ids, or by trying
releases, bounded), the outcome when carried to the lock, and the patch written with its
metadata and the original files beside it. Never writes to a target tree; never runs what it
imports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchkit.engine.diff.parse import FilePatch, parse_diff
from patchkit.errors import PatchkitError
from patchkit.gitrepo import GitRepo
from patchkit.importers import writer
from patchkit.importers.base import BaseFound, find_base, reader
from patchkit.importers.carry import Carried, carry, edit_files, remember, tested
from patchkit.importers.detect import read_source
from patchkit.importers.model import Candidate
from patchkit.importers.releases import Releases, from_index, from_repository
from patchkit.importers.rewrite_out import offer
from patchkit.model import LockEntry, SourceKind
from patchkit.outcome import Outcome, Step
from patchkit.project.load import Project
from patchkit.project.writer import ProjectWrites, project_writes
from patchkit.trust.gitargs import check_rev
from patchkit.trust.names import check_name


@dataclass(frozen=True)
class ImportedPatch:
    source: str  # the file or directory it came from
    form: str  # the form told from its content ("container-mod", "git-diff", ...)
    kind: str  # what was written: "diff", or "rewrite" (--as-rewrite)
    name: str  # the patch id written, or the name it would have had
    written: bool  # False: refused, or nothing left to import
    base: str | None  # the release or commit it applies at exactly; None when not found
    base_how: str  # how that was found (or what was tried)
    outcome: Outcome | None  # at the lock; None: refused (never carried there)
    step: Step
    message: str
    files: tuple[str, ...]
    untranslated: tuple[str, ...]  # steps of the source not turned into the patch
    diff: bytes  # what was written (at the lock; at the base when it does not apply there)
    tests: tuple[str, ...] = ()  # the source's self-checks made its tests (set test nodes)

    @property
    def refused(self) -> bool:
        """Not imported: the source holds nothing import can carry (``message`` says why)."""
        return self.outcome is None

    @property
    def shown(self) -> str:
        """The outcome as the report and JSON say it: its value, or ``refused``."""
        return "refused" if self.outcome is None else self.outcome.value


@dataclass(frozen=True)
class ImportReport:
    target: str
    lock: str  # "0.19.0 (2a69949bd)"
    set_name: str
    set_root: Path
    patches: tuple[ImportedPatch, ...]
    fetched: tuple[str, ...]  # releases fetched to find bases
    dry_run: bool = False  # nothing was written: "written" says what a real import would write

    @property
    def ok(self) -> bool:
        return all(p.outcome is not None and p.outcome.ok for p in self.patches)


def open_releases(entry: LockEntry) -> Releases:
    """The releases of ``entry``'s source that bases are looked for among."""
    if entry.source.kind is SourceKind.INDEX:
        return from_index(entry)
    if entry.source.kind is SourceKind.PATH and entry.source.path:
        return from_repository(GitRepo(Path(entry.source.path)), entry.commit, entry.version)
    from patchkit.upstream.sources import GitMirror

    mirror = GitMirror(entry.name, entry.source.url or entry.repository)
    mirror.ensure_commit(entry.commit)
    return from_repository(mirror.repo, entry.commit, entry.version)


def import_patches(
    *,
    project: Project,
    target: str,
    sources: Sequence[str],
    into: str,
    base: str | None = None,
    max_fetch: int = 2,
    as_rewrite: bool = False,
    releases: Releases | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import every patch in ``sources`` into set ``into`` (made if new) of ``project``; a
    patch the project already has (the same diff at the lock) is reported, not written again."""
    check_name(into, what="set", where="--into", hint="name the set, e.g. --into my-fixes")
    if base is not None:
        check_rev(base, where="--base")
    entry = project.entry(target)
    candidates = [c for s in sources for c in read_source(s, entry.name)]
    own = releases is None
    releases = releases or open_releases(entry)
    try:
        results = [_one(c, entry, releases, base, max_fetch, as_rewrite) for c in candidates]
    finally:
        if own:
            releases.repo.close()
    root = project.root / "patchsets" / into
    with project_writes(project.root, command="import") as writes:
        results = _named(project.root, _already(project.root, results))
        if not dry_run and any(r[3] is not None for r in results):
            root = writer.set_root(project.root, into, entry.name, writes)
            results = _write(root, entry, results, writes)
    lock = f"{entry.version} ({entry.commit})"
    patches = tuple(_report(c, found, carried, written) for c, found, carried, written in results)
    fetched = tuple(releases.fetched)
    return ImportReport(entry.name, lock, into, root, patches, fetched, dry_run)


_Result = tuple[Candidate, BaseFound | None, Carried | None, str | None]


def _one(
    candidate: Candidate,
    entry: LockEntry,
    releases: Releases,
    base: str | None,
    budget: int,
    as_rewrite: bool,
) -> _Result:
    if candidate.refused:
        return candidate, None, None, None
    try:
        patches = _parsed(candidate)
        found = find_base(releases, patches, candidate.edits, given=base, budget=budget)
        carried = carry(candidate, found.release, releases, entry.name)
        if as_rewrite and candidate.edits:
            carried = _as_rewrite(candidate, carried, releases, entry)
    except PatchkitError as exc:
        return replace(candidate, refused=exc.message), None, None, None
    kept = _name_if_kept(candidate, carried)
    if kept is not None:
        candidate = tested(candidate, carried, releases, found.release)
        remember(releases, carried)  # the next patch is made on top of this one
    return candidate, found, carried, kept


def _as_rewrite(
    candidate: Candidate, carried: Carried, releases: Releases, entry: LockEntry
) -> Carried:
    """The script as a rewrite anchored by scope, where it is simple (see ``rewrite_out``)."""
    if carried.outcome is not Outcome.APPLIED:
        return replace(carried, message=f"not offered as a rewrite: {carried.outcome.value}")
    read_lock = reader(releases, releases.lock.commit)
    changes, _ = edit_files(candidate.edits, read_lock)
    source, why = offer(candidate, read_lock, lock=entry.version, expected=changes)
    if not source:
        return replace(carried, message=f"kept as a diff, not offered as a rewrite: {why}")
    return replace(carried, rewrite=source, message="written as a rewrite anchored by scope")


def _parsed(candidate: Candidate) -> tuple[FilePatch, ...] | None:
    if candidate.diff is None:
        return None
    return parse_diff(candidate.diff, candidate.source)


def _name_if_kept(candidate: Candidate, carried: Carried) -> str | None:
    return candidate.name if (carried.at_lock or carried.at_base) else None


def _already(project: Path, results: list[_Result]) -> list[_Result]:
    """Results whose patch the project has already, byte for byte, marked so (not written)."""
    have = writer.existing_patches(project)
    out: list[_Result] = []
    for candidate, found, carried, name in results:
        content = (
            (carried.rewrite.encode() or carried.at_lock or carried.at_base) if carried else b""
        )
        if name is not None and content in have and carried is not None:
            note = f"already imported as {have[content]}; nothing written"
            carried = replace(carried, message=note)
            candidate, name = replace(candidate, name=have[content]), None
        out.append((candidate, found, carried, name))
    return out


def _named(project: Path, results: list[_Result]) -> list[_Result]:
    """Each patch to write with the id it gets in the set (a dry run names it the same)."""
    taken = writer.taken_ids(project)
    out: list[_Result] = []
    for candidate, found, carried, name in results:
        if name is not None:
            name = writer.free_id(name, taken)
            candidate = replace(candidate, name=name)
        out.append((candidate, found, carried, name))
    return out


def _write(
    root: Path, entry: LockEntry, results: list[_Result], writes: ProjectWrites
) -> list[_Result]:
    out: list[_Result] = []
    ids = []
    for candidate, found, carried, name in results:
        if name is None or carried is None or found is None:
            out.append((candidate, found, carried, None))
            continue
        patch_id = name  # free in the project: see _named
        writer.write(root, _entry(patch_id, entry, candidate, found, carried), writes)
        ids.append(patch_id)
        out.append((candidate, found, carried, patch_id))
    writer.append_series(root, ids, writes)
    return out


def _entry(
    patch_id: str, entry: LockEntry, candidate: Candidate, found: BaseFound, carried: Carried
) -> writer.Entry:
    outcome = carried.outcome
    merged = outcome is Outcome.UPSTREAMED
    imported = {
        "form": candidate.form.value,
        "source": candidate.source.name,  # no local path goes into a shared set or upstream
        "base": found.release.label if found.release else "",
        "base_commit": found.release.commit if found.release else "",
        "base_how": found.how,
        "outcome": outcome.value,
    }
    if candidate.untranslated:
        imported["untranslated"] = "\n".join(candidate.untranslated)
    pending = ""
    if not outcome.ok:
        pending = f"{outcome.value} at {entry.version} on import: {carried.message}".strip(": ")
    return writer.Entry(
        patch_id=patch_id,
        target=entry.name,
        diff=carried.at_lock or carried.at_base,
        meta=candidate.meta,
        imported=imported,
        origin=candidate.origin,
        status="merged" if merged else "local",
        merged_in=entry.version if merged else "",
        pending=pending,
        rewrite=carried.rewrite,
        files=candidate.paths,
        checks=candidate.checks,
    )


def _report(
    candidate: Candidate, found: BaseFound | None, carried: Carried | None, written: str | None
) -> ImportedPatch:
    if carried is None or found is None:
        return ImportedPatch(
            str(candidate.source),
            candidate.form.value,
            "diff",
            candidate.name,
            False,
            None,
            "",
            None,
            Step.NONE,
            candidate.refused,
            (),
            candidate.untranslated,
            b"",
        )
    diff = carried.at_lock or carried.at_base
    message = carried.message or "; ".join(
        f"{d.path} {d.hunk}: {d.reason}" for d in carried.details
    )
    return ImportedPatch(
        str(candidate.source),
        candidate.form.value,
        "rewrite" if carried.rewrite else "diff",
        written or candidate.name,
        written is not None,
        found.release.label if found.release else None,
        found.how,
        carried.outcome,
        carried.step,
        message,
        _files(diff or candidate.diff, candidate),
        candidate.untranslated,
        diff,
        (writer.test_node(written or candidate.name),) if candidate.checks else (),
    )


def _files(diff: bytes | None, candidate: Candidate) -> tuple[str, ...]:
    if not diff:
        return candidate.paths
    return tuple(p for fp in parse_diff(diff, candidate.source) for p in fp.paths)
