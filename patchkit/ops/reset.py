"""``patchkit reset``: put every file patchkit changed back to its upstream bytes, in the tree of
a target that a ``Where`` names (the work itself: ``workspace.reset``)."""

from __future__ import annotations

from patchkit.ops.context import CACHED, Where, open_tree
from patchkit.project.load import Project
from patchkit.workspace.reset import ResetReport, reset
from patchkit.workspace.tree import Tree


def reset_target(
    *, project: Project, target: str, where: Where = CACHED, force: bool = False
) -> tuple[Tree, ResetReport]:
    """``reset`` on the tree of ``target`` that ``where`` names; the tree is returned with the
    report so a caller can say where it was."""
    tree = open_tree(project.entry(target), where)
    return tree, reset(tree=tree, force=force)
