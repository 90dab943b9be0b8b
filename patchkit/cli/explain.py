"""``--explain``: where each hunk of a diff went and by which rule, for people and for JSON."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from patchkit.cli.render import console
from patchkit.outcome import PatchResult, Placement, Rule


def _scope(scope: Sequence[str]) -> str:
    return " > ".join(scope) if scope else "top level"


def placement_line(mark: Placement) -> str:
    """One hunk, one line: ``path:line (scope) <- rule``, candidates when it stopped."""
    where = f"{mark.path}:{mark.line}" if mark.line else mark.path
    text = f"{mark.hunk}  {where}"
    if mark.line or mark.scope:
        text += f" in {_scope(mark.scope)}"
    text += f"  by {mark.rule.value}" if mark.rule is not Rule.NONE else "  not placed"
    if mark.moved_from:
        text += f" (moved from {mark.moved_from})"
    if mark.candidates:
        text += "; candidates: " + ", ".join(
            f"line {c.line} in {_scope(c.scope)}" for c in mark.candidates
        )
    if mark.note:
        text += f"  [{mark.note}]"
    return text


def explain_lines(results: Sequence[PatchResult]) -> list[str]:
    lines: list[str] = []
    for result in results:
        if not result.placements:
            continue
        lines.append(f"{result.patch_id}: {result.outcome.value}")
        lines += [f"  {placement_line(m)}" for m in result.placements]
    return lines


def placement_json(mark: Placement) -> dict[str, Any]:
    return {
        "file": mark.path,
        "hunk": mark.hunk,
        "rule": mark.rule.value,
        "line": mark.line,
        "scope": list(mark.scope),
        "moved_from": mark.moved_from,
        "candidates": [{"line": c.line, "scope": list(c.scope)} for c in mark.candidates],
        "note": mark.note,
    }


def explain_json(results: Sequence[PatchResult]) -> dict[str, list[dict[str, Any]]]:
    """patch id -> its hunks' placements."""
    return {r.patch_id: [placement_json(m) for m in r.placements] for r in results}


def print_explained(args: argparse.Namespace, results: Sequence[PatchResult]) -> None:
    """The placements as plain lines, when ``--explain`` asked for them."""
    if getattr(args, "explain", False):
        for line in explain_lines(results):
            console.print(line, markup=False, highlight=False)


def explained_json(args: argparse.Namespace, results: Sequence[PatchResult]) -> dict[str, Any]:
    """``{"placements": {patch id: [...]}}`` for ``--json --explain``; empty otherwise."""
    return {"placements": explain_json(results)} if getattr(args, "explain", False) else {}
