"""``patchkit export-pr`` on the command line: arguments, the identity to sign with, and the
report for people."""

from __future__ import annotations

import argparse
from pathlib import Path

from patchkit.cli.options import add_json, add_project, add_sets, add_target, project_of
from patchkit.cli.render import console, print_json
from patchkit.errors import PatchFailed
from patchkit.export.prtext import Identity
from patchkit.export.results import ExportReport
from patchkit.ops.context import open_checkout
from patchkit.ops.export_pr import check_against_for, export_pr, target_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _add_what(parser)
    _add_how(parser)
    add_json(parser)


def _add_what(parser: argparse.ArgumentParser) -> None:
    """Which patches, from which project, onto which checkout and base."""
    add = parser.add_argument
    add("patches", nargs="*", metavar="PATCH", help="patch ids (default: all of --target)")
    add(
        "--patch",
        dest="more_patches",
        action="append",
        default=[],
        metavar="ID",
        help="a patch id to export (repeatable)",
    )
    add_target(parser, required=False, help="vllm, flashinfer, ... (default: the patches' target)")
    add_sets(parser, help="patch set (repeatable)")
    add_project(parser, help="holds upstream.lock (default: .)")
    add("--checkout", type=Path, help="the checkout to make branches in (default: the cache's)")
    add(
        "--onto",
        metavar="REF",
        default="newest",
        help="base the branches on REF (default: newest, upstream's newest commit: a git "
        "source's default branch, a clone's origin/HEAD, else the newest release fetched); pin: "
        "the lock's commit",
    )


def _add_how(parser: argparse.ArgumentParser) -> None:
    """How each branch is made, checked, pushed and proposed."""
    _add_who(parser)
    _add_publish(parser)
    _add_checks(parser)


def _add_who(parser: argparse.ArgumentParser) -> None:
    """Who signs and who reviewed, and the branches' names."""
    add = parser.add_argument
    add(
        "--identity",
        metavar="'NAME <EMAIL>'",
        help="author (default: the patch's [export] identity, else git config user.*)",
    )
    add(
        "--reviewed-by",
        metavar="'NAME <EMAIL>'",
        help="the person who reviewed every changed line and ran the tests (said in the text; "
        "vLLM needs it before --push or --open)",
    )
    add(
        "--branch-prefix",
        metavar="PREFIX",
        help="put before each branch name, made of the patch's title (default: git config "
        "patchkit.branchPrefix of the checkout, else none)",
    )


def _add_publish(parser: argparse.ArgumentParser) -> None:
    """Where the branches go and how they are proposed."""
    add = parser.add_argument
    add("--push", metavar="REMOTE", help="push the branches to your fork (a remote or URL)")
    add("--force", action="store_true", help="push to upstream, or replace branches moved by hand")
    add(
        "--open",
        dest="open_pr",
        action="store_true",
        help="with the GitHub CLI: check upstream for the same fix first (upstream-check), then "
        "comment on an open upstream PR, or open a new PR (needs --push)",
    )


def _add_checks(parser: argparse.ArgumentParser) -> None:
    """What is run and looked up before a branch is made."""
    add = parser.add_argument
    add(
        "--no-test-run",
        dest="run_tests",
        action="store_false",
        help="do not run the upstream test ([export.test]) on the exported tree here",
    )
    add(
        "--stack",
        action="store_true",
        help="one branch per patch, each on the previous one's (a series that depends on itself)",
    )
    add(
        "--check-against",
        metavar="RELEASE",
        help="leave out what upstream already has at RELEASE (default with --onto pin: latest, "
        "its newest release, HEAD for a git source; else none: the export onto upstream's newest "
        "code finds it there and writes a note instead); none: do not look",
    )


def report_lines(report: ExportReport) -> list[str]:
    lines = [report.checked] if report.checked else []
    if report.checkout:
        base = "upstream's commit" if report.upstream_base else "a source release's stand-in"
        lines.append(f"branches in {report.checkout}, on {base} {report.base[:12]}")
    if not report.upstream_base and report.exports:
        lines.append("  not pull-request branches: review the series; see the note above")
    lines += [f"left out: {why}" for why in report.left_out]
    lines += [f"stopped: {why}" for why in report.stopped]
    lines += [f"already upstream: {what}" for what in report.absorbed]
    for e in report.exports:
        lines.append(f"{e.state.value}: {e.branch} at {e.commit[:12]} ({', '.join(e.files)})")
        lines += [f"  carries first the patch it needs: {dep}" for dep in e.stacked_on]
        lines += [f"  {note}" for note in e.formatting]
        if e.upstream_test:
            t = e.upstream_test
            lines += [f"  upstream test: {t.command}: {t.result} ({t.detail})"]
            lines += [f"  without the change: {t.unpatched}"] if t.unpatched else []
            lines += [f"  on {t.where} ({t.time[:10]})"] if t.where else []
            lines += (
                ["  to add it, export from a clone of upstream's git history (--checkout CLONE, "
                 "or a git source in upstream.lock)"]
                if t.result == "not added" else []
            )  # fmt: skip
        lines += [f"  title: {e.text.title}", f"  text: {e.out_dir}/ (COMMIT_MSG, PR_BODY.md)"]
        lines += (
            [f"  upstream PR {e.comment_for} is open: no new PR; comment for it: COMMENT.md"]
            if e.comment_for
            else []
        )
        lines += [f"  pushed to {e.pushed_to}"] if e.pushed_to else []
        lines += [f"  comment posted on {e.commented}"] if e.commented else []
        lines += [f"  PR: {e.pr_url}"] if e.pr_url else []
    return lines


def run(args: argparse.Namespace) -> int:
    project = project_of(args)
    patch_ids = [*args.patches, *args.more_patches]
    target = args.target or target_of(project, patch_ids)
    tree = open_checkout(project.entry(target), args.checkout)
    identity = Identity.parse(args.identity) if args.identity else None
    report = export_pr(
        project=project, target=target, tree_root=tree.root, patch_ids=patch_ids,
        onto=args.onto, identity=identity, push_remote=args.push, force=args.force,
        open_pr=args.open_pr, run_tests=args.run_tests, stack=args.stack,
        check_against=check_against_for(args.check_against, args.onto),
        reviewed_by=Identity.parse(args.reviewed_by) if args.reviewed_by else None,
        branch_prefix=args.branch_prefix,
    )  # fmt: skip
    if args.json:
        print_json(report.to_json())
    for line in [] if args.json else report_lines(report):
        console.print(line, soft_wrap=True, markup=False, highlight=False)
    return PatchFailed.exit_code if report.stopped else 0
