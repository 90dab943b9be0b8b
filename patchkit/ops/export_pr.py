"""``patchkit export-pr``: one upstream-ready branch per patch, with its pull-request text.

Each patch becomes a single commit on ``patchkit/<id>``, based on the pinned upstream commit (or
``onto``), built off to the side: blobs with ``hash-object -w``, a tree in a temporary index,
``commit-tree``, then one ``update-ref <ref> <new> <old>``. The user's work tree and index are
never read or written: upstream originals come from the base commit itself. A rewrite is
exported as the diff it makes. Dates and identity are fixed, so exporting the same patch onto
the same base twice gives the same commit and leaves the branch where it was.

Beside each export, in ``<cache>/exports/<target>/<id>/``: ``COMMIT_MSG``, ``PR_TITLE``,
``PR_BODY.md``, ``<id>.patch`` (``git am`` it into any clone) and ``export.json`` (what was
exported and pushed, which makes re-export and ``--force-with-lease`` safe).

Formatting the exported change is in :mod:`patchkit.export.format`; the files beside each
export, the push and the PR in :mod:`patchkit.export.publish`.

The base, the identity and dates, and the branch checks are in :mod:`patchkit.export.branches`;
the upstream test (``[export.test]``) in :mod:`patchkit.export.upstream_test`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.cache import cache_dir
from patchkit.engine.deltas import patch_deltas
from patchkit.engine.difftext import FileDelta
from patchkit.engine.series import Blobs, Overlay
from patchkit.errors import ConfigError, PatchFailed
from patchkit.export.branches import base_commit, branch_check, commit_env, commit_identity
from patchkit.export.format import format_deltas
from patchkit.export.prtext import (
    Dependency,
    Identity,
    PrText,
    TextInput,
    load_template,
    pinned_label,
    render,
    text_input,
)
from patchkit.export.publish import (
    check_remote,
    load_record,
    open_prs,
    push,
    record_table,
    write_files,
)
from patchkit.export.results import BranchState, ExportReport, PatchExport
from patchkit.export.upstream_test import (
    UpstreamRun,
    merged,
    not_run,
    recorded,
    run_in,
    section,
    test_patch,
)
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry, Outcome, PatchMeta, PrState
from patchkit.ops.context import Project, blobs_for
from patchkit.ops.export_newest import not_absorbed
from patchkit.ops.upstream_check import refreshed, upstream_check
from patchkit.targets import profile
from patchkit.upstream.github import Gh
from patchkit.workspace.tree import checkout_tree

ZERO = "0" * 40
TEMPLATE_PATHS = (".github/PULL_REQUEST_TEMPLATE.md", ".github/pull_request_template.md")


@dataclass
class _Ctx:
    """What every patch of one export shares."""

    repo: GitRepo
    entry: LockEntry
    base: str
    base_label: str  # "FlashInfer 0.6.6 (commit 70b142b75b46)"
    series: list[PatchMeta]  # every patch of the target, for requirements
    blobs: Blobs
    identity: Identity | None  # given on the command line: wins over the metadata's
    style: str
    template: str
    tree_root: Path
    run_tests: bool = True  # run a CPU upstream test on the exported tree here
    below: dict[str, PatchMeta] = field(default_factory=dict)  # --stack: the patch under each
    base_paths: tuple[str, ...] = ()  # every file of the base (the formatters' stand-ins)
    read_base: Callable[[str], bytes | None] = field(init=False)
    # (patch, patches run before it) -> its deltas and why it failed: each is run once
    runs: dict[tuple[str, ...], tuple[list[FileDelta], str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.read_base = lambda path: self.repo.read_file(self.base, path)
        self.base_paths = tuple(self.repo.ls_tree(self.base))


@dataclass(frozen=True)
class _Built:
    commit: str
    text: PrText
    files: tuple[str, ...]
    formatting: tuple[str, ...]
    upstream_test: UpstreamRun | None = None


# -- the entry point -----------------------------------------------------------------------------
def export_pr(
    *,
    project: Project,
    target: str,
    tree_root: Path,
    patch_ids: Sequence[str],
    onto: str | None = None,
    identity: Identity | None = None,
    push_remote: str | None = None,
    force: bool = False,
    open_pr: bool = False,
    run_tests: bool = True,
    stack: bool = False,
    check_against: str | None = None,
) -> ExportReport:
    """Export ``patch_ids`` of ``target`` (none: its whole series) as branches of the checkout at
    ``tree_root``. Each commit is signed by ``identity``, else the patch's ``[export] identity``,
    else the checkout's git config ``user.name``/``user.email``."""
    entry = project.entry(target)
    selected = _selected(project, target, patch_ids)
    gh = Gh.find("--open") if open_pr else None
    if gh:  # never a duplicate: look upstream first, and record what was found
        check = upstream_check(project=project, gh=gh, patch_ids=[m.id for m in selected])
        selected = [refreshed(m, check) for m in selected]
    metas, left_out = _not_merged(selected, named=bool(patch_ids))
    newest = not_absorbed(project, target, metas, check_against, named=bool(patch_ids))
    metas, left_out = newest.kept, left_out + newest.left_out
    if gh and not push_remote and any(_needs_new_pr(m) for m in metas):
        raise ConfigError(
            "--open needs --push REMOTE: a new PR's branch must be on your fork",
            hint="pass --push with a remote (or URL) of your fork",
        )
    with GitRepo(tree_root) as repo:
        base, real = base_commit(repo, entry, onto)
        push_url = check_remote(repo, entry, push_remote, force, real) if push_remote else None
        ctx = _context(project, entry, repo, base, onto, identity, tree_root)
        ctx.run_tests = run_tests
        try:
            prepared = _stacked(ctx, metas) if stack else [_prepare(ctx, m) for m in metas]
            exports = _land(ctx, prepared, force)
        finally:
            ctx.blobs.close()
        if push_remote and push_url:
            exports = push(repo, exports, push_remote, push_url, force)
    if gh:
        meta_files = {p.id: p.meta_file for p in ctx.series}
        exports = open_prs(
            exports,
            gh=gh,
            fork_url=push_url,
            upstream=entry.repository,
            cwd=tree_root,
            meta_files=meta_files,
        )
    return ExportReport(target, base, tuple(exports), left_out, newest.note)


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


def _context(
    project: Project,
    entry: LockEntry,
    repo: GitRepo,
    base: str,
    onto: str | None,
    identity: Identity | None,
    tree_root: Path,
) -> _Ctx:
    prof = profile(entry.name)
    style = prof.pr_style if prof else "conventional"
    label = f"{onto} ({base[:12]})" if onto else pinned_label(entry)
    series = [p for s in project.sets for p in s.for_target(entry.name)]
    in_tree = (repo.read_file(base, path) for path in TEMPLATE_PATHS)
    template = load_template(next((t for t in in_tree if t is not None), None), entry.name)
    blobs = blobs_for(entry, checkout_tree(tree_root, entry.name))
    return _Ctx(repo, entry, base, label, series, blobs, identity, style, template, tree_root)


# -- the base ------------------------------------------------------------------------------------
# -- one patch -----------------------------------------------------------------------------------
def _stacked(ctx: _Ctx, metas: Sequence[PatchMeta]) -> list[PatchExport]:
    """``--stack``: one branch per patch, in series order, each on the previous one's commit
    (ghstack-like); each PR text names the one below it."""
    by_id = {m.id: m for m in metas}
    exports: list[PatchExport] = []
    for i, meta in enumerate(metas):
        missing = [r for r in meta.requires if r not in by_id or metas.index(by_id[r]) > i]
        if missing:
            raise ConfigError(
                f"--stack: {meta.id} requires {', '.join(missing)}, which is not below it in "
                "the stack",
                hint="export the patches it requires in the same run, before it in the series",
            )
        if i:
            ctx.below[meta.id] = metas[i - 1]
        parent = exports[-1].commit if exports else ctx.base
        exports.append(_prepare(ctx, meta, (parent, list(metas[:i]))))
    return exports


def _prepare(
    ctx: _Ctx, meta: PatchMeta, placed: tuple[str, list[PatchMeta]] | None = None
) -> PatchExport:
    """The patch's commit, built but not yet on any branch."""
    parent, stacked = placed or _placement(ctx, meta)
    built = _build(ctx, meta, parent, stacked)
    return PatchExport(
        patch_id=meta.id,
        branch=f"patchkit/{meta.id}",
        commit=built.commit,
        parent=parent,
        state=BranchState.UNCHANGED,  # set when the branch is moved
        text=built.text,
        files=built.files,
        out_dir=cache_dir("exports", ctx.entry.name, meta.id),
        stacked_on=tuple(p.id for p in stacked),
        formatting=built.formatting,
        upstream_test=built.upstream_test,
        pr_url=meta.prs[-1] if meta.prs else None,
        comment_for=_open_duplicate(meta),
    )


def _open_duplicate(meta: PatchMeta) -> str | None:
    """The open upstream PR of someone else making this change (a PR of the patch's own, in
    ``prs``, is updated by the export, never commented on as a duplicate)."""
    up = meta.upstream
    return up.pr if up.state is PrState.OPEN and up.pr not in meta.prs else None


def _land(ctx: _Ctx, prepared: Sequence[PatchExport], force: bool) -> list[PatchExport]:
    """Move every branch once all are built and all moves are allowed; write the files."""
    records = [load_record(e.out_dir) for e in prepared]
    olds = [
        branch_check(ctx.repo, e, record_table(r, "branches").get(str(ctx.repo.path)), force)
        for e, r in zip(prepared, records, strict=True)
    ]
    landed = []
    for export, record, old in zip(prepared, records, olds, strict=True):
        if old != export.commit:
            ctx.repo.update_ref(f"refs/heads/{export.branch}", export.commit, old or ZERO)
            state = BranchState.UPDATED if old else BranchState.CREATED
            export = replace(export, state=state)
        write_files(ctx.repo, export, ctx.base, record)
        landed.append(export)
    return landed


def _deltas(
    ctx: _Ctx, meta: PatchMeta, earlier: Sequence[PatchMeta]
) -> tuple[list[FileDelta], str]:
    """Before/after of each file ``meta`` changes on the base (after ``earlier``; a rename is a
    deletion and a creation), and why it failed ("" when it applied). Run once per key."""
    key = (meta.id, *(p.id for p in earlier))
    if key not in ctx.runs:
        ctx.runs[key] = _run(ctx, meta, earlier)
    return ctx.runs[key]


def _run(ctx: _Ctx, meta: PatchMeta, earlier: Sequence[PatchMeta]) -> tuple[list[FileDelta], str]:
    result, deltas = patch_deltas(meta, earlier, Overlay(ctx.read_base), ctx.blobs)
    if result.outcome is Outcome.UPSTREAMED or (result.outcome.ok and not deltas):
        return [], f"already in upstream at {ctx.base_label}: nothing to export"
    if not result.outcome.ok:
        reasons = result.reasons()
        return [], f"{result.outcome.value}: {reasons or result.message}"
    return deltas, ""


def _requirements(ctx: _Ctx, meta: PatchMeta) -> list[PatchMeta]:
    """What ``meta`` requires, transitively, in series order."""
    by_id = {p.id: p for p in ctx.series}
    needed: set[str] = set()
    todo = list(meta.requires)
    while todo:
        pid = todo.pop()
        if pid not in needed and pid in by_id:
            needed.add(pid)
            todo.extend(by_id[pid].requires)
    return [p for p in ctx.series if p.id in needed]


def _placement(ctx: _Ctx, meta: PatchMeta) -> tuple[str, list[PatchMeta]]:
    """The parent of the patch's commit: the base when the patch applies there alone, else the
    commit of its requirements applied first (which it then carries)."""
    alone = _deltas(ctx, meta, [])[1]
    if not alone:
        return ctx.base, []
    chain = _requirements(ctx, meta)
    if not chain or _deltas(ctx, meta, chain)[1]:
        raise PatchFailed(f"cannot export {meta.id} onto {ctx.base_label}: {alone}")
    parent = ctx.base
    for i, dep in enumerate(chain):
        parent = _build(ctx, dep, parent, chain[:i]).commit
    return parent, chain


def _build(ctx: _Ctx, meta: PatchMeta, parent: str, earlier: Sequence[PatchMeta]) -> _Built:
    deltas, why = _deltas(ctx, meta, earlier)
    if why:
        raise PatchFailed(f"cannot export {meta.id} onto {ctx.base_label}: {why}")
    deltas = merged(deltas, _test_deltas(ctx, meta, earlier))
    deltas, formatting = format_deltas(deltas, read_base=ctx.read_base, base_paths=ctx.base_paths)
    files = tuple(sorted({d.path for d in deltas}))
    tree = ctx.repo.tree_with(parent, _entries(ctx.repo, parent, deltas))
    env = commit_env(ctx.repo, ctx.base, ctx.identity, meta)
    test_run = _upstream_test(ctx, meta, tree, parent, env)
    text = render(_text_input(ctx, meta, files, bool(earlier), section(meta, test_run)))
    commit = ctx.repo.commit_tree(tree, [parent], text.commit_message, env)
    return _Built(commit, text, files, formatting, test_run)


def _test_deltas(ctx: _Ctx, meta: PatchMeta, earlier: Sequence[PatchMeta]) -> list[FileDelta]:
    """The upstream test's diff (``[export.test]``), applied after the patch."""
    test = test_patch(meta)
    if test is None:
        return []
    result, deltas = patch_deltas(test, [*earlier, meta], Overlay(ctx.read_base), ctx.blobs)
    if not result.outcome.ok:
        reasons = result.reasons()
        raise PatchFailed(
            f"the upstream test of {meta.id} ({test.file}) does not apply onto "
            f"{ctx.base_label}: {reasons or result.message}",
            hint="remake the test's diff against upstream's tests/ at the pinned commit",
        )
    return deltas


def _upstream_test(
    ctx: _Ctx, meta: PatchMeta, tree: str, parent: str, env: dict[str, str]
) -> UpstreamRun | None:
    """The upstream test's result on ``tree``: recorded, else run here when it needs no GPU."""
    test = meta.export.test
    if test is None:
        return None
    found = recorded(meta, tree)
    if found:
        return found
    if test.gpu:
        return not_run(meta, "it needs a GPU")
    if not ctx.run_tests:
        return not_run(meta, "not run at export")
    commit = ctx.repo.commit_tree(tree, [parent], f"{meta.id}: upstream test run\n", env)
    with tempfile.TemporaryDirectory(prefix="patchkit-upstream-test-") as tmp:
        where = Path(tmp) / "tree"
        ctx.repo.add_worktree(where, commit)
        try:
            return run_in(where, meta, tree)
        finally:
            ctx.repo.remove_worktree(where)


def _entries(
    repo: GitRepo, parent: str, deltas: Sequence[FileDelta]
) -> list[tuple[str, str | None, str]]:
    modes = repo.ls_tree(parent, [d.path for d in deltas])
    entries: list[tuple[str, str | None, str]] = []
    for d in deltas:
        if d.after is None:
            entries.append((d.path, None, ""))
            continue
        mode = f"{d.after_mode:o}" if d.after_mode else modes.get(d.path, ("100644", ""))[0]
        entries.append((d.path, repo.write_blob(d.after), mode))
    return entries


def _text_input(
    ctx: _Ctx, meta: PatchMeta, files: tuple[str, ...], stacked: bool, test_result: str
) -> TextInput:
    by_id = {p.id: p for p in ctx.series}
    below = [ctx.below[meta.id].id] if meta.id in ctx.below else []  # --stack
    ids = dict.fromkeys([*below, *meta.requires])
    deps = tuple(Dependency(r, by_id[r].prs if r in by_id else ()) for r in ids)
    return text_input(
        meta,
        ctx.entry,
        base=ctx.base_label,
        files=files,
        style=ctx.style,
        template=ctx.template,
        identity=commit_identity(ctx.repo, ctx.identity, meta),
        dependencies=deps,
        stacked=stacked,
        upstream_test=test_result,
    )
