"""``patchkit export-pr``: one upstream-ready branch per patch, with its pull-request text.

Each patch becomes a single commit on a branch named by the user's prefix and the patch's title
(:func:`patchkit.export.branches.branch_name`), based on the pinned upstream commit (or
``onto``), built off to the side: blobs with ``hash-object -w``, a tree in a temporary index,
``commit-tree``, then one ``update-ref <ref> <new> <old>``. The user's work tree and index are
never read or written: upstream originals come from the base commit itself. A rewrite is
exported as the diff it makes. Dates and identity are fixed, so exporting the same patch onto
the same base twice gives the same commit and leaves the branch where it was.

Beside each export, in ``<cache>/exports/<target>/<id>/``: ``COMMIT_MSG``, ``PR_TITLE``,
``PR_BODY.md``, ``<id>.patch`` (``git am`` it into any clone) and ``export.json`` (what was
exported and pushed, which makes re-export and ``--force-with-lease`` safe).

Building the commits and moving the branches is in :mod:`patchkit.export.build`; formatting
the exported change in :mod:`patchkit.export.format`; the files beside each
export, the push and the PR in :mod:`patchkit.export.publish`.

The base, the identity and dates, and the branch checks are in :mod:`patchkit.export.branches`;
the upstream test (``[export.test]``) in :mod:`patchkit.export.upstream_test`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import AlreadyUpstream, ConfigError, PatchFailed, UnprovenTest
from patchkit.export.absorbed import Absorbed, write_absorbed
from patchkit.export.branches import base_commit, not_upstream_notice
from patchkit.export.branches import branch_prefix as branch_prefix_of
from patchkit.export.build import Build, export_dir, land, prepare, stacked
from patchkit.export.prtext import Identity, load_template, pinned_label
from patchkit.export.publish import check_remote, open_prs, push
from patchkit.export.results import ExportReport, PatchExport
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry, PatchMeta, PrState
from patchkit.ops.context import blobs_for
from patchkit.ops.export_newest import NEWEST, PIN, newest_base, not_absorbed
from patchkit.ops.upstream_check import refreshed, upstream_check
from patchkit.project.load import Project
from patchkit.targets import profile
from patchkit.upstream.github import Gh
from patchkit.upstream.repo import UpstreamRepo
from patchkit.workspace.tree import checkout_tree

log = logging.getLogger("patchkit.export")
TEMPLATE_PATHS = (".github/PULL_REQUEST_TEMPLATE.md", ".github/pull_request_template.md")


def export_pr(
    *,
    project: Project,
    target: str,
    tree_root: Path,
    patch_ids: Sequence[str],
    onto: str | None = NEWEST,
    identity: Identity | None = None,
    push_remote: str | None = None,
    force: bool = False,
    open_pr: bool = False,
    run_tests: bool = True,
    stack: bool = False,
    check_against: str | None = None,
    reviewed_by: Identity | None = None,
    branch_prefix: str | None = None,
) -> ExportReport:
    """Export ``patch_ids`` of ``target`` (none: its whole series) as branches of the checkout at
    ``tree_root``. Each commit is signed by ``identity``, else the patch's ``[export] identity``,
    else the checkout's git config ``user.name``/``user.email``. Each branch is named by
    ``branch_prefix`` (else the checkout's git config ``patchkit.branchPrefix``, else none) and
    the words of the patch's title."""
    asked = _Asked(
        onto, identity, push_remote, force, open_pr, run_tests, stack, reviewed_by, branch_prefix
    )
    return _export(project, target, tree_root, patch_ids, check_against, asked)


@dataclass(frozen=True)
class _Asked:
    """How ``export_pr`` was asked to export (its keyword arguments, as one value)."""

    onto: str | None
    identity: Identity | None
    push_remote: str | None
    force: bool
    open_pr: bool
    run_tests: bool
    stack: bool
    reviewed_by: Identity | None
    branch_prefix: str | None


def _export(
    project: Project,
    target: str,
    tree_root: Path,
    patch_ids: Sequence[str],
    check_against: str | None,
    asked: _Asked,
) -> ExportReport:
    entry = project.entry(target)
    _check_review(entry, asked.reviewed_by, publish=bool(asked.push_remote or asked.open_pr))
    gh = Gh.find("--open") if asked.open_pr else None
    metas, left_out, note = _choose(project, target, patch_ids, gh, check_against)
    _check_fork(gh, asked.push_remote, metas)
    remote = asked.push_remote
    with GitRepo(tree_root) as repo:
        onto, label = _onto(entry, repo, asked.onto, tree_root)
        base, real = base_commit(repo, entry, onto)
        if not real:
            log.warning("%s", not_upstream_notice(entry, repo.path))
        push_url = check_remote(repo, entry, remote, asked.force, real) if remote else None
        build = _build(project, entry, repo, tree_root, base, label, real, asked)
        exports, stopped, absorbed = _build_and_land(
            build, metas, asked.stack, asked.force, each=label is not None
        )
        if remote and push_url:
            exports = push(repo, exports, remote, push_url, asked.force)
    if gh:
        exports = _open_prs(build, exports, gh, push_url)
    absorbed_lines = tuple(a.line() for a in absorbed)
    return ExportReport(
        target,
        base,
        tuple(exports),
        left_out,
        note,
        checkout=str(repo.path),
        upstream_base=real,
        stopped=stopped,
        absorbed=absorbed_lines,
    )


def _check_fork(gh: Gh | None, push_remote: str | None, metas: Sequence[PatchMeta]) -> None:
    if gh and not push_remote and any(_needs_new_pr(m) for m in metas):
        raise ConfigError(
            "--open needs --push REMOTE: a new PR's branch must be on your fork",
            hint="pass --push with a remote (or URL) of your fork",
        )


def _build(
    project: Project,
    entry: LockEntry,
    repo: GitRepo,
    tree_root: Path,
    base: str,
    label: str | None,
    real: bool,
    asked: _Asked,
) -> Build:
    """What building each patch's commit needs, on ``base`` (named ``label``; ``real``: an
    upstream commit, not a stand-in for the pin)."""
    build = build_context(project, entry, repo, base, label, asked.identity, tree_root)
    build.run_tests = asked.run_tests
    build.reviewed_by = asked.reviewed_by
    build.branch_prefix = branch_prefix_of(repo, asked.branch_prefix)
    # the upstream commit the base is (or, on the pin, stands for); onto a newer release of
    # an index source its label names it, never the pin's commit
    build.upstream = base if real else (entry.commit if label is None else "")
    return build


def target_of(project: Project, patch_ids: Sequence[str]) -> str:
    """The target of the patches named (the first one's: ``export_pr`` refuses a mix)."""
    if not patch_ids:
        raise ConfigError(
            "name the patches to export, or the target whose patches to export",
            hint="patchkit export-pr PATCH... (or --patch ID), or --target NAME for all its patches",
        )
    return project.patch(patch_ids[0]).target


def check_against_for(given: str | None, onto: str | None) -> str | None:
    """``--check-against``, else ``latest`` when exporting onto the pin (onto upstream's newest
    code, the export itself finds what upstream has)."""
    chosen = given or ("latest" if onto in (PIN, None) else "none")
    return None if chosen == "none" else chosen


def _onto(
    entry: LockEntry, repo: GitRepo, onto: str | None, tree_root: Path
) -> tuple[str | None, str | None]:
    """``onto`` as a commit, and how the text names it (None: the pin, also when upstream's
    newest commit is the pinned one)."""
    if onto in (None, PIN):
        return None, None
    if onto != NEWEST:
        return onto, f"{onto} ({onto[:12]})"
    shared = UpstreamRepo.shared_path(entry.name).resolve()
    newest = newest_base(entry, repo, cache_tree=tree_root.resolve() == shared)
    pinned = base_commit(repo, entry, None)[0]
    return (None, None) if newest.commit == pinned else (newest.commit, newest.label)


def _check_review(entry: LockEntry, reviewed_by: Identity | None, *, publish: bool) -> None:
    """vLLM's AGENTS.md: no pure agent PRs; a person reviews every changed line and runs the
    tests. Nothing goes to vLLM until someone says they did (``--reviewed-by``)."""
    if publish and reviewed_by is None and entry.name == "vllm":
        raise ConfigError(
            "vLLM takes no pull request no person has reviewed: pushing or opening needs "
            "--reviewed-by",
            hint="read every changed line and run the tests in the PR text, then pass "
            "--reviewed-by 'Your Name <you@example.com>'",
        )


def _open_prs(
    build: Build, exports: list[PatchExport], gh: Gh, fork_url: str | None
) -> list[PatchExport]:
    """Each branch's PR opened (or its own PR updated) upstream, from the fork it was pushed to."""
    return open_prs(
        exports,
        gh=gh,
        fork_url=fork_url,
        upstream=build.entry.repository,
        cwd=build.tree_root,
        meta_files={p.id: p.meta_file for p in build.series},
    )


def _choose(
    project: Project,
    target: str,
    patch_ids: Sequence[str],
    gh: Gh | None,
    check_against: str | None,
) -> tuple[list[PatchMeta], tuple[str, ...], str]:
    """The patches to export, those left out (with why), and what the newest release said."""
    selected = _selected(project, target, patch_ids)
    if gh:  # never a duplicate: look upstream first, and record what was found
        check = upstream_check(project=project, gh=gh, patch_ids=[m.id for m in selected])
        selected = [refreshed(m, check) for m in selected]
    metas, left_out = _not_merged(selected, named=bool(patch_ids))
    newest = not_absorbed(project, target, metas, check_against, named=bool(patch_ids))
    return newest.kept, left_out + newest.left_out, newest.note


def _build_and_land(
    build: Build, metas: Sequence[PatchMeta], stack: bool, force: bool, *, each: bool = False
) -> tuple[list[PatchExport], tuple[str, ...], tuple[Absorbed, ...]]:
    """Every patch's commit built (``stack``: each on the one before), then the branches moved.
    ``each`` (onto a base other than the pin): a patch whose change or upstream test does not
    carry there is stopped alone, saying which, and the others go on (on any base, a patch
    whose upstream test cannot show the fix). A patch upstream already
    has there gets a note (and a comment for an open PR) instead of a branch."""
    try:
        if stack:
            return land(build, stacked(build, metas), force), (), ()
        prepared, stopped, absorbed = [], [], []
        for meta in metas:
            try:
                prepared.append(prepare(build, meta))
            except AlreadyUpstream:
                absorbed.append(_absorbed(build, meta))
            except UnprovenTest as err:  # a test that cannot show the fix stops its patch alone
                stopped.append(f"{meta.id}: {err.message}")
            except PatchFailed as err:
                if not each:
                    raise
                stopped.append(f"{meta.id}: {err.message}")
        return land(build, prepared, force), tuple(stopped), tuple(absorbed)
    finally:
        build.blobs.close()


def _absorbed(build: Build, meta: PatchMeta) -> Absorbed:
    out_dir = export_dir(build.entry.name, build.repo.path, meta.id)
    return write_absorbed(
        meta, build.entry, where=build.base_label, upstream=build.upstream, out_dir=out_dir
    )


def _needs_new_pr(meta: PatchMeta) -> bool:
    """No PR of its own and none open upstream to comment on."""
    return not meta.prs and meta.upstream.state is not PrState.OPEN


def _not_merged(metas: list[PatchMeta], *, named: bool) -> tuple[list[PatchMeta], tuple[str, ...]]:
    """The patches without a merged upstream PR; a merged one named on its own is refused, one
    of the target's series is left out and said."""
    merged = [m for m in metas if m.upstream.state is PrState.MERGED]
    if named and merged:
        raise ConfigError(
            "merged upstream already, nothing to export: "
            + ", ".join(f"{m.id} (PR #{m.upstream.number}: {m.upstream.pr})" for m in merged),
            hint="retire the patch when the pin moves past the merge (patchkit rebase), or set "
            "[upstream] state in its metadata if the PR was reverted",
        )
    kept = [m for m in metas if m not in merged]
    return kept, tuple(f"{m.id}: merged upstream in {m.upstream.pr}" for m in merged)


def _selected(project: Project, target: str, patch_ids: Sequence[str]) -> list[PatchMeta]:
    """The patches named, or when none are, the target's series (opt-in patches left out)."""
    if not patch_ids:
        return _series(project, target)
    metas = [project.patch(pid) for pid in dict.fromkeys(patch_ids)]
    other = [f"{m.id} ({m.target})" for m in metas if m.target != target]
    if other:
        raise ConfigError(
            f"not patches for {target}: {', '.join(other)}",
            hint="export the patches of each target in a separate run",
        )
    return metas


def _series(project: Project, target: str) -> list[PatchMeta]:
    metas = project.patches(target)
    if not metas:
        raise ConfigError(
            f"no patches for {target} in the patch sets under {project.root}/patchsets",
            hint="name opt-in patches to export them (patchkit export-pr PATCH...), or check --set",
        )
    return metas


def build_context(
    project: Project,
    entry: LockEntry,
    repo: GitRepo,
    base: str,
    onto_label: str | None,
    identity: Identity | None,
    tree_root: Path,
) -> Build:
    prof = profile(entry.name)
    style = prof.pr_style if prof else "conventional"
    label = onto_label or pinned_label(entry)
    series = [p for s in project.sets for p in s.for_target(entry.name)]
    in_tree = (repo.read_file(base, path) for path in TEMPLATE_PATHS)
    template = load_template(next((t for t in in_tree if t is not None), None), entry.name)
    blobs = blobs_for(entry, checkout_tree(tree_root, entry.name))
    return Build(repo, entry, base, label, series, blobs, identity, style, template, tree_root)
