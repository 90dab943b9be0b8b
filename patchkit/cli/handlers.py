"""CLI handlers: each turns parsed arguments into one call of the Python API and renders it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from patchkit.cli.render import (
    console,
    err_console,
    print_json,
    results_json,
    results_table,
    status_table,
)
from patchkit.errors import ConfigError
from patchkit.model import LockEntry, PatchMeta, PatchResult
from patchkit.ops import apply as apply_mod
from patchkit.ops.context import Project, blobs_for, load_project, open_checkout, open_tree
from patchkit.ops.status import StatusReport, status
from patchkit.targets import pinned_versions
from patchkit.upstream.lock import tree_pin_problems
from patchkit.workspace.tree import Tree


def tree_of(entry: LockEntry, args: argparse.Namespace) -> Tree:
    """The tree the command line names: --installed (with --python), --checkout, or the cache."""
    return open_tree(
        entry,
        checkout=getattr(args, "checkout", None),
        installed=getattr(args, "installed", False),
        python=getattr(args, "python", None),
    )


def _project(args: argparse.Namespace) -> Project:
    return load_project(args.project, args.sets)


def fetch_cmd(args: argparse.Namespace) -> int:
    from patchkit.upstream.sources import fetch

    entry = _project(args).entry(args.target)
    fetched = fetch(entry)
    console.print(
        f"{entry.name} {fetched.version} (upstream {fetched.upstream_commit}) at {fetched.path}"
    )
    return 0


def apply_cmd(args: argparse.Namespace) -> int:
    project = _project(args)
    entry = project.entry(args.target)
    patches = project.patches(args.target, include=tuple(args.include))
    tree = tree_of(entry, args)
    _warn_pins(project, tree)
    patches = _applicable(tree, patches)
    blobs = blobs_for(entry, tree)
    try:
        report = apply_mod.apply(
            tree=tree,
            entry=entry,
            patches=patches,
            blobs=blobs,
            allow_dirty=args.allow_dirty,
            allow_other_commit=args.allow_other_commit,
        )
    except apply_mod.ApplyFailed as exc:
        _render_results(args, entry.name, None, exc.results, f"apply to {tree.root}: FAILED")
        raise
    finally:
        blobs.close()
    if report.recovered:
        console.print(f"restored {len(report.recovered)} file(s) left by an interrupted run")
    if args.json:
        print_json(results_json(entry.name, report.commit, report.results) | {"noop": report.noop})
    elif report.noop:
        console.print(f"{entry.name}: already applied to {tree.root}; nothing to do")
    else:
        console.print(results_table(f"apply to {tree.root}", report.results))
    if args.verify:
        _verify_after_apply(args, project, tree, patches)
    if not args.json:
        console.print(status_table(_status(project, tree, args.target)))
    return 0


def _verify_after_apply(
    args: argparse.Namespace, project: Project, tree: Tree, patches: list[PatchMeta]
) -> None:
    from patchkit.cli.verify import render
    from patchkit.ops.verify import raise_for, verify_applied

    report = verify_applied(tree=tree, lock=project.lock, patches=patches, python=args.python)
    render(report, as_json=args.json)
    raise_for(report)


def _status(project: Project, tree: Tree, target: str) -> StatusReport:
    """Status of every listed patch, with its last verification and whether that is stale."""
    return status(tree=tree, patches=project.listed(target), entry=project.entry(target))


def _warn_pins(project: Project, tree: Tree) -> None:
    """Say when the tree's own requirements pin another target at a version the lock does not."""
    pins = pinned_versions(tree.root, tree.target) if tree.kind == "checkout" else {}
    for problem in tree_pin_problems(project.lock, tree.target, pins):
        err_console.print(f"[yellow]warning:[/] {problem}", soft_wrap=True)


def _applicable(tree: Tree, patches: list[PatchMeta]) -> list[PatchMeta]:
    """On an installed package, drop (and name) patches to files it does not contain."""
    if tree.kind != "installed":
        return patches
    from patchkit.ops.apply import split_applicable

    applicable, skipped = split_applicable(tree, patches)
    for item in skipped:
        console.print(f"[yellow]not applicable to an installed {tree.target}:[/] {item.reason}")
    return applicable


def _render_results(
    args: argparse.Namespace,
    target: str,
    commit: str | None,
    results: Sequence[PatchResult],
    title: str,
) -> None:
    if getattr(args, "json", False):
        print_json(results_json(target, commit, results))
    else:
        console.print(results_table(title, results))


def status_cmd(args: argparse.Namespace) -> int:
    project = _project(args)
    entry = project.entry(args.target)
    tree = tree_of(entry, args)
    report = _status(project, tree, args.target)
    if args.json:
        print_json(report.to_json())
    else:
        console.print(status_table(report))
    return 0


def reset_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.reset import reset

    project = _project(args)
    tree = tree_of(project.entry(args.target), args)
    report = reset(tree=tree, force=args.force)
    if args.json:
        print_json(
            {
                "target": args.target,
                "restored": list(report.restored),
                "saved_aside": str(report.saved_aside) if report.saved_aside else None,
            }
        )
        return 0
    console.print(f"restored {len(report.restored)} file(s) in {tree.root}")
    if report.saved_aside:
        console.print(f"your edits were saved in {report.saved_aside}")
    return 0


def show_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.show import show

    project = _project(args)
    meta = project.patch(args.patch)
    if args.target and args.target != meta.target:
        raise ConfigError(f"patch {meta.id} is for {meta.target}, not {args.target}")
    entry = project.entry(meta.target)
    series = project.patches(meta.target, include=(meta.id,))
    earlier = series[: series.index(meta)]
    tree = open_checkout(entry, args.checkout)
    blobs = blobs_for(entry, tree)
    try:
        diff = show(meta, earlier, apply_mod.upstream_view(tree), blobs)
    finally:
        blobs.close()
    sys.stdout.buffer.write(diff)
    return 0


def record_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.record import record, refuse_taken

    project = _project(args)
    entry = project.entry(args.target)
    if args.installed:
        raise ConfigError(
            "record works on a checkout, not on an installed package",
            hint="make the edit in a checkout (`patchkit fetch`), then record",
        )
    tree = open_checkout(entry, args.checkout)
    series = project.patches(args.target, include=tuple(args.include))
    existing = next((p for p in series if p.id == args.patch), None)
    if existing is None:  # a new patch: its id must be free in every set
        refuse_taken(args.patch, [p for s in project.sets for p in s.patches], None)
    set_name = existing.set_name if existing else args.into
    candidates = [
        s for s in project.sets if s.name == set_name or (not set_name and args.target in s.targets)
    ]
    if len(candidates) != 1:
        raise ConfigError("say which patch set gets the new patch with --into SET")
    blobs = blobs_for(entry, tree)
    try:
        report = record(
            tree=tree,
            patch_set=candidates[0],
            series=series,
            patch_id=args.patch,
            blobs=blobs,
            title=args.title,
            why=args.why,
            author=args.author,
            paths=args.paths,
        )
    finally:
        blobs.close()
    verb = "wrote" if report.changed else "unchanged:"
    console.print(f"{verb} {report.patch_file} ({', '.join(report.files)})")
    return 0
