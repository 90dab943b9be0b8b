"""The pieces of a pull request's text, said as upstream facts: why, where the problem is (the
release and commit, where it began), the issue and the upstream PR for the same fix, why it is
not a duplicate, the exact test commands and what ran where. Nothing in them names the tool
that exported the change."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from patchkit.export.claims import Verification, result_text
from patchkit.model import PatchMeta, PrState, TestSpec
from patchkit.project.export_settings import ExportSettings


@dataclass(frozen=True)
class Dependency:
    patch_id: str  # never said upstream: the change is named by its title and PR
    prs: tuple[str, ...]  # its upstream PRs, if any
    title: str = ""
    needed: bool = True  # False: only below it in a --stack (it applies without it)


@dataclass(frozen=True)
class Facts:
    """What the sections are made from."""

    meta: PatchMeta
    project: str  # "vLLM"
    repository: str  # upstream repository URL, to shorten links to "#N"
    pinned: str  # "vLLM 0.19.0 (commit 2a69949bd)": what the records ran against
    base: str  # what the branch is based on (the same words as pinned, or the --onto ref)
    files: tuple[str, ...]
    verification: Verification
    settings: ExportSettings
    dependencies: tuple[Dependency, ...] = ()
    stacked: bool = False
    upstream_test: str = ""  # the added test's result on the branch (export.upstream_test)
    test_outcome: str = ""  # that test's result: "passed", "failed", "not run", "not added"
    reviewed_by: str = ""  # "Name <email>" of the person who reviewed it (--reviewed-by)
    today: str = ""  # "YYYY-MM-DD": how recent the upstream check is ("": never recent)


def paragraphs(text: str) -> str:
    """``text`` as Markdown paragraphs with no hard line break inside one (GitHub renders a
    line break in a PR body as one); lists, tables and code blocks are kept as written."""
    out = []
    for part in re.split(r"\n\s*\n", textwrap.dedent(text).strip()):
        lines = part.splitlines()
        if any(line.lstrip().startswith(("- ", "* ", "|", "```", "    ")) for line in lines):
            out.append(part)
        else:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def wrap(text: str, width: int = 72) -> str:
    parts = re.split(r"\n\s*\n", paragraphs(text))
    return "\n\n".join(textwrap.fill(" ".join(p.split()), width) for p in parts)


def join(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p.strip())


def refs(urls: Sequence[str], repository: str) -> str:
    return ", ".join(_ref(u, repository) for u in urls)


def _ref(url: str, repository: str) -> str:
    pattern = re.escape(repository.rstrip("/")) + r"/(?:issues|pull)/(\d+)/?"
    match = re.fullmatch(pattern, url.strip())
    return f"#{match.group(1)}" if match else url.strip()


def origin(f: Facts) -> str:
    """Where the problem is (and began, when the metadata says) and what the change touches."""
    since = f.meta.pr_since
    where = (
        f"The problem began in {since}; it is present in {f.pinned}"
        if since
        else (f"Present in {f.pinned}")
    )
    on = f" (this branch is based on {f.base})" if f.base != f.pinned else ""
    return f"{where}{on}. Changes {', '.join(f'`{p}`' for p in f.files)}."


def references(f: Facts) -> list[str]:
    """The issues the change addresses."""
    lines = []
    for issue in f.meta.issues:
        ref = _ref(issue, f.repository)
        # "Addresses", not "Fixes": a closing keyword would close an issue fixed only in part
        lines.append(f"Addresses {ref}" if ref.startswith("#") else f"Related: {ref}")
    return lines  # the PRs of this change itself (``prs``) are not named in their own text


RECENT_DAYS = 30  # an upstream check older than this says nothing about duplicates today


def duplicate_check(f: Facts) -> str:
    """Why this is not a duplicate (vLLM's AGENTS.md asks for it), or the PR it duplicates, and
    the related PRs the upstream check found. "Not a duplicate" is said only when the check ran
    recently and found nothing; an open PR is ours only when the check said so."""
    up = f.meta.upstream
    when = f"as of {up.checked}" if up.checked else "when last checked"
    pr = _ref(up.pr, f.repository) if up.pr else ""
    by = f" by @{up.author}" if up.author and up.ours is not True else ""
    said = ""
    if up.state is PrState.OPEN and up.ours is True:
        said = f"Not a duplicate: this updates {pr}, our own PR (open {when})."
    elif up.state is PrState.OPEN:
        said = f"{pr}{by} (open {when}) proposes the same change; what follows is offered for it."
    elif up.state is PrState.CLOSED:
        said = f"{pr}{by} proposed the same change and was closed unmerged ({when})."
    elif up.state is PrState.MERGED:
        said = f"{pr}{by} made the same change and was merged ({when})."
    elif recent(up.checked, f.today):
        said = f"Not a duplicate: {when}, no open or merged {f.project} PR makes this change."
    return " ".join(p for p in (said, related(f)) if p)


def recent(checked: str | None, today: str) -> bool:
    """``checked`` is a date no more than :data:`RECENT_DAYS` before ``today``."""
    try:
        age = date.fromisoformat(today) - date.fromisoformat(checked or "")
    except ValueError:
        return False
    return 0 <= age.days <= RECENT_DAYS


def related(f: Facts) -> str:
    """The other upstream PRs in the same files and code, open and merged."""
    items = []
    for r in f.meta.upstream.related:
        said = [r.state.value] if r.state is not PrState.NONE else []  # unknown: not said
        said += [r.why] if r.why else []
        items.append(_ref(r.pr, f.repository) + (f" ({'; '.join(said)})" if said else ""))
    return f"Related upstream PRs in the same code: {'; '.join(items)}." if items else ""


def dependencies(f: Facts) -> str:
    """The changes this one depends on (by title and PR, never an id of ours); one it is only
    stacked on is said to be no dependency."""
    lines = []
    for dep in f.dependencies:
        where = ", ".join(_ref(p, f.repository) for p in dep.prs) or "not yet proposed"
        name = f"“{dep.title}”" if dep.title else "the change below"
        if dep.needed:
            lines.append(f"Depends on {name} ({where}).")
        else:
            lines.append(f"Stacked on {name} ({where}) for review; it does not depend on it.")
    needed = any(d.needed for d in f.dependencies)
    if lines and f.stacked and needed:
        lines.append(
            "This change does not apply without it, so this branch carries that change first: "
            "review only the last commit, and merge the dependency first."
        )
    elif lines and f.stacked:
        lines.append("This branch carries that change first: review only the last commit.")
    elif lines:
        lines.append("This change applies on its own; it is based directly on upstream.")
    return "\n".join(lines)


def ai_statement(f: Facts) -> str:
    """The set's AI statement, and the human review only when a person said so
    (``--reviewed-by``): never implied."""
    review = (
        f"{f.reviewed_by} reviewed every changed line and ran the tests above."
        if f.reviewed_by
        else ""
    )
    return " ".join(p for p in (f.settings.ai_assistance, review) if p)


def _needs(spec: TestSpec) -> str:
    if not spec.gpu:
        return "CPU"
    cap = spec.min_capability
    return (
        f"needs a CUDA GPU of compute capability {cap[0]}.{cap[1]} or newer"
        if cap
        else "needs a CUDA GPU"
    )


def _added(f: Facts) -> list[tuple[str, str]]:
    """The test this PR adds to upstream's suite (``[export.test]``): its command and needs."""
    test = f.meta.export.test
    if test is None or f.test_outcome == "proves nothing":
        return []
    from patchkit.export.upstream_test import command  # the very command the run line shows

    spec = TestSpec("upstream", " ".join(test.run), test.gpu, test.min_capability)
    return [(command(test), _needs(spec) if test.gpu else "")]


def plan(f: Facts) -> str:
    upstream = [s for s in f.meta.tests if s.where == "upstream"]
    runs = [
        *_added(f),
        *((f"python -m pytest {s.node}", _needs(s) if s.gpu else "") for s in upstream),
    ]
    if not runs:
        return f"No test in {f.project}'s own suite covers this change yet."
    commands = "\n".join(command for command, _ in runs)
    gpu = [
        f"`{command.removeprefix('python -m pytest ')}` {needs}."
        for command, needs in runs
        if needs
    ]
    return join("```bash\n" + commands + "\n```", "\n".join(gpu))


def result(f: Facts) -> str:
    said = f.meta.notes if f.meta.pr_caveats is None else f.meta.pr_caveats  # [pr] caveats
    notes = f"**Caveats:** {paragraphs(said)}" if said.strip() else ""
    return join(f.upstream_test, result_text(f.meta, f.verification, f.pinned), notes)
