"""The matrix page's style and script, inline (the page loads nothing from the network).

The table scrolls inside its box: the header row stays on top, the patch column on the left and
the summary columns (``absorbed by``, ``broke in``) on the right, so a page 1280 px wide shows
them all while the releases scroll. A cell's detail is built on demand, with ``textContent``
only, from the page's JSON (never parsed as HTML)."""

from __future__ import annotations

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

SUMMARY_PX = 112  # the width of each summary column: the first sticks this far from the right

CSS = (
    """
*{box-sizing:border-box}
body{font:14px system-ui,sans-serif;margin:1em 1.5em;color:#222}
h1{font-size:20px;margin:.2em 0}
.filters{margin:.5em 0}.filters fieldset{display:inline-block;margin:0 1em .3em 0;padding:.1em .6em}
.legend span{display:inline-block;margin-right:.8em;font-size:12px}
.legend i{display:inline-block;width:.9em;height:.9em;vertical-align:-1px;margin-right:.25em}
.scroll{overflow:auto;max-width:100%;max-height:calc(100vh - 12em);border:1px solid #ccc}
table.matrix{border-collapse:separate;border-spacing:0}
.matrix th,.matrix td{border:0 solid #ddd;border-width:0 1px 1px 0;padding:3px 6px;
  text-align:center;white-space:nowrap;background:#fff}
.matrix thead th{position:sticky;top:0;z-index:2;background:#f3f3f3}
.matrix .patch{position:sticky;left:0;z-index:1;text-align:left;white-space:normal;
  min-width:15em;max-width:24em;overflow-wrap:anywhere;border-right:2px solid #999}
.matrix thead .patch{z-index:3}
.matrix .patch code{white-space:nowrap;font-weight:600}
.matrix .sum{position:sticky;z-index:1;width:SUMpx;min-width:SUMpx;max-width:SUMpx;
  white-space:normal;font-size:12px}
.matrix .s1{right:SUMpx;border-left:2px solid #999}.matrix .s2{right:0}
.matrix thead .sum{z-index:3}
.matrix td.cell{color:#fff;cursor:pointer;min-width:6.5em;font-size:12px}
.matrix td.cell:focus{outline:3px solid #fbc02d;outline-offset:-3px}
.matrix td.cell.fail{background-image:repeating-linear-gradient(45deg,transparent 0 6px,
  rgba(0,0,0,.35) 6px 9px)}
.matrix td.cell.dim{opacity:.15}
.matrix tr.hidden{display:none}
.tag{display:block;font-size:11px;color:#555}.verified{font-size:10px;display:block}
#detail{position:fixed;right:0;bottom:0;left:0;max-height:45vh;overflow:auto;background:#fff;
  border-top:3px solid #555;padding:.5em 1.5em;box-shadow:0 -2px 8px rgba(0,0,0,.2)}
#detail.hidden{display:none}
#detail button{float:right}
#detail pre{background:#f5f5f5;padding:.5em;overflow:auto;max-height:18em;margin:.3em 0}
""".replace("SUM", str(SUMMARY_PX))
    + "".join(f".o-{o}{{background-color:{c}!important}}" for o, c in COLOURS.items())
)

JS = """
const DATA=JSON.parse(document.getElementById('matrix-cells').textContent);
function el(tag,text,cls){const e=document.createElement(tag);
  if(text!==undefined)e.textContent=text; if(cls)e.className=cls; return e;}
function show(n){
  const c=DATA.cells[n], d=DATA.details[c.detail]||{}, box=document.getElementById('detail-body');
  box.replaceChildren(el('h3',c.head));
  if(d.message)box.append(el('pre',d.message,'message'));
  for(const h of d.hunks||[]){box.append(el('h4',h.title));
    if(h.ours)box.append(el('div','upstream now (ours):'),el('pre',h.ours,'ours'));
    if(h.theirs)box.append(el('div','the patch wants (theirs):'),el('pre',h.theirs,'theirs'));}
  if(d.explain)box.append(el('pre',d.explain,'explain'));
  for(const v of c.verified)box.append(el('p',v,'verification'));
  document.getElementById('detail').classList.remove('hidden');
  history.replaceState(null,'','#c-'+n);
}
document.querySelectorAll('td.cell').forEach(td=>{
  const n=+td.dataset.cell; td.addEventListener('click',()=>show(n));
  td.addEventListener('keydown',e=>{if(e.key==='Enter'||e.key===' '){e.preventDefault();show(n);}});
});
document.getElementById('close').addEventListener('click',()=>{
  document.getElementById('detail').classList.add('hidden');});
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
const deep=/^#c-(\\d+)$/.exec(location.hash); if(deep&&DATA.cells[+deep[1]])show(+deep[1]);
"""
