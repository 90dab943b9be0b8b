"""``patchkit apply`` on the command line: its arguments, the apply, and what it says after.
A run goes through ``cli/warm.py`` (the recorded run replayed when nothing changed), whose full
path calls ``run_apply`` and ``show_apply`` here."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from patchkit.cli.explain import explained_json, print_explained
from patchkit.cli.options import add_explain, add_tree, where_of
from patchkit.cli.render import (
    console,
    err_console,
    print_json,
    recovered_json,
    results_json,
    results_table,
    say_recovered,
    status_table,
)
from patchkit.model import PatchMeta
from patchkit.ops.status import status
from patchkit.outcome import Outcome, PatchResult
from patchkit.project.load import Project
from patchkit.workspace.tree import Tree

if TYPE_CHECKING:
    from patchkit.ops.apply import TargetApply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_tree(parser, tests=True)
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATCH",
        help="drop an opt-in patch applied before (a plain apply keeps them)",
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="patch files that have uncommitted changes (reset restores them)",
    )
    parser.add_argument(
        "--allow-other-commit",
        action="store_true",
        help="apply to a tree at another upstream commit (three-way merges)",
    )
    parser.add_argument(
        "--verify", action="store_true", help="then run each patch's tests and record the result"
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="a patch that fails is left out and the rest apply (exit 11 says so); never the "
        'default (a patch\'s own on_failure = "skip" does the same for it alone)',
    )
    add_explain(parser)


def run_apply(args: argparse.Namespace, project: Project) -> TargetApply:
    """``apply`` as the arguments ask; a failure is rendered, then raised."""
    from patchkit.ops.apply import apply_target  # the engine: not for status
    from patchkit.ops.apply_tree import ApplyFailed  # (likewise)

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
        _render_failed(args, exc.results)
        exc.hint = _apply_failed_hint(args.target, exc.results)
        raise


def show_apply(args: argparse.Namespace, project: Project, done: TargetApply) -> int:
    """What ``apply`` says after it applied (and runs ``--verify``)."""
    _say_before(args, done)
    report, tree = done.report, done.tree
    say_recovered(report.recovered, as_json=args.json)
    if args.json:
        data = results_json(args.target, report.commit, report.results) | {
            "noop": report.noop,
            "written": not report.noop,  # already applied: nothing was written
            "recovered": recovered_json(report.recovered),
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
    return _say_skipped(report.skipped)


def _say_skipped(skipped: Sequence[PatchResult]) -> int:
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


def _verify_after_apply(
    args: argparse.Namespace, project: Project, tree: Tree, patches: list[PatchMeta]
) -> None:
    from patchkit.cli.verify import render  # verification: only for --verify
    from patchkit.ops.verify import raise_for, verify_applied

    report = verify_applied(tree=tree, lock=project.lock, patches=patches, python=args.python)
    render(report, as_json=args.json, python=args.python)
    raise_for(report)


def _render_failed(args: argparse.Namespace, results: Sequence[PatchResult]) -> None:
    """The results of a refused apply: nothing was written."""
    if args.json:
        data = results_json(args.target, None, results, written=False)
        print_json(data | explained_json(args, results))
    else:
        console.print(results_table("apply: FAILED", results, written=False))
        print_explained(args, results)
