"""Rendering results for people (rich tables) and scripts (JSON with a stable shape)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from patchkit.model import Outcome, PatchResult
from patchkit.ops.status import PatchState, StatusReport

# Wide enough when output goes to a file or CI log (rich would assume 80 columns there).
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)

_OUTCOME_STYLE = {
    Outcome.APPLIED: "green",
    Outcome.CARRIED: "cyan",
    Outcome.UPSTREAMED: "blue",
    Outcome.PARTLY_UPSTREAMED: "yellow",
}
_STATE_STYLE = {
    PatchState.APPLIED: "green",
    PatchState.UPSTREAMED: "blue",
    PatchState.NOT_APPLIED: "dim",
    PatchState.MODIFIED: "yellow",
    PatchState.OUTDATED: "yellow",
    PatchState.RETIRED: "blue",
    PatchState.PENDING: "red",
}


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


def results_json(target: str, commit: str | None, results: Sequence[PatchResult]) -> dict:
    return {
        "target": target,
        "commit": commit,
        "patches": [
            {
                "id": r.patch_id,
                "state": r.outcome.value,
                "outcome": r.outcome.value,
                "step": r.step.value,
                "files": [c.path for c in r.changes],
                "message": r.message,
                "details": [
                    {"file": d.path, "hunk": d.hunk, "reason": d.reason} for d in r.details
                ],
            }
            for r in results
        ],
    }


def results_table(title: str, results: Sequence[PatchResult]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("patch", "outcome", "step", "files / why"):
        table.add_column(column)
    for r in results:
        style = _OUTCOME_STYLE.get(r.outcome, "red")
        info = ", ".join(c.path for c in r.changes) or r.message
        for d in r.details:
            info += f"\n{d.path} {d.hunk}: {d.reason}"
        table.add_row(r.patch_id, f"[{style}]{r.outcome.value}[/]", r.step.value, info)
    return table


def status_table(report: StatusReport) -> Table:
    title = f"{report.target} at {report.commit or 'unknown commit'} — {report.root}"
    table = Table(title=title, title_justify="left")
    speed = any(p.speed for p in report.patches)
    for column in ("patch", "set", "kind", "state", "files", "verified", *(["speed"] * speed)):
        table.add_column(column)
    for p in report.patches:
        style = _STATE_STYLE.get(p.state, "")
        name = p.id + (" (opt-in)" if p.optional else "")
        state = f"[{style}]{p.state.value}[/]" + ("\n[red]slower[/]" if p.slower else "")
        row = [name, p.set_name, p.kind, state, "\n".join(p.files), p.verified]
        table.add_row(*row, *([p.speed] * speed))
    return table
