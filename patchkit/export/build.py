"""Building an export's commits off to the side, then moving its branches once.

Each patch runs on the base (once per set of patches before it: its deltas, or why it does not
apply there); a patch that needs its requirements is built on their commits. Its files are
formatted, its upstream test added (and run when it needs no GPU), its PR text rendered, and
its commit made with ``commit-tree`` from blobs and a tree in a temporary index. Only when
every commit is built and every branch move is allowed does :func:`land` move the branches and
write the files beside each export.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.cache import Cache
from patchkit.engine.deltas import patch_deltas
from patchkit.engine.diff.make import FileDelta
from patchkit.engine.series import Blobs, Overlay
from patchkit.errors import AlreadyUpstream, ConfigError, PatchFailed
from patchkit.export.branches import (
    branch_check,
    branch_name,
    commit_env,
    commit_identity,
    refuse_bad_branches,
)
from patchkit.export.format import format_deltas
from patchkit.export.proof import check_proof, elsewhere, upstream_run
from patchkit.export.prtext import Dependency, Identity, PrText, TextInput, render, text_input
from patchkit.export.publish import load_record, record_table, write_files
from patchkit.export.results import BranchState, PatchExport
from patchkit.export.upstream_test import (
    UpstreamRun,
    changed_files,
    merged,
    not_added,
    section,
    test_patch,
)
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry, PatchMeta, PrState
from patchkit.outcome import Outcome

ZERO = "0" * 40


@dataclass
class Build:
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
    reviewed_by: Identity | None = None  # the person who reviewed every line (--reviewed-by)
    branch_prefix: str = ""  # --branch-prefix, else git config patchkit.branchPrefix
    upstream: str = ""  # the upstream commit the base is or stands for (runs name it)
    below: dict[str, PatchMeta] = field(default_factory=dict)  # --stack: the patch under each
    base_paths: tuple[str, ...] = ()  # every file of the base (the formatters' stand-ins)
    base_modes: dict[str, int] = field(default_factory=dict)  # regular files' modes
    read_base: Callable[[str], bytes | None] = field(init=False)
    absorbed: set[str] = field(default_factory=set)  # patches upstream has at the base already
    # (patch, patches run before it) -> its deltas and why it failed: each is run once
    runs: dict[tuple[str, ...], tuple[list[FileDelta], str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.read_base = lambda path: self.repo.read_file(self.base, path)
        listed = self.repo.ls_tree(self.base)
        self.base_paths = tuple(listed)
        self.base_modes = {
            p: int(mode, 8) for p, (mode, _) in listed.items() if mode in ("100644", "100755")
        }

    def overlay(self) -> Overlay:
        """The base as the engine reads it when applying: its files, modes and listing (a
        rewrite searches the whole tree for the code it changes, as ``apply`` does)."""
        return Overlay(self.read_base, self.base_modes.get, listing=self._list)

    def _list(self, directory: str) -> list[str]:
        prefix = f"{directory}/" if directory else ""
        return [p for p in self.base_paths if p.startswith(prefix)]


@dataclass(frozen=True)
class _Built:
    commit: str
    text: PrText
    files: tuple[str, ...]
    formatting: tuple[str, ...]
    upstream_test: UpstreamRun | None = None


def stacked(ctx: Build, metas: Sequence[PatchMeta]) -> list[PatchExport]:
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
        exports.append(prepare(ctx, meta, (parent, list(metas[:i]))))
    return exports


def prepare(
    ctx: Build, meta: PatchMeta, placed: tuple[str, list[PatchMeta]] | None = None
) -> PatchExport:
    """The patch's commit, built but not yet on any branch."""
    parent, stacked = placed or _placement(ctx, meta)
    built = _build(ctx, meta, parent, stacked)
    return PatchExport(
        patch_id=meta.id,
        branch=branch_name(ctx.branch_prefix, meta),
        commit=built.commit,
        parent=parent,
        state=BranchState.UNCHANGED,  # set when the branch is moved
        text=built.text,
        files=built.files,
        out_dir=export_dir(ctx.entry.name, ctx.repo.path, meta.id),
        stacked_on=tuple(p.id for p in stacked),
        formatting=built.formatting,
        upstream_test=built.upstream_test,
        pr_url=meta.prs[-1] if meta.prs else None,
        comment_for=_open_duplicate(meta),
    )


def export_dir(target: str, checkout: Path, patch_id: str) -> Path:
    """``<cache>/exports/<target>/<checkout>-<key>/<id>``: one directory per checkout (its
    branch, texts and record together), so exports from two clones never overwrite each
    other's."""
    where = checkout.resolve()
    key = hashlib.sha256(str(where).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", where.name)[:40] or "checkout"
    return Cache.current().dir("exports", target, f"{name}-{key}", patch_id)


def _open_duplicate(meta: PatchMeta) -> str | None:
    """The open upstream PR making this change that is not ours (``[upstream] ours``, as the
    upstream check found): a comment is drafted for it, never a PR that "updates" it."""
    up = meta.upstream
    return up.pr if up.state is PrState.OPEN and up.ours is not True else None


def land(ctx: Build, prepared: Sequence[PatchExport], force: bool) -> list[PatchExport]:
    """Move every branch once all are built and all moves are allowed; write the files."""
    refuse_bad_branches(ctx.repo, prepared)  # before any branch moves
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
    ctx: Build, meta: PatchMeta, earlier: Sequence[PatchMeta]
) -> tuple[list[FileDelta], str]:
    """Before/after of each file ``meta`` changes on the base (after ``earlier``; a rename is a
    deletion and a creation), and why it failed ("" when it applied). Run once per key."""
    key = (meta.id, *(p.id for p in earlier))
    if key not in ctx.runs:
        ctx.runs[key] = _run(ctx, meta, earlier)
    return ctx.runs[key]


def _run(ctx: Build, meta: PatchMeta, earlier: Sequence[PatchMeta]) -> tuple[list[FileDelta], str]:
    result, deltas = patch_deltas(meta, earlier, ctx.overlay(), ctx.blobs)
    if result.outcome is Outcome.UPSTREAMED or (result.outcome.ok and not deltas):
        ctx.absorbed.add(meta.id)
        return [], f"already in upstream at {ctx.base_label}: nothing to export"
    if not result.outcome.ok:
        return [], f"{result.outcome.value}: {result.reasons()}"
    return deltas, ""


def _requirements(ctx: Build, meta: PatchMeta) -> list[PatchMeta]:
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


def _placement(ctx: Build, meta: PatchMeta) -> tuple[str, list[PatchMeta]]:
    """The parent of the patch's commit: the base when the patch applies there alone, else the
    commit of its requirements applied first (which it then carries)."""
    alone = _deltas(ctx, meta, [])[1]
    if not alone:
        return ctx.base, []
    if meta.id in ctx.absorbed:
        raise AlreadyUpstream(f"upstream already has {meta.id}'s change at {ctx.base_label}")
    chain = _requirements(ctx, meta)
    if not chain or _deltas(ctx, meta, chain)[1]:
        raise PatchFailed(f"cannot export {meta.id} onto {ctx.base_label}: {alone}")
    parent = ctx.base
    for i, dep in enumerate(chain):
        parent = _build(ctx, dep, parent, chain[:i]).commit
    return parent, chain


def _build(ctx: Build, meta: PatchMeta, parent: str, earlier: Sequence[PatchMeta]) -> _Built:
    deltas, why = _deltas(ctx, meta, earlier)
    if why:
        raise PatchFailed(f"cannot export {meta.id} onto {ctx.base_label}: {why}")
    absent = _absent_test_files(ctx, meta)
    if not absent:
        deltas = merged(deltas, _test_deltas(ctx, meta, earlier))
    deltas, formatting = format_deltas(deltas, read_base=ctx.read_base, base_paths=ctx.base_paths)
    files = tuple(sorted({d.path for d in deltas}))
    tree = ctx.repo.tree_with(parent, _entries(ctx.repo, parent, deltas))
    env = commit_env(ctx.repo, ctx.base, ctx.identity, meta)
    test_run = (
        not_added(meta, f"{ctx.base_label} has no {', '.join(absent)}") if absent
        else upstream_run(
            ctx.repo, meta, tree, parent, upstream=ctx.upstream, run_tests=ctx.run_tests
        )
    )  # fmt: skip
    check_proof(meta, test_run)
    text = render(_text_input(ctx, meta, files, bool(earlier), test_run))
    commit = ctx.repo.commit_tree(tree, [parent], text.commit_message, env)
    return _Built(commit, text, files, formatting, test_run)


def test_tree(ctx: Build, meta: PatchMeta) -> tuple[str, str]:
    """The tree of ``meta``'s change and its upstream test on the base (unformatted: what the
    test runs on, offline), and its parent (the base, or the commit of its requirements)."""
    parent, earlier = _placement(ctx, meta)
    absent = _absent_test_files(ctx, meta)
    if absent:
        raise PatchFailed(
            f"the upstream test of {meta.id} cannot be added: {ctx.base_label} has no "
            f"{', '.join(absent)}",
            hint="run it in a clone of upstream's git history (a source release ships no tests/)",
        )
    deltas = merged(_deltas(ctx, meta, earlier)[0], _test_deltas(ctx, meta, earlier))
    return ctx.repo.tree_with(parent, _entries(ctx.repo, parent, deltas)), parent


def _absent_test_files(ctx: Build, meta: PatchMeta) -> list[str]:
    """The files the upstream test's diff changes that the base lacks: a source release
    ships no ``tests/``, so the test cannot be added there (it is not the diff's fault)."""
    test = meta.export.test
    if test is None:
        return []
    paths = set(ctx.base_paths)
    return [p for p in changed_files(test) if p not in paths]


def _test_deltas(ctx: Build, meta: PatchMeta, earlier: Sequence[PatchMeta]) -> list[FileDelta]:
    """The upstream test's diff (``[export.test]``), applied after the patch."""
    test = test_patch(meta)
    if test is None:
        return []
    result, deltas = patch_deltas(test, [*earlier, meta], ctx.overlay(), ctx.blobs)
    if not result.outcome.ok:
        raise PatchFailed(
            f"the upstream test of {meta.id} ({test.file}) does not apply onto "
            f"{ctx.base_label}: {result.reasons()}",
            hint="remake the test's diff against upstream's tests/ at the pinned commit",
        )
    return deltas


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
    ctx: Build, meta: PatchMeta, files: tuple[str, ...], stacked: bool, run: UpstreamRun | None
) -> TextInput:
    by_id = {p.id: p for p in ctx.series}
    below = [ctx.below[meta.id].id] if meta.id in ctx.below else []  # --stack
    alone = not _deltas(ctx, meta, [])[1]  # applies on the base without what is below it
    deps = tuple(
        Dependency(
            r,
            by_id[r].prs if r in by_id else (),
            by_id[r].title if r in by_id else "",
            needed=r in meta.requires or not alone,
        )
        for r in dict.fromkeys([*below, *meta.requires])
    )
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
        upstream_test=section(meta, run, elsewhere(meta) if run else None, base=ctx.base_label),
        test_outcome=run.result if run else "",
        reviewed_by=ctx.reviewed_by,
    )
