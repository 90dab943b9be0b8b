"""Before ``export-pr``: what upstream already has at its newest release.

A patch made against an old pin may have been fixed upstream since (the same change, or one
that makes it hold): a PR for it is a duplicate a maintainer closes at once. Each patch is
judged at the release (``latest`` by default on the command line) as a matrix cell is, against
the lock; ``upstreamed`` ones are left out (refused when named), ``partly-upstreamed`` ones are
said. Cells a ``patchkit matrix`` run computed are reused. Not being able to look (offline, no
such release) is said in the report, not fatal: the check is advice, the export still stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.errors import ConfigError, PatchkitError
from patchkit.model import Outcome, PatchMeta
from patchkit.ops.context import Project
from patchkit.ops.matrix import cells_at


@dataclass(frozen=True)
class NewestCheck:
    kept: list[PatchMeta]  # still to export
    left_out: tuple[str, ...]  # "<id>: upstream <target> <release> already has this change"
    note: str  # what was checked, for the report ("" when not asked)


def not_absorbed(
    project: Project, target: str, metas: list[PatchMeta], ref: str | None, *, named: bool
) -> NewestCheck:
    if ref is None or not metas:
        return NewestCheck(metas, (), "")
    try:
        label, cells = cells_at(project=project, target=target, ref=ref, patch_ids=_ids(metas))
    except PatchkitError as err:
        return NewestCheck(metas, (), f"not checked against upstream {target} {ref}: {err}")
    took = [m for m in metas if cells[m.id].outcome == Outcome.UPSTREAMED.value]
    partly = [m.id for m in metas if cells[m.id].outcome == Outcome.PARTLY_UPSTREAMED.value]
    if named and took:
        raise ConfigError(
            f"upstream {target} {label} already has the change of "
            + ", ".join(m.id for m in took)
            + ": a PR for it would be a duplicate",
            hint=f"retire it by moving the pin (patchkit rebase --target {target} --onto {label}),"
            " or export anyway with --check-against none",
        )
    said = [f"already there: {', '.join(m.id for m in took)} (left out)"] if took else []
    if partly:
        said.append(f"partly there: {', '.join(partly)} (base the branch there: --onto {label})")
    others = len(metas) > len(took) + len(partly)
    rest = ["none of the others is there yet"] if said and others else []
    note = f"checked against upstream {target} {label}: " + "; ".join(
        [*said, *rest] if said else ["none of these changes is there yet"]
    )
    gone = tuple(f"{m.id}: upstream {target} {label} already has this change" for m in took)
    return NewestCheck([m for m in metas if m not in took], gone, note)


def _ids(metas: Sequence[PatchMeta]) -> list[str]:
    return [m.id for m in metas]
