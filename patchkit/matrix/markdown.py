"""The matrix as Markdown, for issues and pull requests: one row per release, one column per
patch (releases outnumber patches), then one line per patch: where it was absorbed or broke and
where it was last verified."""

from __future__ import annotations

from typing import Any

from patchkit.matrix.table import Cell, Matrix, Row

MARK = {
    "applied": "✅",
    "carried": "🔁",
    "upstreamed": "⬆️",
    "partly-upstreamed": "◐",
    "conflict": "❌",
    "gone": "🕳️",
    "ambiguous": "❓",
    "failed": "💥",
}


def render_markdown(matrix: Matrix) -> str:
    ids = [r.patch for r in matrix.rows]
    lines = [
        f"**{matrix.target}**: {len(ids)} patches x {len(matrix.releases)} releases "
        f"(locked at {matrix.locked}; engine {matrix.engine})",
        "",
        "| release | " + " | ".join(f"`{i}`" for i in ids) + " |",
        "|---|" + "---|" * len(ids),
    ]
    for release in matrix.releases:
        marks = [_cell(matrix.cell(pid, release)) for pid in ids]
        lines.append(f"| {release} | " + " | ".join(marks) + " |")
    lines += [
        "",
        "| patch | set | absorbed by | broke in | last verified |",
        "|---|---|---|---|---|",
    ]
    for row in matrix.rows:
        opt = " (opt-in)" if row.optional else ""
        lines.append(
            f"| `{row.patch}`{opt} | {row.set} | {_absorbed(row)} | "
            f"{row.broken_by or '-'} | {_last_verified(matrix, row.patch)} |"
        )
    legend = ", ".join(f"{m} {o}" for o, m in MARK.items())
    return "\n".join([*lines, "", legend, ""])


def _absorbed(row: Row) -> str:
    if row.absorbed_by and row.reworked_in:
        return f"{row.absorbed_by} (upstream reworked the code in {row.reworked_in})"
    return row.absorbed_by or "-"


def _cell(cell: Cell) -> str:
    text = f"{MARK.get(cell.outcome.value, '')} {cell.shown}"
    if cell.verified:
        text += " · " + ", ".join(
            f"{_short(kind)} {v['result']}{_ratio(v)}" for kind, v in sorted(cell.verified.items())
        )
    return text


def _short(kind: str) -> str:
    return kind.removeprefix("NVIDIA ").split(" (")[0]


def _last_verified(matrix: Matrix, patch: str) -> str:
    seen = [
        f"{_short(kind)} {v['result']} on {c.release}" + (" (stale)" if v.get("stale") else "")
        for c in matrix.cells
        if c.patch == patch and c.verified
        for kind, v in sorted(c.verified.items())
    ]
    return "; ".join(seen) or "-"


def _ratio(summary: dict[str, Any]) -> str:
    """The benchmark ratios of a record ("x1.42"), where it has them."""
    ratios = [b["ratio"] for b in summary.get("bench") or [] if b.get("ratio") is not None]
    return " " + " ".join(f"x{r:.2f}" for r in ratios) if ratios else ""
