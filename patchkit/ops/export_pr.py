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

Git commands used beyond :class:`GitRepo`'s methods (through ``GitRepo.text``):
``show -s --format=%cI`` (the base commit's date).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.cache import cache_dir
from patchkit.engine.deltas import patch_deltas
from patchkit.engine.difftext import FileDelta
from patchkit.engine.series import Blobs, Overlay
from patchkit.errors import ConfigError, PatchFailed, TreeError
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
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.model import LockEntry, Outcome, PatchMeta, PrState
from patchkit.ops.context import Project, blobs_for
from patchkit.ops.upstream_check import refreshed, upstream_check
from patchkit.targets import commits_match, profile
from patchkit.upstream.github import Gh
from patchkit.upstream.sources import TRAILER
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
    read_base: Callable[[str], bytes | None] = field(init=False)
    # (patch, patches run before it) -> its deltas and why it failed: each is run once
    runs: dict[tuple[str, ...], tuple[list[FileDelta], str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.read_base = lambda path: self.repo.read_file(self.base, path)


@dataclass(frozen=True)
class _Built:
    commit: str
    text: PrText
    files: tuple[str, ...]
    formatting: tuple[str, ...]


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
    if gh and not push_remote and any(_needs_new_pr(m) for m in metas):
        raise ConfigError(
            "--open needs --push REMOTE: a new PR's branch must be on your fork",
            hint="pass --push with a remote (or URL) of your fork",
        )
    with GitRepo(tree_root) as repo:
        base, real = _base_commit(repo, entry, onto)
        push_url = check_remote(repo, entry, push_remote, force, real) if push_remote else None
        ctx = _context(project, entry, repo, base, onto, identity, tree_root)
        try:
            exports = _land(ctx, [_prepare(ctx, meta) for meta in metas], force)
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
    return ExportReport(target, base, tuple(exports), left_out)


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
def _names_upstream(repo: GitRepo, commit: str, entry: LockEntry) -> bool:
    """A synthetic release commit of patchkit's cache names the upstream commit it stands for."""
    for line in repo.commit_message(commit).splitlines():
        if line.startswith(TRAILER) and commits_match(line[len(TRAILER) :].strip(), entry.commit):
            return True
    prof = profile(entry.name)
    content = repo.read_file(commit, prof.version_file) if prof else None
    named = prof.commit_in(content.decode(errors="replace")) if prof and content else None
    return bool(named and commits_match(named, entry.commit))


def _base_commit(repo: GitRepo, entry: LockEntry, onto: str | None) -> tuple[str, bool]:
    """The commit to base branches on, and whether it is a real upstream commit (pushable)."""
    if onto:
        commit = repo.resolve(onto)
        if commit is None:
            raise TreeError(f"--onto {onto}: no such commit in {repo.path}")
        return commit, True
    commit = repo.resolve(entry.commit)
    if commit:
        return commit, True
    for rev in (f"v{entry.version}", "HEAD"):
        commit = repo.resolve(rev)
        if commit and _names_upstream(repo, commit, entry):
            return commit, False
    raise TreeError(
        f"{repo.path} has no commit for {entry.name} {entry.version} ({entry.commit})",
        hint="run `patchkit fetch`, or pass --checkout of a clone that has the pinned commit",
    )


# -- one patch -----------------------------------------------------------------------------------
def _prepare(ctx: _Ctx, meta: PatchMeta) -> PatchExport:
    """The patch's commit, built but not yet on any branch."""
    parent, stacked = _placement(ctx, meta)
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
        pr_url=meta.prs[-1] if meta.prs else None,
        comment_for=meta.upstream.pr if meta.upstream.state is PrState.OPEN else None,
    )


def _land(ctx: _Ctx, prepared: Sequence[PatchExport], force: bool) -> list[PatchExport]:
    """Move every branch once all are built and all moves are allowed; write the files."""
    records = [load_record(e.out_dir) for e in prepared]
    olds = [
        _branch_check(ctx.repo, e, record_table(r, "branches").get(str(ctx.repo.path)), force)
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
        reasons = "; ".join(f"{d.path} {d.hunk}: {d.reason}" for d in result.details)
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
    deltas, formatting = format_deltas(deltas, read_base=ctx.read_base)
    files = tuple(sorted({d.path for d in deltas}))
    text = render(_text_input(ctx, meta, files, stacked=bool(earlier)))
    tree = ctx.repo.tree_with(parent, _entries(ctx.repo, parent, deltas))
    env = _commit_env(ctx, meta)
    return _Built(
        ctx.repo.commit_tree(tree, [parent], text.commit_message, env), text, files, formatting
    )


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


def _text_input(ctx: _Ctx, meta: PatchMeta, files: tuple[str, ...], stacked: bool) -> TextInput:
    by_id = {p.id: p for p in ctx.series}
    deps = tuple(Dependency(r, by_id[r].prs if r in by_id else ()) for r in meta.requires)
    return text_input(
        meta,
        ctx.entry,
        base=ctx.base_label,
        files=files,
        style=ctx.style,
        template=ctx.template,
        identity=_identity(ctx, meta),
        dependencies=deps,
        stacked=stacked,
    )


def _identity(ctx: _Ctx, meta: PatchMeta) -> Identity:
    """``--identity``, else the patch's ``[export] identity``, else the checkout's git config."""
    if ctx.identity:
        return ctx.identity
    if meta.export.identity:
        return Identity.parse(meta.export.identity)
    name, email = ctx.repo.config("user.name"), ctx.repo.config("user.email")
    if not name or not email:
        raise ConfigError(
            f"no identity for the commit of {meta.id} and its sign-off",
            hint="pass --identity 'Your Name <you@example.com>', set [export] identity in "
            f"{meta.meta_file}, or set git config user.name and user.email",
        )
    return Identity(name, email)


def _commit_env(ctx: _Ctx, meta: PatchMeta) -> dict[str, str]:
    """Identity and a fixed date: the patch's ``[export] date``, else the patch file's last
    commit, else the base commit's date."""
    date = meta.export.date
    if date is None and is_repo(meta.file.parent):
        with GitRepo(meta.file.parent) as project_repo:
            date = project_repo.last_commit_date(meta.file)
    date = date or ctx.repo.text("show", "-s", "--format=%cI", ctx.base)
    identity = _identity(ctx, meta)
    name, email = identity.name, identity.email
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }


def _branch_check(
    repo: GitRepo, export: PatchExport, exported: str | None, force: bool
) -> str | None:
    """The branch's commit now, after checking that patchkit may move it to ``export.commit``."""
    ref = f"refs/heads/{export.branch}"
    old = repo.resolve(ref)
    if old == export.commit:
        return old
    if old and old != exported and not force:
        raise TreeError(
            f"branch {export.branch} in {repo.path} is at {old[:12]}, which patchkit did not "
            "export; refusing to move it",
            hint="keep your commits elsewhere, or pass --force to replace the branch",
        )
    if ref in repo.checked_out_branches():
        raise TreeError(
            f"{export.branch} is checked out in a worktree of {repo.path}",
            hint="switch that worktree to another branch, then export again",
        )
    return old
