"""Pull-request text for an exported patch: its title, body and commit message, in the
conventions of the target, as a maintainer would merge it.

vLLM: bracket tags in the title, the template's ``## Purpose``, ``## Test Plan`` and
``## Test Result`` filled, the AI-assistance statement and the duplicate check its ``AGENTS.md``
asks for, nothing below the "BEFORE SUBMITTING" line, and a ``Signed-off-by`` line that matches
the commit author (DCO). FlashInfer ("conventional"): a ``type(scope): lowercase`` title and the
template's headings kept exactly. Titles are at most 72 characters.

Everything said comes from the patch metadata, the set's ``[export]`` settings and its tracked
verification records: what ran where, and what did not (:mod:`patchkit.export.claims`). The
pieces are in :mod:`patchkit.export.sections`, the template in :mod:`patchkit.export.template`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from patchkit.export import sections as s
from patchkit.export.claims import Verification, read_verification
from patchkit.export.identity import Identity
from patchkit.export.sections import Dependency, Facts
from patchkit.export.template import CUT_MARK, fill_template, headings, load_template
from patchkit.export.titles import conventional_title, title_for, vllm_title
from patchkit.model import LockEntry, PatchMeta, PrState
from patchkit.project.export_settings import load_settings
from patchkit.trust.names import one_line_identity
from patchkit.verification.records import set_root_of

__all__ = [
    "CUT_MARK",
    "Dependency",
    "Facts",
    "Identity",
    "PrText",
    "TextInput",
    "Verification",
    "conventional_title",
    "load_template",
    "pinned_label",
    "read_verification",
    "render",
    "text_input",
    "vllm_title",
]

PROJECTS = {"vllm": "vLLM", "flashinfer": "FlashInfer"}


@dataclass(frozen=True)
class TextInput:
    facts: Facts
    style: str  # "vllm" or "conventional"
    template: str  # the PR template, as read from the tree or shipped with patchkit
    identity: Identity


@dataclass(frozen=True)
class PrText:
    title: str
    body: str  # Markdown, the template filled
    commit_message: str  # ends with a newline
    comment: str = ""  # for the open upstream PR that makes the same fix ("" when none)


def project_name(target: str) -> str:
    return PROJECTS.get(target, target)


def pinned_label(entry: LockEntry) -> str:
    """``vLLM 0.19.0 (commit 2a69949bd)``."""
    return f"{project_name(entry.name)} {entry.version} (commit {entry.commit[:12]})"


def text_input(
    meta: PatchMeta,
    entry: LockEntry,
    *,
    base: str,
    files: tuple[str, ...],
    style: str,
    template: str,
    identity: Identity,
    dependencies: tuple[Dependency, ...] = (),
    stacked: bool = False,
    upstream_test: str = "",
    test_outcome: str = "",
    reviewed_by: Identity | None = None,
    today: str | None = None,
) -> TextInput:
    """The text's input for ``meta`` pinned by ``entry``: its set's ``[export]`` settings and
    tracked verification records read."""
    facts = Facts(
        meta=meta,
        project=project_name(entry.name),
        repository=entry.repository,
        pinned=pinned_label(entry),
        base=base,
        files=files,
        verification=read_verification(meta, entry),
        settings=load_settings(set_root_of(meta)),
        dependencies=dependencies,
        stacked=stacked,
        upstream_test=upstream_test,
        test_outcome=test_outcome,
        reviewed_by=str(reviewed_by) if reviewed_by else "",
        today=today or datetime.now(timezone.utc).date().isoformat(),
    )
    return TextInput(facts, style, template, identity)


def render(inp: TextInput) -> PrText:
    title = title_for(inp.facts.meta, inp.style)
    if inp.style == "vllm":
        body = fill_template(inp.template, _vllm_sections(inp.facts), _vllm_ticks(inp.facts))
    else:
        sections = _conventional_sections(inp.facts, inp.template)
        body = fill_template(inp.template, sections, _conventional_ticks(inp.facts))
    return PrText(title, body, _message(inp, title), _comment(inp.facts))


def _comment(f: Facts) -> str:
    """What we found and tested, offered to the open upstream PR instead of a duplicate."""
    if f.meta.upstream.state is not PrState.OPEN or f.meta.upstream.ours is True:
        return ""
    intro = (
        "We carry the same change downstream; here is what we found and tested, offered for "
        "this PR rather than as another one."
    )
    result = s.result(f)
    for ours, said in _COMMENT_VOICE:  # a comment on another's PR: our test, our runs
        result = result.replace(ours, said)
    tests = s.join("**Test plan**", s.plan(f), "**Test result**", result)
    body = s.join(intro, s.paragraphs(f.meta.why), s.origin(f), tests, s.ai_statement(f))
    return body + "\n"


# What the PR text says of its own test and branch, as a comment on another's PR says it.
_COMMENT_VOICE = (
    ("The test this PR adds", "Our test for it"),
    ("is not on this branch", "could not be added"),
    ("this branch's base", "the base"),
    ("(not in this PR)", "(ours, not upstream)"),
)


def _message(inp: TextInput, title: str) -> str:
    """Title, the why wrapped at 72, the references, then the trailers (the DCO sign-off last,
    for vLLM)."""
    f = inp.facts
    refs = "\n".join(s.references(f))
    deps = "\n".join(
        f"Depends on {s.refs(d.prs, f.repository)}." for d in f.dependencies if d.needed and d.prs
    )
    trailers = list(f.settings.trailers)
    match = one_line_identity(f.meta.author)  # one line, or no trailer at all
    author = Identity(match["name"], match["email"]) if match else None
    if author and author.is_a_person and author.email.lower() != inp.identity.email.lower():
        trailers.append(f"Co-authored-by: {author}")
    if inp.style == "vllm":
        trailers.append(f"Signed-off-by: {inp.identity}")  # DCO: the author, exactly
    return f"{title}\n\n{s.join(s.wrap(f.meta.why), refs, deps, chr(10).join(trailers))}\n"


def _vllm_ticks(f: Facts) -> list[str]:
    """vLLM's checklist: purpose and test plan are always written; results only when the
    test this PR adds passed on the branch (docs and release notes are never claimed)."""
    ticks = ["The purpose of the PR", "The test plan"]
    return [*ticks, "The test results"] if f.test_outcome == "passed" else ticks


def _conventional_ticks(f: Facts) -> list[str]:
    """FlashInfer's checklist: tests added when the branch adds one, passing when it passed
    there; the pre-commit items are the submitter's to tick (pre-commit itself did not run)."""
    if f.meta.export.test is None or f.test_outcome in ("", "not added"):
        return []
    added = ["Tests have been added or updated"]
    return [*added, "All tests are passing"] if f.test_outcome == "passed" else added


def _vllm_sections(f: Facts) -> list[tuple[str, str]]:
    purpose = s.join(
        s.paragraphs(f.meta.why),
        s.origin(f),
        "\n".join(s.references(f)),
        s.duplicate_check(f),
        s.dependencies(f),
        s.ai_statement(f),
    )
    return [("## Purpose", purpose), ("## Test Plan", s.plan(f)), ("## Test Result", s.result(f))]


_FI = {
    "description": ("## 📌 Description", "## Description"),
    "issues": ("## 🔍 Related Issues", "## Related Issues"),
    "tests": ("## 🧪 Tests", "## Tests"),
    "notes": ("## Reviewer Notes", "## Notes"),
}


def _conventional_sections(f: Facts, template: str) -> list[tuple[str, str]]:
    present = headings(template)

    def heading(kind: str) -> str:
        return next((h for h in _FI[kind] if h in present), _FI[kind][0])

    refs = [*s.references(f), s.duplicate_check(f)]
    issues = "\n".join(f"- {line}" for line in refs if line) or "None filed."
    tests = s.join("**Test plan:**", s.plan(f), "**Test result:**", s.result(f))
    return [
        (heading("description"), s.join(s.paragraphs(f.meta.why), s.origin(f), s.dependencies(f))),
        (heading("issues"), issues),
        (heading("tests"), tests),
        (heading("notes"), s.ai_statement(f)),
    ]
