"""The report ``patchkit watch`` writes for people: per patch absorbed / carried / broke, with
the hunk and the upstream change that broke it and the verification; as Markdown (also the pull
request's text), JSON and a self-contained HTML page beside the matrix page.

Everything here is a pure function of a :class:`WatchSummary`: no clock, no paths of this
machine, so the same run gives the same bytes (a second run changes nothing).
"""

from __future__ import annotations

import enum
import html
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from patchkit.outcome import Outcome

MD, JSON, HTML, MATRIX = "report.md", "report.json", "report.html", "matrix.html"
_DIFF_LINES = 40  # lines of an upstream change shown per broken hunk


class Fate(str, enum.Enum):
    ABSORBED = "absorbed"  # upstream has the change: the patch is retired
    CARRIED = "carried"  # still needed; it applies on the new release
    BROKE = "broke"  # it stops there: a person fixes it (kept pending on the branch)


@dataclass(frozen=True)
class BrokenHunk:
    """Where a patch broke: the hunk, why, and what upstream changed around it."""

    file: str
    hunk: str
    reason: str
    upstream_change: str  # the upstream diff of that file from the lock to where it broke


@dataclass(frozen=True)
class PatchLine:
    id: str
    fate: Fate
    outcome: Outcome  # the engine's outcome at the new release
    release: str | None = None  # the release that absorbed it / where it first broke
    pr: str | None = None  # the upstream pull request that absorbed it, when known
    verification: str = ""  # the tests' result at the new release ("" when not asked)
    hunks: tuple[BrokenHunk, ...] = ()
    message: str = ""
    tests_fail: bool = False  # it applies there, but its tests fail: broke all the same

    @property
    def shown(self) -> str:
        """The outcome as the report says it."""
        return "carried, tests fail" if self.tests_fail else self.outcome.value


@dataclass(frozen=True)
class WatchSummary:
    target: str
    lock_version: str
    onto: str  # the newest upstream version watched onto
    commit: str  # its upstream commit
    newer: tuple[str, ...]  # every version after the lock, oldest first
    branch: str
    branch_state: str  # created / updated / unchanged / left alone
    patches: tuple[PatchLine, ...]

    def having(self, fate: Fate) -> list[PatchLine]:
        return [p for p in self.patches if p.fate is fate]

    @property
    def title(self) -> str:
        return f"{self.target} {self.lock_version} → {self.onto}: " + ", ".join(
            f"{len(self.having(f))} {f.value}" for f in Fate
        )


def to_json(summary: WatchSummary) -> dict[str, Any]:
    data = asdict(summary)
    for line, patch in zip(data["patches"], summary.patches, strict=True):
        line["outcome"] = patch.shown
        del line["tests_fail"]
    data["counts"] = {f.value: len(summary.having(f)) for f in Fate}
    return data


def render_markdown(summary: WatchSummary) -> str:
    s = summary
    lines = [
        f"# {s.target}: {s.lock_version} → {s.onto}",
        "",
        f"Upstream versions after the lock: {', '.join(s.newer)}. The branch `{s.branch}` "
        f"moves the lock to {s.onto} (`{s.commit[:12]}`).",
        "",
        "| patch | fate | outcome | release | upstream PR | tests |",
        "|---|---|---|---|---|---|",
    ]
    for p in s.patches:
        cells = (p.id, p.fate.value, p.shown, p.release or "", p.pr or "", p.verification)
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    lines += _absorbed_md(s.having(Fate.ABSORBED))
    for p in s.having(Fate.BROKE):
        lines += _broke_md(p)
    return "\n".join(lines) + "\n"


def _absorbed_md(absorbed: Sequence[PatchLine]) -> list[str]:
    if not absorbed:
        return []
    lines = ["", "## Absorbed upstream (retired on this branch)", ""]
    for p in absorbed:
        pr = f", {p.pr}" if p.pr else ""
        lines.append(f"- `{p.id}`: in {p.release or 'the new release'}{pr}")
        if p.message:  # upstream reworked that code since: a person checks the fix is there
            lines.append(f"  {p.message}")
    return lines


def _broke_md(patch: PatchLine) -> list[str]:
    first = f" (first at {patch.release})" if patch.release else ""
    lines = ["", f"## `{patch.id}` broke{first}: {patch.shown}", ""]
    if patch.message:
        lines += [patch.message, ""]
    for h in patch.hunks:
        lines += [f"- `{h.file}` {h.hunk}: {h.reason}".rstrip()]
        if h.upstream_change:
            lines += ["", *_fenced(h.upstream_change, "diff"), ""]
    return lines


def _fenced(text: str, lang: str) -> list[str]:
    body = text.splitlines()[:_DIFF_LINES]
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", text)), default=0))
    return [f"{fence}{lang}", *body, fence]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_html(summary: WatchSummary) -> str:
    """A self-contained page: the summary table and each broken patch's hunks."""
    s, esc = summary, html.escape
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{esc(c)}</td>"
            for c in (p.id, p.fate.value, p.shown, p.release or "", p.pr or "", p.verification)
        )
        + "</tr>"
        for p in s.patches
    )
    broke = "".join(
        f"<h2>{esc(p.id)} broke{esc(' at ' + p.release if p.release else '')}</h2>"
        + "".join(
            f"<p><code>{esc(h.file)}</code> {esc(h.hunk)}: {esc(h.reason)}</p>"
            f"<pre>{esc(h.upstream_change)}</pre>"
            for h in p.hunks
        )
        for p in s.having(Fate.BROKE)
    )
    head = "<th>patch</th><th>fate</th><th>outcome</th><th>release</th><th>PR</th><th>tests</th>"
    return (
        "<!doctype html><meta charset=utf-8>"
        f"<title>{esc(s.title)}</title>"
        "<style>body{font:14px sans-serif;margin:2em}td,th{border:1px solid #ccc;padding:4px}"
        "table{border-collapse:collapse}pre{background:#f6f6f6;padding:8px;overflow:auto}</style>"
        f"<h1>{esc(s.target)}: {esc(s.lock_version)} → {esc(s.onto)}</h1>"
        f"<p>Branch <code>{esc(s.branch)}</code> ({esc(s.branch_state)}); versions after the "
        f"lock: {esc(', '.join(s.newer))}. <a href='{MATRIX}'>The matrix</a>.</p>"
        f"<table><tr>{head}</tr>{rows}</table>{broke}"
    )


def write_report(directory: Path, summary: WatchSummary, matrix_html: str | None) -> Path:
    """``report.md``, ``report.json``, ``report.html`` (and ``matrix.html``) in ``directory``;
    returns the Markdown's path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / JSON).write_text(json.dumps(to_json(summary), indent=2) + "\n")
    (directory / HTML).write_text(render_html(summary), encoding="utf-8")
    if matrix_html is not None:
        (directory / MATRIX).write_text(matrix_html, encoding="utf-8")
    md = directory / MD
    md.write_text(render_markdown(summary), encoding="utf-8")
    return md
