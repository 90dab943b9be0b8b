"""Proof that a PR's upstream test shows its fix: the test runs on the upstream tree with the
change and without it (the test's own files added to both); it must fail without and pass with.

A run recorded for the same patch, test and upstream tree (``scripts/upstream_tests.py
prove`` on a GPU machine) is taken as it is; otherwise a CPU test is run here, in two
worktrees made from throwaway commits and removed after. A test that passes without the change,
or fails with it, proves nothing: the export of that patch stops, naming the test."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from patchkit.errors import UnprovenTest
from patchkit.export.upstream_test import (
    UpstreamRun,
    digest_of_test,
    not_run,
    recorded,
    run_in,
    same_change,
    test_files,
)
from patchkit.gitrepo import GitRepo
from patchkit.model import PatchMeta
from patchkit.project.sets import patch_digest

# the commits the test runs on are never kept: no one's identity, a fixed date
_RUN_ENV = {
    "GIT_AUTHOR_NAME": "upstream test run",
    "GIT_AUTHOR_EMAIL": "run@invalid",
    "GIT_COMMITTER_NAME": "upstream test run",
    "GIT_COMMITTER_EMAIL": "run@invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


def upstream_run(
    repo: GitRepo, meta: PatchMeta, tree: str, parent: str, *, upstream: str, run_tests: bool
) -> UpstreamRun | None:
    """The upstream test's runs from ``parent`` (``tree``: with the change and the test):
    recorded, else run here when it needs no GPU, else said not run."""
    test = meta.export.test
    if test is None:
        return None
    found = recorded(meta, base_tree_of(repo, parent))
    if found:
        return found
    if test.gpu:
        return not_run(meta, "it needs a GPU, and no run of it from this commit is recorded")
    if not run_tests:
        return not_run(meta, "not run at export")
    return run_both(repo, meta, tree, parent, upstream=upstream)


def base_tree_of(repo: GitRepo, commit: str) -> str:
    return repo.text("rev-parse", f"{commit}^{{tree}}").strip()


def run_both(
    repo: GitRepo,
    meta: PatchMeta,
    tree: str,
    parent: str,
    *,
    upstream: str,
    python: str = sys.executable,
    prepare: str = "",
) -> UpstreamRun:
    """The test run on ``tree`` and on ``parent`` with only the test's own files added.
    ``prepare``: a shell command run in each checkout first (what a build would leave there,
    such as FlashInfer's ``flashinfer/data`` links); it is the caller's own, never a patch's."""
    test = meta.export.test
    assert test is not None
    patched = _run_on(repo, meta, tree, parent, python, prepare)
    paths = test_files(test)
    added = [(p, sha, mode) for p, (mode, sha) in repo.ls_tree(tree, paths).items()]
    without = _run_on(repo, meta, repo.tree_with(parent, added), parent, python, prepare)
    return replace(
        patched,
        unpatched=f"{without.result} ({without.detail})",
        base_tree=base_tree_of(repo, parent),
        upstream=upstream,
        patch_digest=patch_digest(meta),
        tests_digest=digest_of_test(test),
    )


def _run_on(
    repo: GitRepo, meta: PatchMeta, tree: str, parent: str, python: str, prepare: str = ""
) -> UpstreamRun:
    """The upstream test run on a checkout of ``tree`` (made and removed here)."""
    commit = repo.commit_tree(tree, [parent], "upstream test run\n", _RUN_ENV)
    with tempfile.TemporaryDirectory(prefix="upstream-test-") as tmp:
        where = Path(tmp) / "tree"
        repo.add_worktree(where, commit)
        try:
            if prepare:
                done = subprocess.run(prepare, shell=True, cwd=where, check=False)
                if done.returncode:
                    why = f"the prepare command exited {done.returncode}"
                    return not_run(meta, why)
            return run_in(where, meta, tree, python=python)
        finally:
            repo.remove_worktree(where)


def check_proof(meta: PatchMeta, run: UpstreamRun | None) -> None:
    """Stop the patch's export when its upstream test ran both ways and does not show the fix."""
    if run is None or run.result in ("not run", "not added"):
        return
    if run.result == "failed":
        why = f"fails with the change ({run.detail})"
    elif run.proves_nothing:
        why = f"passes without the change too ({run.unpatched}): it cannot show the fix"
    else:
        return
    raise UnprovenTest(
        f"the upstream test of {meta.id}, `{run.command}`, {why}",
        hint="rewrite the test in its [export.test] diff until it fails on upstream's code "
        "and passes with the change, then export again",
    )


def elsewhere(meta: PatchMeta) -> UpstreamRun | None:
    """The latest recorded run of the same patch and test from another upstream commit."""
    runs = same_change(meta)
    return max(runs, key=lambda r: r.time) if runs else None
