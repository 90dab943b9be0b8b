"""A mod's self-checks given to the patches they check: each probe of a check goes to the last
patch made before it that changes the probe's file, and the check to the last of those (in the
series every patch before it is applied too). A check that cannot be a test, or looks at a file
no patch of the mod changed, is a refusal naming its line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from patchkit.engine.diff.parse import parse_diff
from patchkit.errors import PatchkitError
from patchkit.importers.model import Candidate
from patchkit.importers.selfcheck import CheckTest, Placed, SelfCheck, place


def touched(candidate: Candidate) -> tuple[str, ...]:
    """The repository paths the candidate changes."""
    if candidate.diff is None:
        return candidate.paths
    try:
        return tuple(p for fp in parse_diff(candidate.diff, candidate.source) for p in fp.paths)
    except PatchkitError:
        return ()


def attach(
    found: Sequence[Candidate], checks: Sequence[tuple[int, SelfCheck]], target: str
) -> tuple[list[Candidate], list[str]]:
    """``found`` with each check given to its patch; and the checks that are no test, said."""
    out = list(found)
    refused: list[str] = []
    for before, check in checks:
        if check.refused:
            refused.append(
                f"line {check.line}: a self-check not made a test ({check.refused}): {check.text}"
            )
            continue
        placed: list[Placed] = []
        owner = -1
        for probe in check.probes:
            at = next(
                (
                    (i, p)
                    for i in reversed(range(min(before, len(out))))
                    if (p := place(probe, target, touched(out[i]))) is not None
                ),
                None,
            )
            if at is None:
                refused.append(
                    f"line {check.line}: a self-check not made a test (it looks at "
                    f"{probe.dotted}, which no patch of the mod made before it changes): "
                    f"{check.text}"
                )
                break
            owner = max(owner, at[0])
            placed.append(at[1])
        else:
            test = CheckTest(check.line, check.text, tuple(placed))
            out[owner] = replace(out[owner], checks=(*out[owner].checks, test))
    return out, refused
