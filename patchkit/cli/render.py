"""Rendering results for people (rich tables on a terminal, plain aligned lines otherwise) and
scripts (JSON with a stable shape). rich is imported only to draw on a terminal, or when a
caller hands over a rich object: a command piped into a script or a CI log never pays for it."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from patchkit.outcome import Outcome, PatchResult
from patchkit.progress import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from patchkit.ops.status import StatusReport
    from patchkit.workspace.txn import Recovery

# The style tags patchkit's own messages use ("[red]error:[/]"); rich's markup otherwise.
_STYLE = r"(?:bold|dim|italic|red|green|yellow|blue|cyan|magenta)"
_MARKUP = re.compile(rf"(?<!\\)\[(?:/|/?{_STYLE}(?: {_STYLE})*)\]")


def literal(text: str) -> str:
    """``text`` (a file name, a patch id) to be shown as it is inside a styled line: a
    bracket in it never reads as one of the style tags."""
    return text.replace("[", "\\[")


def plain(text: str) -> str:
    """``text`` without the style tags rich would have drawn."""
    return _MARKUP.sub("", text).replace("\\[", "[")


def styled(text: str) -> Text:
    """``text`` as rich draws it: patchkit's own style tags (``[red]error:[/]``) become styles;
    every other character, brackets included, is shown as it is. rich's own markup parser
    would take a file name like ``[/x]`` for a closing tag and raise."""
    from rich.text import Text

    drawn, start = Text(), 0
    styles: list[str] = []
    for match in _MARKUP.finditer(text):
        drawn.append(plain(text[start : match.start()]), style=" ".join(styles) or None)
        tag = match.group(0)[1:-1]
        if not tag.startswith("/"):
            styles.append(tag)
        elif styles:
            styles.pop()
        start = match.end()
    drawn.append(plain(text[start:]), style=" ".join(styles) or None)
    return drawn


def _drawable(value: Any, markup: bool) -> Any:
    """``value`` for rich with no markup left to parse: a string as :func:`styled` (or as it
    is, ``markup=False``), a table's title and string cells likewise."""
    if isinstance(value, str):
        if markup:
            return styled(visible(value))
        from rich.text import Text

        return Text(visible(value))
    from rich.table import Table

    if isinstance(value, Table):
        if isinstance(value.title, str):
            value.title = styled(visible(value.title))
        for column in value.columns:
            column._cells = [styled(visible(c)) if isinstance(c, str) else c for c in column._cells]
    return value


class Out:
    """An output stream for people: rich on a terminal, plain text otherwise."""

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr
        self._rich: Console | None = None

    @property
    def stream(self) -> IO[str]:
        return sys.stderr if self.stderr else sys.stdout

    @property
    def is_terminal(self) -> bool:
        try:
            return self.stream.isatty()
        except (AttributeError, ValueError):
            return False

    def rich(self) -> Console:
        if self._rich is None:
            from rich.console import Console

            # Wide enough when output goes to a file or CI log (rich would assume 80 columns).
            width = None if self.is_terminal else 160
            self._rich = Console(stderr=self.stderr, highlight=False, width=width)
        return self._rich

    def print(self, *objects: Any, markup: bool = True, end: str = "\n", **options: Any) -> None:
        """Print for people. rich never parses markup here: patchkit's own style tags become
        styles and every other bracket is shown as it is (a file named ``[/x]``)."""
        if self.is_terminal or not all(isinstance(o, str) for o in objects):
            drawn = [_drawable(o, markup) for o in objects]
            self.rich().print(*drawn, markup=False, end=end, **options)
            return
        text = visible(" ".join(objects))
        self.stream.write((plain(text) if markup else text) + end)


console = Out()
err_console = Out(stderr=True)

_OUTCOME_STYLE = {
    Outcome.APPLIED: "green",
    Outcome.CARRIED: "cyan",
    Outcome.UPSTREAMED: "blue",
    Outcome.PARTLY_UPSTREAMED: "yellow",
}


def outcome_style(outcome: str) -> str:
    """The style of an outcome by its value (``applied``, ``carried`` ...); red for the rest."""
    return next((v for k, v in _OUTCOME_STYLE.items() if k.value == outcome), "red")


_STATE_STYLE = {  # by ``PatchState`` value: rendering needs no status engine (port, show)
    "applied": "green",
    "upstreamed": "blue",
    "not applied": "dim",
    "modified since apply": "yellow",
    "outdated": "yellow",
    "retired": "blue",
    "pending": "red",
    "absorbed": "blue",
}


def write_out(data: str | bytes) -> None:
    """Output made for a script (a diff, a page) written to stdout as it is; on a terminal,
    where a person reads it, with every character the terminal would act on named
    (:func:`visible`): a diff's upstream lines or a name in a page never drive the terminal."""
    if console.is_terminal:
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        sys.stdout.write(visible(text))
    elif isinstance(data, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
    else:
        sys.stdout.write(data)


def log_lines_visible() -> None:
    """Every log line (``patchkit: ...`` on stderr) through :func:`visible`, its line breaks
    named too: a logged path or version from input never drives the terminal nor forges a
    line of the log."""
    import logging  # (the full path alone logs: a warm run does without it)

    for handler in logging.getLogger().handlers:
        handler.addFilter(_visible_record)


def _visible_record(record: Any) -> bool:
    record.msg, record.args = visible(record.getMessage()).replace("\n", "<LF>"), None
    return True


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


def _state(result: PatchResult, written: bool) -> str:
    """What the patch is in the tree now: its outcome, or (when the operation wrote nothing)
    ``not-applied`` for a patch that would have applied."""
    return result.outcome.value if written or not result.outcome.ok else "not-applied"


def results_json(
    target: str, commit: str | None, results: Sequence[PatchResult], *, written: bool = True
) -> dict[str, Any]:
    return {
        "target": target,
        "commit": commit,
        "written": written,
        "patches": [
            {
                "id": r.patch_id,
                "state": _state(r, written),
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


def table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *, out: Out = console
) -> Table | str:
    """A rich table on a terminal; otherwise plain text: the title, then one line per row,
    columns aligned, a cell's lines joined with "; ", no style tags."""
    rows = [[visible(c) for c in row] for row in rows]
    if out.is_terminal:
        from rich.table import Table

        drawn = Table(title=title, title_justify="left")
        first = max((len(plain(r[0]).split("\n")[0].split(" ")[0]) for r in rows), default=0)
        drawn.add_column(columns[0], min_width=first, overflow="fold")  # ids: never cut
        for column in columns[1:]:
            drawn.add_column(column, overflow="fold")  # paths whole too, over lines
        for row in rows:
            drawn.add_row(*row)
        return drawn
    cells = [list(columns)] + [[plain(c).replace("\n", "; ") for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join([title, *lines])


def results_table(
    title: str, results: Sequence[PatchResult], *, written: bool = True
) -> Table | str:
    rows = []
    for r in results:
        style = _OUTCOME_STYLE.get(r.outcome, "red")
        outcome = r.outcome.value
        if not written and r.outcome.ok:
            style, outcome = "dim", f"not applied ({outcome} in memory, nothing written)"
        lines = [", ".join(c.path for c in r.changes) or r.message]
        # a patch-wide failure is its message again as a detail: said once
        lines += [f"{d.path} {d.hunk}: {d.reason}" for d in r.details if d.reason != r.message]
        info = literal("\n".join(line for line in lines if line))
        rows.append((literal(r.patch_id), f"[{style}]{outcome}[/]", r.step.value, info))
    return table(title, ("patch", "outcome", "step", "files / why"), rows)


def status_table(report: StatusReport) -> Table | str:
    title = f"{report.target} at {report.commit or 'unknown commit'} — {report.root}"
    speed = any(p.speed for p in report.patches)
    rows = []
    for p in report.patches:
        style = _STATE_STYLE.get(p.state.value, "")
        name = literal(p.id) + (" (opt-in)" if p.optional else "")
        state = f"[{style}]{p.state.value}[/]" if style else p.state.value
        state += "\n[red]slower[/]" if p.slower else ""
        state += f"\n{literal(p.absorbed_by)}" if p.absorbed_by else ""
        row = [name, literal(p.set_name), p.kind, state, literal("\n".join(p.files)), p.verified]
        rows.append((*row, *([p.speed] * speed)))
    columns = ("patch", "set", "kind", "state", "files", "verified", *(["speed"] * speed))
    return table(title, columns, rows)


def say_recovered(recovered: Recovery | None, *, as_json: bool) -> None:
    """What rolling back an interrupted write did: on stderr, so ``--json`` stays JSON."""
    if recovered is not None and not as_json:
        for line in recovered.lines():
            err_console.print(f"[yellow]note:[/] {line}", soft_wrap=True)


def recovered_json(recovered: Recovery | None) -> dict[str, object] | None:
    if recovered is None:
        return None
    return {
        "command": recovered.command,
        "restored": list(recovered.restored),
        "kept": list(recovered.kept),
        "modes_kept": list(recovered.modes_kept),
    }
