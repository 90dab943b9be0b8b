"""Proof of each PR's upstream test, made where its device is (``scripts/upstream_tests.py
prove`` on a GPU machine, offline): for each patch, its change and the test it adds to
upstream's suite are put on the pinned upstream commit of a checkout, and the test is run on
that tree and on the same commit with only the test added. Each result keeps both runs, the
device and versions, the upstream tree and commit, and the digests of the patch and the test:
``export-pr`` finds it by those (:func:`patchkit.export.upstream_test.recorded`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import PatchkitError
from patchkit.export.branches import base_commit
from patchkit.export.build import Build, test_tree
from patchkit.export.proof import run_both
from patchkit.export.prtext import Identity
from patchkit.export.upstream_test import UpstreamRun, command
from patchkit.gitrepo import GitRepo
from patchkit.model import PatchMeta
from patchkit.ops.export_pr import build_context
from patchkit.project.load import Project

_NOBODY = Identity("upstream test run", "run@invalid")  # signs nothing: no commit is kept


@dataclass(frozen=True)
class Proved:
    patch_id: str
    run: UpstreamRun  # result "not run" with the reason when it could not be run at all

    @property
    def proven(self) -> bool:
        return self.run.proven


def prove_upstream_tests(
    *,
    project: Project,
    target: str,
    tree_root: Path,
    patch_ids: Sequence[str] = (),
    python: str = sys.executable,
    prepare: str = "",
) -> list[Proved]:
    """Each named patch of ``target`` (none: every patch of it with an upstream test, opt-in and
    merged ones too) proved on the checkout at ``tree_root``, from its pinned commit;
    ``prepare`` is run in each checkout the test runs in (:func:`patchkit.export.proof.run_both`)."""
    entry = project.entry(target)
    metas = _chosen(project, target, patch_ids)
    with GitRepo(tree_root) as repo:
        base, real = base_commit(repo, entry, None)
        build = build_context(project, entry, repo, base, None, _NOBODY, tree_root)
        upstream = base if real else entry.commit
        try:
            return [_prove(build, meta, upstream, python, prepare) for meta in metas]
        finally:
            build.blobs.close()


def _prove(build: Build, meta: PatchMeta, upstream: str, python: str, prepare: str) -> Proved:
    test = meta.export.test
    assert test is not None
    try:
        tree, parent = test_tree(build, meta)
        run = run_both(
            build.repo, meta, tree, parent, upstream=upstream, python=python, prepare=prepare
        )
        return Proved(meta.id, run)
    except PatchkitError as err:
        return Proved(meta.id, UpstreamRun(command(test), "not run", err.message))


def _chosen(project: Project, target: str, patch_ids: Sequence[str]) -> list[PatchMeta]:
    every = [p for s in project.sets for p in s.for_target(target)]
    metas = [project.patch(pid) for pid in dict.fromkeys(patch_ids)] if patch_ids else every
    return [m for m in metas if m.export.test is not None]
