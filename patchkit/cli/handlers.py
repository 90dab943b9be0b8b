"""CLI handlers: each turns parsed arguments into one call of the Python API and renders it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from patchkit.cli.args import where_of
from patchkit.cli.explain import explained_json, print_explained
from patchkit.cli.render import (
    console,
    err_console,
    print_json,
    results_json,
    results_table,
    status_table,
)
from patchkit.errors import ConfigError
from patchkit.model import LockEntry, Outcome, PatchMeta, PatchResult
from patchkit.ops.context import Project, load_project, open_tree
from patchkit.ops.status import StatusReport, status, status_target
from patchkit.workspace.tree import Tree
from patchkit.workspace.txn import Recovery

if TYPE_CHECKING:
    from patchkit.ops.apply import TargetApply


def tree_of(entry: LockEntry, args: argparse.Namespace) -> Tree:
    return open_tree(entry, where_of(args))


def project_of(args: argparse.Namespace) -> Project:
    return load_project(args.project, args.sets)


def fetch_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.fetch import fetch_target

    fetched = fetch_target(project=project_of(args), target=args.target)
    console.print(
        f"{args.target} {fetched.version} (upstream {fetched.upstream_commit}) at {fetched.path}"
    )
    return 0


def apply_cmd(args: argparse.Namespace) -> int:
    project = project_of(args)
    return show_apply(args, project, run_apply(args, project))


def run_apply(args: argparse.Namespace, project: Project) -> TargetApply:
    """``apply`` as the arguments ask; a failure is rendered, then raised."""
    from patchkit.ops.apply import ApplyFailed, apply_target  # the engine: not for status

    try:
        return apply_target(
            project=project,
            target=args.target,
            where=where_of(args),
            include=args.include,
            exclude=args.exclude,
            allow_dirty=args.allow_dirty,
            allow_other_commit=args.allow_other_commit,
            explain=args.explain,
            keep_going=getattr(args, "keep_going", False),
        )
    except ApplyFailed as exc:
        _render_results(args, args.target, None, exc.results, "apply: FAILED", written=False)
        exc.hint = _apply_failed_hint(args.target, exc.results)
        raise


def show_apply(args: argparse.Namespace, project: Project, done: TargetApply) -> int:
    """What ``apply`` says after it applied (and runs ``--verify``)."""
    _say_before(args, done)
    report, tree = done.report, done.tree
    _say_recovered(args, report.recovered)
    if args.json:
        data = results_json(args.target, report.commit, report.results) | {
            "noop": report.noop,
            "written": not report.noop,  # already applied: nothing was written
            "recovered": _recovered_json(report.recovered),
            "skipped": [
                {"id": r.patch_id, "outcome": r.outcome.value, "reason": r.reasons()}
                for r in report.skipped
            ],
        }
        print_json(data | explained_json(args, report.results))
    elif report.noop:
        console.print(f"{args.target}: already applied to {tree.root}; nothing to do")
    else:
        console.print(results_table(f"apply to {tree.root}", report.results))
        print_explained(args, report.results)
    if args.verify:
        _verify_after_apply(args, project, tree, list(done.patches))
    if not args.json:
        listed, entry = project.listed(args.target), project.entry(args.target)
        console.print(status_table(status(tree=tree, patches=listed, entry=entry)))
    return _say_skipped(args, report.skipped)


def _say_skipped(args: argparse.Namespace, skipped: Sequence[PatchResult]) -> int:
    """The patches left out because they may fail: one line each on stderr; exit 11."""
    for r in skipped:
        err_console.print(
            f"[yellow]skipped:[/] {r.patch_id} ({r.outcome.value}): {r.reasons()}; the rest "
            f'applied (it may fail: on_failure = "skip" or --keep-going)',
            soft_wrap=True,
        )
    return 11 if skipped else 0


def _apply_failed_hint(target: str, results: Sequence[PatchResult]) -> str:
    """What to do after a refused apply: a broken patch file is fixed or made again; a patch
    that does not fit the tree is explained hunk by hunk."""
    failed = [r.patch_id for r in results if r.outcome is Outcome.FAILED]
    if failed:
        return (
            f"nothing was written; fix the patch file of {', '.join(failed)} (the report above "
            f"names the file and the line), or make it again from an edited checkout with "
            f"`patchkit record --target {target} --patch {failed[0]}`"
        )
    return (
        f"nothing was written; `patchkit apply --target {target} --explain` shows where each "
        f"hunk went: fix the patch, or carry it to this tree with `patchkit rebase`"
    )


def _say_before(args: argparse.Namespace, done: TargetApply) -> None:
    for warning in done.warnings:
        err_console.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)
    for item in done.skipped:
        console.print(f"[yellow]not applicable to an installed {args.target}:[/] {item.reason}")


def _say_recovered(args: argparse.Namespace, recovered: Recovery | None) -> None:
    """What rolling back an interrupted write did: on stderr, so ``--json`` stays JSON."""
    if recovered is not None and not args.json:
        for line in recovered.lines():
            err_console.print(f"[yellow]note:[/] {line}", soft_wrap=True)


def _recovered_json(recovered: Recovery | None) -> dict[str, object] | None:
    if recovered is None:
        return None
    return {
        "command": recovered.command,
        "restored": list(recovered.restored),
        "kept": list(recovered.kept),
        "modes_kept": list(recovered.modes_kept),
    }


def _verify_after_apply(
    args: argparse.Namespace, project: Project, tree: Tree, patches: list[PatchMeta]
) -> None:
    from patchkit.cli.verify import render
    from patchkit.ops.verify import raise_for, verify_applied

    report = verify_applied(tree=tree, lock=project.lock, patches=patches, python=args.python)
    render(report, as_json=args.json, python=args.python)
    raise_for(report)


def _render_results(
    args: argparse.Namespace,
    target: str,
    commit: str | None,
    results: Sequence[PatchResult],
    title: str,
    *,
    written: bool = True,
) -> None:
    if getattr(args, "json", False):
        data = results_json(target, commit, results, written=written)
        print_json(data | explained_json(args, results))
    else:
        console.print(results_table(title, results, written=written))
        print_explained(args, results)


def status_cmd(args: argparse.Namespace) -> int:
    return show_status(
        args, status_target(project=project_of(args), target=args.target, where=where_of(args))
    )


def show_status(args: argparse.Namespace, report: StatusReport) -> int:
    if args.json:
        print_json(report.to_json())
    else:
        console.print(status_table(report))
        if report.pending:
            console.print(f"[yellow]pending:[/] {report.pending}", soft_wrap=True)
        for p in report.patches:
            if "proves nothing" in p.verified:  # verification.proof: passes without it too
                console.print(
                    f"[yellow]warning:[/] {p.id}: its tests pass without it too: they prove "
                    "nothing; add a test that fails without the patch",
                    soft_wrap=True,
                )
    return 0


def reset_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.reset import reset_target

    tree, report = reset_target(
        project=project_of(args), target=args.target, where=where_of(args), force=args.force
    )
    _say_recovered(args, report.recovered)
    if args.json:
        print_json(
            {
                "target": args.target,
                "restored": list(report.restored),
                "saved_aside": str(report.saved_aside) if report.saved_aside else None,
                "modes_kept": list(report.modes_kept),
                "recovered": _recovered_json(report.recovered),
            }
        )
        return 0
    console.print(f"restored {len(report.restored)} file(s) in {tree.root}")
    if report.modes_kept:
        console.print(f"kept the mode you gave: {', '.join(report.modes_kept)}")
    if report.saved_aside:
        console.print(f"your edits were saved in {report.saved_aside}")
    return 0


def show_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.show import show_patch

    if args.releases is not None:
        return _show_releases(args)
    diff = show_patch(
        project=project_of(args), patch_id=args.patch, target=args.target, checkout=args.checkout
    )
    sys.stdout.buffer.write(diff)
    return 0


def _show_releases(args: argparse.Namespace) -> int:
    """``show PATCH --releases``: the patch's matrix row, one release a line."""
    from patchkit.ops.matrix import matrix

    project = project_of(args)
    meta = project.patch(args.patch)
    row = matrix(project=project, target=meta.target, releases=args.releases, only=[meta.id])
    works = [c.release for c in row.cells if c.outcome in ("applied", "carried")]
    for cell in row.cells:
        console.print(f"{cell.release:>14}  {cell.shown}", markup=False, highlight=False)
    [info] = row.rows
    said = [f"works with: {', '.join(works) or 'none of these'}"]
    said += [f"absorbed by {info.absorbed_by}"] if info.absorbed_by else []
    said += [f"broke in {info.broken_by}"] if info.broken_by else []
    console.print(f"{meta.id} (locked at {row.locked}): " + "; ".join(said), markup=False)
    return 0


def record_cmd(args: argparse.Namespace) -> int:
    from patchkit.ops.record import record_target

    if args.installed:
        raise ConfigError(
            "record works on a checkout, not on an installed package",
            hint="make the edit in a checkout (`patchkit fetch`), then record",
        )
    report = record_target(
        project=project_of(args),
        target=args.target,
        patch_id=args.patch,
        checkout=args.checkout,
        include=args.include,
        into=args.into,
        title=args.title,
        why=args.why,
        author=args.author,
        paths=args.paths,
    )
    verb = "wrote" if report.changed else "unchanged:"
    console.print(f"{verb} {report.patch_file} ({', '.join(report.files)})")
    return 0
