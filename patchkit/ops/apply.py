"""``patchkit apply`` on a target: the project's series for it (opt-ins kept from an earlier
apply), on the tree a ``Where`` names, with what a person should hear first (pins that disagree,
prebuilt kernels, patches an installed package cannot take); the writing is ``apply_tree``'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.engine.series import touched_paths
from patchkit.model import Lock, PatchMeta
from patchkit.ops.apply_tree import ApplyReport, apply
from patchkit.ops.context import CACHED, Where, blobs_for, open_tree
from patchkit.project.load import Project
from patchkit.project.lock import tree_pin_problems
from patchkit.targets import pinned_versions
from patchkit.workspace.installed import InstalledTree, prebuilt_kernels
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree


# -- installed packages: patches to files the distribution holds ---------------------------------
@dataclass(frozen=True)
class NotApplicable:
    patch_id: str
    paths: tuple[str, ...]  # the repository paths the tree does not hold
    reason: str


def split_applicable(
    tree: Tree, patches: Sequence[PatchMeta]
) -> tuple[list[PatchMeta], list[NotApplicable]]:
    """Patches the tree holds every path of, and the rest with the paths it lacks named.

    A patch touching some held and some missing paths is not applicable as a whole: applying
    half a fix is worse than none."""
    applicable, skipped = [], []
    for meta in patches:
        missing = tuple(p for p in touched_paths(meta) if not tree.holds(p))
        if not missing:
            applicable.append(meta)
            continue
        reason = (
            f"{meta.id} changes {', '.join(missing)}, which the {tree.kind} tree at "
            f"{tree.root} does not contain (compiled or build-only sources)"
        )
        skipped.append(NotApplicable(meta.id, missing, reason))
    return applicable, skipped


# -- the verb, from a project and a target ------------------------------------------------------
@dataclass(frozen=True)
class TargetApply:
    """``apply`` on a target: the report, the tree it was made on, and what was said on the way."""

    report: ApplyReport
    tree: Tree
    patches: tuple[PatchMeta, ...]  # the series applied (opt-ins included)
    warnings: tuple[str, ...] = ()  # e.g. the tree's own pins disagree with the lock
    skipped: tuple[NotApplicable, ...] = ()  # patches an installed package cannot take


def apply_target(
    *,
    project: Project,
    target: str,
    where: Where = CACHED,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    allow_dirty: bool = False,
    allow_other_commit: bool = False,
    explain: bool = False,
    keep_going: bool = False,
) -> TargetApply:
    """Apply every patch of ``target``'s sets (plus the opt-ins in ``include``, and those applied
    to this tree before unless ``exclude`` names them) to the tree ``where`` names, all or
    nothing. Raises ``ApplyFailed`` (with per-patch results) when a patch does not apply;
    nothing is written then."""
    entry, listed = project.entry(target), project.listed(target)
    tree = open_tree(entry, where)
    kept = remembered_opt_ins(listed, tree, include=include, exclude=exclude)
    patches = project.patches(target, include=(*include, *kept))
    warnings = _warnings(project.lock, tree, kept)
    skipped: list[NotApplicable] = []
    if isinstance(tree, InstalledTree):
        patches, skipped = split_applicable(tree, patches)
    blobs = blobs_for(entry, tree)
    try:
        report = apply(
            tree=tree,
            entry=entry,
            patches=patches,
            blobs=blobs,
            allow_dirty=allow_dirty,
            allow_other_commit=allow_other_commit,
            explain=explain,
            keep_going=keep_going,
        )
    finally:
        blobs.close()
    return TargetApply(report, tree, tuple(patches), warnings, tuple(skipped))


def _warnings(lock: Lock, tree: Tree, kept: Sequence[str]) -> tuple[str, ...]:
    """What a person should hear before the results: pins that disagree, prebuilt kernels that
    make a patched source moot, opt-ins kept from an earlier apply."""
    prebuilt = prebuilt_kernels(tree)
    return (
        tuple(pin_warnings(lock, tree))
        + ((prebuilt,) if prebuilt else ())
        + tuple(
            f"kept opt-in patch {patch_id}, applied to {tree.root} before "
            f"(`--exclude {patch_id}` drops it)"
            for patch_id in kept
        )
    )


def remembered_opt_ins(
    listed: Sequence[PatchMeta], tree: Tree, *, include: Sequence[str], exclude: Sequence[str]
) -> list[str]:
    """Opt-in patches applied to ``tree`` earlier that this apply does not name: a plain apply
    after ``apply --include X`` keeps X (saying so) instead of dropping it in silence."""
    state = StateStore(tree.state_dir).load()
    optional = {p.id for p in listed if p.optional}
    earlier = [p.id for p in state.patches] if state else []
    return [i for i in earlier if i in optional and i not in include and i not in exclude]


def pin_warnings(lock: Lock, tree: Tree) -> list[str]:
    """Where the tree's own requirements pin another target at a version the lock does not."""
    pins = pinned_versions(tree.root, tree.target) if not isinstance(tree, InstalledTree) else {}
    return tree_pin_problems(lock, tree.target, pins)
