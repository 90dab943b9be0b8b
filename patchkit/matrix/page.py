"""The matrix as one self-contained HTML page: no network at view time (styles and script are
inline). A table of patches x releases, a colour per outcome, the release where each patch was
absorbed or broke, filters by set and by outcome, and each cell linking to its detail (conflict
hunks, the engine's explanation, the last verification per GPU kind)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from patchkit.matrix.table import Cell, Matrix, Row

COLOURS = {
    "applied": "#2e7d32",
    "carried": "#66bb6a",
    "upstreamed": "#1565c0",
    "partly-upstreamed": "#64b5f6",
    "conflict": "#c62828",
    "gone": "#6d4c41",
    "ambiguous": "#ef6c00",
    "failed": "#000000",
}

_CSS = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table.matrix{border-collapse:collapse}
.matrix th,.matrix td{border:1px solid #ccc;padding:3px 6px;text-align:center;white-space:nowrap}
.matrix td.patch{text-align:left}
.matrix td.cell a{color:#fff;text-decoration:none;display:block}
.matrix td.cell.dim{opacity:.15}
.matrix tr.hidden,section.detail.hidden{display:none}
.filters{margin:.8em 0}.filters fieldset{display:inline-block;margin-right:1em}
.tag{font-size:11px;color:#555}.verified{font-size:10px;display:block}
section.detail{border-top:1px solid #ddd;padding:.4em 0}
section.detail:target{background:#fff8c4}
pre{background:#f5f5f5;padding:.5em;overflow:auto;max-height:24em}
"""
_CSS += "".join(f".o-{o}{{background:{c}}}" for o, c in COLOURS.items())

_JS = """
function applyFilters(){
  const sets=new Set([...document.querySelectorAll('input.f-set:checked')].map(e=>e.value));
  const outs=new Set([...document.querySelectorAll('input.f-outcome:checked')].map(e=>e.value));
  document.querySelectorAll('tr.row').forEach(tr=>{
    let shown=0;
    tr.querySelectorAll('td.cell').forEach(td=>{
      const on=outs.has(td.dataset.outcome); td.classList.toggle('dim',!on); if(on)shown++;});
    tr.classList.toggle('hidden',!sets.has(tr.dataset.set)||shown===0);
  });
  document.getElementById('shown').textContent=
    document.querySelectorAll('tr.row:not(.hidden)').length;
}
document.querySelectorAll('.filters input').forEach(e=>e.addEventListener('change',applyFilters));
applyFilters();
"""


def render_html(matrix: Matrix) -> str:
    ids = {id(c): f"c-{n}" for n, c in enumerate(matrix.cells)}
    body = [
        f"<h1>{escape(matrix.target)}: patches x releases</h1>",
        f"<p>Locked at <b>{escape(matrix.locked)}</b>; {len(matrix.rows)} patches, "
        f"{len(matrix.releases)} releases; engine {escape(matrix.engine)}. "
        f"Rows shown: <span id='shown'>{len(matrix.rows)}</span>.</p>",
        _filters(matrix),
        _table(matrix, ids),
        "<h2>Cells</h2>",
        *(_detail(c, ids[id(c)]) for c in matrix.cells),
    ]
    data = json.dumps(matrix.to_json(), sort_keys=True).replace("</", "<\\/")
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>patchkit matrix: {escape(matrix.target)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}"
        f"<script type='application/json' id='matrix-data'>{data}</script>"
        f"<script>{_JS}</script></body></html>\n"
    )


def _filters(matrix: Matrix) -> str:
    sets = sorted({r.set for r in matrix.rows})
    outcomes = [o for o in COLOURS if any(c.outcome == o for c in matrix.cells)]
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


def _table(matrix: Matrix, ids: dict[int, str]) -> str:
    head = "".join(f"<th>{escape(r)}</th>" for r in matrix.releases)
    rows = []
    for row in matrix.rows:
        cells = [c for c in matrix.cells if c.patch == row.patch]
        tds = "".join(_cell(c, ids[id(c)]) for c in cells)
        rows.append(
            f"<tr class='row' data-set='{escape(row.set)}' data-patch='{escape(row.patch)}'>"
            f"{_patch_cell(row)}<td>{escape(row.set)}</td>{tds}"
            f"<td>{escape(_absorbed(row))}</td><td>{escape(row.broken_by or '-')}</td></tr>"
        )
    return (
        "<table class='matrix'><thead><tr><th>patch</th><th>set</th>"
        f"{head}<th>absorbed by</th><th>broke in</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _absorbed(row: Row) -> str:
    if row.absorbed_by and row.reworked_in:
        return f"{row.absorbed_by} (upstream reworked the code in {row.reworked_in})"
    return row.absorbed_by or "-"


def _patch_cell(row: Row) -> str:
    tags = f"{row.kind}{', opt-in' if row.optional else ''}"
    return (
        f"<td class='patch' title='{escape(row.title)}'><code>{escape(row.patch)}</code> "
        f"<span class='tag'>{escape(tags)}</span></td>"
    )


def _cell(cell: Cell, anchor: str) -> str:
    verified = "".join(
        f"<span class='verified'>{escape(_short(k))}: {escape(v['result'])}</span>"
        for k, v in sorted((cell.verified or {}).items())
    )
    return (
        f"<td class='cell o-{escape(cell.outcome)}' data-outcome='{escape(cell.outcome)}' "
        f"data-release='{escape(cell.release)}'><a href='#{anchor}'>"
        f"{escape(cell.outcome)}{verified}</a></td>"
    )


def _short(kind: str) -> str:
    return kind.removeprefix("NVIDIA ").split(" (")[0]


def _detail(cell: Cell, anchor: str) -> str:
    head = f"{cell.patch} @ {cell.release}: {cell.outcome} (step {cell.step})"
    if cell.absorbed_by:
        head += f", absorbed by {cell.absorbed_by}"
    parts = [f"<h3>{escape(head)}</h3>"]
    detail = dict(cell.detail)
    message = detail.pop("message", "")
    if message:
        parts.append(f"<pre class='message'>{escape(str(message))}</pre>")
    hunks = detail.pop("details", [])
    if hunks:
        parts.append(_hunks(hunks))
    rest = {k: v for k, v in detail.items() if v not in (None, "", [], {})}
    if rest:  # whatever else the outcome carries (the engine's explanation, ...)
        text = json.dumps(rest, indent=2, sort_keys=True)
        parts.append(f"<pre class='explain'>{escape(text)}</pre>")
    for kind, v in sorted((cell.verified or {}).items()):
        parts.append(f"<p class='verification'>{escape(_verification(kind, v))}</p>")
    return f"<section class='detail' id='{anchor}'>{''.join(parts)}</section>"


def _hunks(hunks: list[dict[str, Any]]) -> str:
    items = []
    for h in hunks:
        title = f"{h.get('path', '')} {h.get('hunk', '')}: {h.get('reason', '')}"
        sides = "".join(
            f"<pre class='{side}'>{escape(str(h[side]))}</pre>"
            for side in ("ours", "theirs")
            if h.get(side)
        )
        items.append(f"<li><b>{escape(title)}</b>{sides}</li>")
    return f"<ul class='hunks'>{''.join(items)}</ul>"


def _verification(kind: str, v: dict[str, Any]) -> str:
    text = f"verified on {kind}: {v['result']}"
    text += f" ({v['reason']})" if v.get("reason") else ""
    text += f" at {v.get('time')}" + (", stale: the patch changed since" if v.get("stale") else "")
    for b in v.get("bench") or []:
        text += f"; bench {b['bench']} {b['case']}: {b['status']}"
        if b.get("ratio") is not None:
            text += f", x{b['ratio']:.2f} {b['metric']}" + (" (slower)" if b.get("slower") else "")
    return text
