"""``patchkit watch``: notice upstream versions newer than the lock and rebase onto the newest
on a branch of the patch repository, for a scheduled job.

One run: find the versions after the lock (:mod:`patchkit.watch.newer`); if there are none, say
"up to date". Otherwise compute their matrix rows (cells reused), rebase onto the newest in a
worktree of the patch repository made from its checked-out commit (absorbed patches retired,
the rest carried, broken ones kept pending), verify what moved, commit that as watch's own
commit on ``watch/<target>-<version>`` (never the default branch), and write the report. With
``push``/``open_pr`` the branch, one pull request per upstream version and, when a patch broke,
an issue go out. The same inputs give the same commit, so a second run changes nothing; a
branch a person edited is left alone.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import ConfigError
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.matrix.page import render_html as matrix_page
from patchkit.model import LockEntry, PatchMeta, PrState, SourceKind
from patchkit.ops.matrix import matrix
from patchkit.ops.rebase import rebase
from patchkit.ops.retire import retire
from patchkit.ops.upstream_check import check_patch
from patchkit.ops.verify_ray import verify_on_ray
from patchkit.outcome import Outcome
from patchkit.project.load import Project, load_project
from patchkit.rebasing.report import PatchRebase, RebaseReport
from patchkit.upstream.github import Gh
from patchkit.upstream.history import History, Point, open_history
from patchkit.upstream.sources import GitMirror
from patchkit.watch import branch as branches
from patchkit.watch.newer import LATEST, newer_points
from patchkit.watch.publish import Published, issue, pull_request, push
from patchkit.watch.report import (
    BrokenHunk,
    Fate,
    PatchLine,
    WatchSummary,
    render_markdown,
    write_report,
)

_FATES = {
    Outcome.UPSTREAMED: Fate.ABSORBED,
    Outcome.APPLIED: Fate.CARRIED,
    Outcome.CARRIED: Fate.CARRIED,
    Outcome.PARTLY_UPSTREAMED: Fate.CARRIED,
}


@dataclass(frozen=True)
class WatchResult:
    target: str
    lock_version: str
    summary: WatchSummary | None = None  # None: the lock is the newest upstream version
    report: Path | None = None  # report.md, when a report directory was given
    commit: str | None = None  # the branch's commit (None when left alone)
    pushed: bool = False
    published: tuple[Published, ...] = ()

    @property
    def up_to_date(self) -> bool:
        return self.summary is None


@dataclass(frozen=True)
class Options:
    """What a watch run does beyond the rebase on a local branch."""

    onto: str = LATEST
    branch: str | None = None
    report_dir: Path | None = None
    remote: str | None = None  # push the branch there
    open_pr: bool = False  # a pull request per version, an issue when a patch broke
    verify: bool = True
    python: str = sys.executable
    ray: str | None = None  # run the moved patches' tests as Ray tasks there instead


def watch(
    *,
    project: Project,
    target: str,
    options: Options = Options(),
    gh: Gh | None = None,
    history: History | None = None,
) -> WatchResult:
    """One watch run for ``target`` (see the module's text). ``gh`` is needed with
    ``open_pr``; ``history`` is upstream's (built from the lock when None)."""
    entry = project.entry(target)
    if options.open_pr and gh is None:
        raise ConfigError("watch --open-pr needs the GitHub CLI", hint="install and log in gh")
    hist = history or _history(entry)
    try:
        points = newer_points(hist, options.onto)
        if not points:
            return WatchResult(target, entry.version)
        return _watch(project, entry, hist, points, options, gh)
    finally:
        if history is None:
            hist.close()


def _history(entry: LockEntry) -> History:
    """Upstream's history, a git source fetched first so that new tags are seen."""
    if entry.source.kind is SourceKind.GIT:
        GitMirror(entry.name, entry.source.url or entry.repository).refresh()
    return open_history(entry)


def _watch(
    project: Project,
    entry: LockEntry,
    hist: History,
    points: Sequence[Point],
    options: Options,
    gh: Gh | None,
) -> WatchResult:
    if not is_repo(project.root):
        raise ConfigError(
            f"watch keeps its work on a branch, but {project.root} is not a git repository",
            hint="run it in the repository that holds upstream.lock and patchsets/",
        )
    end, label = points[-1], hist.version(points[-1])
    with GitRepo(project.root) as repo:
        name = options.branch or branches.default_name(entry.name, label)
        branches.check_name(repo, name, branches.default_branch(repo))
        base = repo.head() or ""
        local = repo.resolve(f"refs/heads/{name}")  # moved only if it is still there after
        before = branches.existing(repo, name, options.remote)
        if before.state is branches.BranchState.EDITED:
            return _left_alone(entry, hist, points, name, options)
        lines, new, commit_id = _rebase_on_branch(
            repo, project, entry, hist, end, base, options, gh
        )
        state = "unchanged" if before.tip == new else before.state.value
        if local != new:  # also a branch only on the remote: made here, at the same commit
            branches.move(repo, name, new, local)
        summary = WatchSummary(
            entry.name, entry.version, label, commit_id,
            tuple(hist.version(p) for p in points), name,
            "created" if state == "new" else state, tuple(lines),
        )  # fmt: skip
        return _finish(repo, project, hist, summary, new, before.tip, options, gh)


def _left_alone(
    entry: LockEntry, hist: History, points: Sequence[Point], name: str, options: Options
) -> WatchResult:
    newer = tuple(hist.version(p) for p in points)
    state = "left alone: a person changed it since watch wrote it"
    summary = WatchSummary(entry.name, entry.version, newer[-1], "", newer, name, state, ())
    report = write_report(options.report_dir, summary, None) if options.report_dir else None
    return WatchResult(entry.name, entry.version, summary, report)


def _rebase_on_branch(
    repo: GitRepo,
    project: Project,
    entry: LockEntry,
    hist: History,
    end: Point,
    base: str,
    options: Options,
    gh: Gh | None,
) -> tuple[list[PatchLine], str, str]:
    """Rebase in a worktree of the patch repository at ``base`` and commit the result; the
    report's lines, the new commit and the upstream commit the lock moved to."""
    with branches.worktree(repo, base) as work:
        moved = load_project(work)
        local = options.verify and options.ray is None
        report = rebase(
            project=moved, target=entry.name, onto=end.ref, history=hist, allow_pending=True,
            verify=local, python=options.python,
        )  # fmt: skip
        tests = _tests(report) if options.ray is None or not options.verify else {}
        if options.verify and options.ray is not None:
            tests = _ray_tests(load_project(work), entry.name, report, options.ray)
        for p in _reworked(report):  # absorbed, then upstream moved on: retired, not broken
            retire(project=load_project(work), patch_id=p.id, merged_in=p.absorbed_by or "")
        lines = [_line(p, moved, hist, report, tests, gh) for p in report.patches]
        message = f"watch: {entry.name} {entry.version} → {report.onto}\n\n" + "\n".join(
            f"{p.id}: {p.fate.value} ({p.shown})" for p in lines
        )
        new, _tree = branches.commit(
            work, base=base, target=entry.name, version=report.onto, message=message
        )
    return lines, new, report.commit


def _reworked(report: RebaseReport) -> list[PatchRebase]:
    """Patches upstream absorbed and later reworked: a stop of the rebase's, but upstream has
    the fix (the rebase's report says so); watch retires them on its branch."""
    return [p for p in report.patches if not p.outcome.ok and p.absorbed_by]


def _line(
    patch: PatchRebase,
    project: Project,
    hist: History,
    report: RebaseReport,
    tests: dict[str, str],
    gh: Gh | None,
) -> PatchLine:
    fate = Fate.ABSORBED if patch.absorbed_by else _FATES.get(patch.outcome, Fate.BROKE)
    meta = project.patch(patch.id)
    if fate is Fate.ABSORBED:
        release = patch.absorbed_by or report.onto
        note = patch.message if not patch.outcome.ok else ""  # reworked since: check it
        pr = _pr(project, meta, gh)
        return PatchLine(patch.id, fate, patch.outcome, release, pr, message=note)
    tested = tests.get(patch.id, "")
    if fate is Fate.CARRIED and not tested.startswith("failed"):
        return PatchLine(patch.id, fate, patch.outcome, verification=tested)
    if fate is Fate.CARRIED:  # it applies, but its tests fail there: a person looks at it
        why = f"carried to {report.onto}, but its tests fail there: {tested}"
        return PatchLine(patch.id, Fate.BROKE, patch.outcome, report.onto, None, tested,
                         message=why, tests_fail=True)  # fmt: skip
    hunks = tuple(
        BrokenHunk(d.path, d.hunk, d.reason, _upstream_change(hist, report, patch, d.path))
        for d in patch.details
    )
    return PatchLine(
        patch.id, fate, patch.outcome, patch.broken_by, hunks=hunks, message=patch.message
    )


def _pr(project: Project, meta: PatchMeta, gh: Gh | None) -> str | None:
    """The upstream PR that absorbed the patch: recorded, else (with ``gh``) looked up."""
    if meta.upstream.pr and meta.upstream.state is PrState.MERGED:
        return meta.upstream.pr
    if gh is None:
        return None  # a PR recorded as open or closed did not absorb it
    found = check_patch(project, gh, meta, day="", write=False)
    return found.after.pr if found.after.state is PrState.MERGED else None


def _upstream_change(hist: History, report: RebaseReport, patch: PatchRebase, path: str) -> str:
    """The upstream diff of ``path`` into the release where the patch first broke (from the
    lock when bisection named none)."""
    old, new = hist.start(), hist.resolve(report.onto)
    if patch.broken_by:
        points = [old, *hist.between(old, new)]
        labels = [hist.version(p) for p in points]
        if patch.broken_by in labels[1:]:
            at = labels.index(patch.broken_by)
            old, new = points[at - 1], points[at]
    return hist.repo.text(
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        hist.commit(old),
        hist.commit(new),
        "--",
        path,
    )


def _ray_tests(project: Project, target: str, report: RebaseReport, address: str) -> dict[str, str]:
    """The moved patches' tests as Ray tasks on the branch's project (the new lock): each
    worker prepares the patched tree from its own cache; id -> result."""
    moved = tuple(p.id for p in report.patches if p.outcome.moved)  # their tests run again
    if not moved:
        return {}
    opt_in = tuple(p.id for p in project.listed(target) if p.optional and p.id in moved)
    done = verify_on_ray(
        project=project, target=target, address=address, only=moved, include=opt_in, record=False
    )
    return {r.patch: r.result + (f": {r.reason}" if r.reason else "") for r in done.records}


def _tests(report: RebaseReport) -> dict[str, str]:
    """The carried patches' tests on the new release, as the rebase ran them: id -> result."""
    proof = report.proof
    if proof is None:
        return {}
    if proof.report is None:
        return {pid: f"not run: {proof.unverified}" for pid in proof.changed if proof.unverified}
    return {
        v.patch_id: v.result.value + (f": {v.reason}" if v.reason else "")
        for v in proof.report.verdicts
    }


def _finish(
    repo: GitRepo,
    project: Project,
    hist: History,
    summary: WatchSummary,
    new: str,
    old: str | None,
    options: Options,
    gh: Gh | None,
) -> WatchResult:
    page = None
    if options.report_dir is not None:
        span = f"..{summary.onto}"  # from the lock
        rows = matrix(project=project, target=summary.target, releases=span, history=hist)
        page = matrix_page(rows)
    report = write_report(options.report_dir, summary, page) if options.report_dir else None
    pushed = bool(options.remote) and push(repo, options.remote or "", summary.branch, new, old)
    published: list[Published] = []
    if options.open_pr and gh is not None:
        body = render_markdown(summary)
        default = branches.default_branch(repo) or "main"
        published.append(pull_request(gh, branch=summary.branch, base=default,
                                      title=f"watch: {summary.title}", body=body,
                                      cwd=project.root))  # fmt: skip
        if summary.having(Fate.BROKE):
            title = f"watch: patches break on {summary.target} {summary.onto}"
            published.append(issue(gh, title=title, body=body, cwd=project.root))
    return WatchResult(summary.target, summary.lock_version, summary, report, new, pushed,
                       tuple(published))  # fmt: skip
