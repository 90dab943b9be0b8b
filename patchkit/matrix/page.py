"""The matrix as one self-contained HTML page people read: no network at view time (style and
script inline, :mod:`patchkit.matrix.page_assets`). Patches down, releases across, a colour per
outcome (striped where the patch's tests fail there), the patch column and the summary columns
(``absorbed by``, ``broke in``) fixed while the releases scroll, filters by set and outcome, and
a cell's detail (conflict hunks, the engine's explanation, the last verification per GPU kind)
shown on demand from one compact JSON block: each distinct detail once, long sides cut.

Every text from a patch, its metadata or upstream is escaped for where it goes: HTML text and
attributes with :func:`html.escape`, the JSON block with every ``<``, ``>`` and ``&`` as a
``\\u`` escape, so nothing (``</script>``, ``<!--<script>``) can end or change the script."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from patchkit.matrix.page_assets import COLOURS, CSS, JS
from patchkit.matrix.table import Cell, Matrix, Row

MAX_LINES = 40  # of one side of a conflict hunk, or of the explanation, in a cell's detail


def render_html(matrix: Matrix) -> str:
    body = [
        "<header>",
        f"<h1>{escape(matrix.target)}: patches x releases</h1>",
        f"<p>Locked at <b>{escape(matrix.locked)}</b>; {len(matrix.rows)} patches, "
        f"{len(matrix.releases)} releases; engine {escape(matrix.engine)}. "
        f"Rows shown: <span id='shown'>{len(matrix.rows)}</span>. "
        "Click a cell for its detail.</p>",
        _filters(matrix),
        _legend(),
        "</header>",
        f"<div class='scroll'>{_table(matrix)}</div>",
        "<aside id='detail' class='hidden' aria-live='polite'>"
        "<button id='close' type='button'>close</button><div id='detail-body'></div></aside>",
    ]
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>patchkit matrix: {escape(matrix.target)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}"
        f"<script type='application/json' id='matrix-cells'>{script_json(_data(matrix))}"
        f"</script><script>{JS}</script></body></html>\n"
    )


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element whatever its strings hold."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _filters(matrix: Matrix) -> str:
    sets = sorted({r.set for r in matrix.rows})
    outcomes = [o for o in COLOURS if any(c.outcome.value == o for c in matrix.cells)]
    return (
        "<div class='filters'>"
        + _checks("set", "f-set", sets)
        + _checks("outcome", "f-outcome", outcomes)
        + "</div>"
    )


def _checks(legend: str, cls: str, values: list[str]) -> str:
    boxes = "".join(
        f"<label><input type='checkbox' class='{cls}' value='{escape(v)}' "
        f"id='{cls}-{escape(v)}' checked> {escape(v)}</label> "
        for v in values
    )
    return f"<fieldset><legend>{legend}</legend>{boxes}</fieldset>"


def _legend() -> str:
    swatches = "".join(f"<span><i class='o-{o}'></i>{o}</span>" for o in COLOURS if o != "failed")
    fail = "<span><i class='o-carried' style='outline:1px dashed #000'></i>striped: its tests "
    return f"<p class='legend'>{swatches}{fail}fail at that release</span></p>"


def _table(matrix: Matrix) -> str:
    head = "".join(f"<th scope='col'>{escape(r)}</th>" for r in matrix.releases)
    numbers = {id(c): n for n, c in enumerate(matrix.cells)}
    rows = []
    for row in matrix.rows:
        cells = "".join(_cell(c, numbers[id(c)]) for c in matrix.cells if c.patch == row.patch)
        rows.append(
            f"<tr class='row' data-set='{escape(row.set)}' data-patch='{escape(row.patch)}'>"
            f"{_patch_cell(row)}{cells}<td class='sum s1'>{escape(_absorbed(row))}</td>"
            f"<td class='sum s2'>{escape(row.broken_by or '-')}</td></tr>"
        )
    return (
        "<table class='matrix'><thead><tr><th class='patch' scope='col'>patch</th>"
        f"{head}<th class='sum s1' scope='col'>absorbed by</th>"
        "<th class='sum s2' scope='col'>broke in</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _absorbed(row: Row) -> str:
    if row.absorbed_by and row.reworked_in:
        return f"{row.absorbed_by} (upstream reworked the code in {row.reworked_in})"
    return row.absorbed_by or "-"


def _patch_cell(row: Row) -> str:
    tags = f"{row.set} · {row.kind}{' · opt-in' if row.optional else ''}"
    return (
        f"<th class='patch' scope='row' title='{escape(row.title)}'>"
        f"<code>{escape(row.patch)}</code><span class='tag'>{escape(tags)}</span></th>"
    )


def _cell(cell: Cell, number: int) -> str:
    verified = "".join(
        f"<span class='verified'>{escape(_short(k))}: {escape(str(v.get('result')))}</span>"
        for k, v in sorted((cell.verified or {}).items())
    )
    fail = " fail" if cell.tests_fail else ""
    return (
        f"<td class='cell o-{escape(cell.outcome.value)}{fail}' "
        f"data-outcome='{escape(cell.outcome.value)}' "
        f"data-release='{escape(cell.release)}' data-cell='{number}' tabindex='0' "
        f"title='{escape(cell.shown)}'>{escape(cell.shown)}{verified}</td>"
    )


def _short(kind: str) -> str:
    return kind.removeprefix("NVIDIA ").split(" (")[0]


# -- the cells' details, as data ------------------------------------------------------------
def _data(matrix: Matrix) -> dict[str, Any]:
    details: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    cells = []
    for cell in matrix.cells:
        detail = _detail(cell)
        key = json.dumps(detail, sort_keys=True)
        if key not in seen:
            seen[key] = len(details)
            details.append(detail)
        cells.append({"head": _head(cell), "detail": seen[key], "verified": _verified(cell)})
    return {"cells": cells, "details": details}


def _head(cell: Cell) -> str:
    head = f"{cell.patch} @ {cell.release}: {cell.shown} (step {cell.step})"
    return head + (f", absorbed by {cell.absorbed_by}" if cell.absorbed_by else "")


def _detail(cell: Cell) -> dict[str, Any]:
    detail = dict(cell.detail)
    message = str(detail.pop("message", "") or "")
    hunks = [
        {
            "title": f"{h.get('path', '')} {h.get('hunk', '')}: {h.get('reason', '')}",
            "ours": _cut(str(h.get("ours") or "")) if h.get("theirs") else "",
            "theirs": _cut(str(h.get("theirs") or "")),
        }
        for h in detail.pop("details", None) or []
        if isinstance(h, dict)
    ]
    rest = {k: v for k, v in detail.items() if v not in (None, "", [], {})}
    explain = _cut(json.dumps(rest, indent=2, sort_keys=True)) if rest else ""
    return {"message": message, "hunks": hunks, "explain": explain}


def _cut(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= MAX_LINES:
        return text
    return "\n".join([*lines[:MAX_LINES], f"… {len(lines) - MAX_LINES} more lines"])


def _verified(cell: Cell) -> list[str]:
    return [_verification(kind, v) for kind, v in sorted((cell.verified or {}).items())]


def _verification(kind: str, v: dict[str, Any]) -> str:
    text = f"verified on {kind}: {v['result']}"
    text += f" ({v['reason']})" if v.get("reason") else ""
    text += f" at {v.get('time')}" + (", stale: the patch changed since" if v.get("stale") else "")
    for b in v.get("bench") or []:
        text += f"; bench {b['bench']} {b['case']}: {b['status']}"
        if b.get("ratio") is not None:
            text += f", x{b['ratio']:.2f} {b['metric']}" + (" (slower)" if b.get("slower") else "")
    return text
