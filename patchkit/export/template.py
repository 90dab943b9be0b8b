"""The upstream's pull-request template, filled: each section's content appended under its
heading (the template's own text there kept), a heading the template lacks added above the cut
line, and nothing below vLLM's "BEFORE SUBMITTING" line (a bot deletes it)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources

from patchkit.errors import ConfigError

CUT_MARK = "BEFORE SUBMITTING"


def load_template(in_tree: bytes | None, target: str) -> str:
    """The tree's own PR template, else the one patchkit ships for the target (or a generic one)."""
    if in_tree is not None:
        return in_tree.decode(errors="replace")
    shipped = resources.files("patchkit.export") / "templates"
    for name in (f"{target}.md", "generic.md"):
        if (shipped / name).is_file():
            return (shipped / name).read_text(encoding="utf-8")
    raise ConfigError(f"no PR template for {target}: patchkit's templates/ are missing")


def _level(line: str) -> int:
    return len(line) - len(line.lstrip("#")) if line.startswith("#") else 0


def headings(template: str) -> set[str]:
    return {line.strip() for line in template.splitlines() if _level(line)}


def _section_end(lines: Sequence[str], start: int) -> int:
    level = _level(lines[start])
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if (_level(line) and _level(line) <= level) or line.strip() == "---" or CUT_MARK in line:
            return i
    return len(lines)


def _cut_index(lines: Sequence[str]) -> int:
    return next((i for i, line in enumerate(lines) if CUT_MARK in line), len(lines))


def _fill(lines: list[str], heading: str, content: str) -> list[str]:
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        end = _cut_index(lines)
        return [*lines[:end], heading, "", content, "", *lines[end:]]
    end = _section_end(lines, start)
    section = list(lines[start + 1 : end])
    while section and not section[-1].strip():
        section.pop()
    return [*lines[: start + 1], *section, "", content, "", *lines[end:]]


PLACEHOLDER = re.compile(
    r"^\s*(?:<!--(?!\s*markdownlint).*?-->|PLEASE FILL IN THE PR DESCRIPTION.*)\s*$"
)
_BOX = re.compile(r"^(\s*[-*] )\[ \]( .*)$")


def _placeholders_out(lines: Sequence[str]) -> list[str]:
    """The template's hints to the author (``<!-- ... -->`` lines, "PLEASE FILL IN ...") left
    out: the text replaces them."""
    return [line for line in lines if not PLACEHOLDER.match(line)]


def _ticked(lines: Sequence[str], ticks: Sequence[str]) -> list[str]:
    """Checklist items naming one of ``ticks`` ticked; the others left as they are."""
    out = []
    for line in lines:
        box = _BOX.match(line)
        if box and any(t in box.group(2) for t in ticks):
            line = f"{box.group(1)}[x]{box.group(2)}"
        out.append(line)
    return out


def fill_template(
    template: str, sections: Sequence[tuple[str, str]], ticks: Sequence[str] = ()
) -> str:
    """The template with each ``(heading, content)`` filled in, its placeholders left out, the
    checklist items naming one of ``ticks`` ticked (only what is true), cut after its "BEFORE
    SUBMITTING" line."""
    lines = _placeholders_out(template.splitlines())
    lines = _ticked(lines[: _cut_index(lines) + 1], ticks)
    for heading, content in sections:
        if content.strip():
            lines = _fill(lines, heading, content.strip("\n"))
    text = "\n".join(lines).strip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)
