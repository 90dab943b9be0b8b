"""Pull-request text for an exported patch: its title, body and commit message, in the
conventions of the target.

vLLM: bracket tags stacked without spaces in the title, the template's ``## Purpose``,
``## Test Plan`` and ``## Test Result`` filled, nothing below its "BEFORE SUBMITTING" line, and a
``Signed-off-by`` line that matches the commit author (DCO). FlashInfer ("conventional"): a
``type(scope): lowercase imperative`` title, the template's headings kept exactly, and the body as
the commit message (its squash merges make the PR body the commit message).

Everything said here comes from the patch metadata and its latest verification record (read
tolerantly from ``patchsets/<set>/verification.json``: absent means "not yet verified").
"""

from __future__ import annotations

import logging
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from patchkit.errors import ConfigError, shown
from patchkit.model import LockEntry, PatchMeta, TestSpec
from patchkit.patchset import patch_digest
from patchkit.targets import commits_match
from patchkit.verification.env import Environment
from patchkit.verification.records import Record, TestRecord, load_records, set_root_of

log = logging.getLogger("patchkit.export.prtext")

CUT_MARK = "BEFORE SUBMITTING"  # vLLM: a bot deletes everything below the line holding it
_IDENTITY = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<email>[^<>\s]+@[^<>\s]+)>\s*$")


@dataclass(frozen=True)
class Identity:
    """Who authors, commits and signs off the exported commit."""

    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"

    @classmethod
    def parse(cls, text: str) -> Identity:
        match = _IDENTITY.match(text)
        if not match or not match.group("name"):
            raise ConfigError(
                f"{shown(text)} is not an identity of the form 'Name <email>'",
                hint="pass --identity 'Your Name <you@example.com>' (the DCO sign-off uses it)",
            )
        return cls(match.group("name"), match.group("email"))


@dataclass(frozen=True)
class TestOutcome:
    node: str
    where: str  # "set" or "upstream"
    result: str  # "passed", "failed", "not run"
    counts: str  # "3 passed, 0 failed, 0 skipped"; "" when unknown
    reason: str = ""


@dataclass(frozen=True)
class Verification:
    """The latest verification record of a patch, as the text needs it."""

    result: str  # "passed", "failed", "not run"
    time: str  # ISO 8601, UTC
    environment: str  # "NVIDIA H200 (sm_90), driver 580.x, CUDA 12.8, torch 2.11.0"
    target_version: str  # the locked release it ran against
    tests: tuple[TestOutcome, ...]
    reason: str = ""
    stale: str = ""  # why the record may no longer prove the patch; "" when current


@dataclass(frozen=True)
class Dependency:
    patch_id: str
    prs: tuple[str, ...]  # its upstream PRs, if any


@dataclass(frozen=True)
class TextInput:
    meta: PatchMeta
    style: str  # "vllm" or "conventional"
    template: str  # the PR template, as read from the tree or shipped with patchkit
    identity: Identity
    base: str  # "flashinfer 0.6.6 (upstream commit 70b142b75b46)"
    repository: str  # upstream repository URL, to shorten issue links to "#N"
    files: tuple[str, ...]  # repository paths the change touches
    verification: Verification | None
    dependencies: tuple[Dependency, ...] = ()
    stacked: bool = False  # the branch carries the dependencies' commits (it needs them)
    formatting: tuple[str, ...] = ()  # what the target's formatters did


@dataclass(frozen=True)
class PrText:
    title: str
    body: str  # Markdown, the template filled
    commit_message: str  # ends with a newline


def render(inp: TextInput) -> PrText:
    if inp.style == "vllm":
        title = vllm_title(inp.meta)
        body = fill_template(inp.template, _vllm_sections(inp))
        return PrText(title, body, _vllm_message(inp, title))
    title = conventional_title(inp.meta)
    headings = _template_headings(inp.template)
    body = fill_template(inp.template, _conventional_sections(inp, headings))
    return PrText(title, body, f"{title}\n\n{body}")


# -- inputs read from disk ---------------------------------------------------------------------
def load_template(in_tree: bytes | None, target: str) -> str:
    """The tree's own PR template, else the one patchkit ships for the target (or a generic one)."""
    if in_tree is not None:
        return in_tree.decode(errors="replace")
    shipped = resources.files("patchkit.export") / "templates"
    for name in (f"{target}.md", "generic.md"):
        if (shipped / name).is_file():
            return (shipped / name).read_text(encoding="utf-8")
    raise ConfigError(f"no PR template for {target}: patchkit's templates/ are missing")


def _environment(env: Environment) -> str:
    head = env.kind if env.gpu else "no GPU (CPU only)"
    labels = (
        ("driver", "driver"),
        ("cuda", "CUDA"),
        ("torch", "torch"),
        ("triton", "triton"),
        ("python", "Python"),
    )
    values = [(label, getattr(env, name)) for name, label in labels]
    return ", ".join([head, *(f"{label} {value}" for label, value in values if value)])


def _test_outcome(test: TestRecord) -> TestOutcome:
    counts = f"{test.passed} passed, {test.failed} failed, {test.skipped} skipped"
    return TestOutcome(test.node, test.where, test.result, counts, test.reason)


def _staleness(record: Record, meta: PatchMeta, entry: LockEntry) -> str:
    if record.digest != patch_digest(meta):
        return "this record was made for an earlier version of the patch"
    if not commits_match(record.lock_commit, entry.commit):
        return (
            f"this record was made against upstream commit {record.lock_commit[:12]}, "
            "not the pinned one"
        )
    return ""


def read_verification(meta: PatchMeta, entry: LockEntry) -> Verification | None:
    """The latest record of ``meta`` that ran (else the latest one); None when there is none."""
    try:
        records = [r for r in load_records(set_root_of(meta)) if r.patch == meta.id]
    except ConfigError as exc:
        log.warning("%s; treating %s as not yet verified", exc.message, meta.id)
        return None
    if not records:
        return None
    ran = [r for r in records if r.result in ("passed", "failed")]
    record = max(ran or records, key=lambda r: r.time)
    return Verification(
        result=record.result,
        time=record.time,
        environment=_environment(record.environment),
        target_version=f"{entry.name} {record.lock_version or entry.version}",
        tests=tuple(_test_outcome(t) for t in record.tests),
        reason=record.reason,
        stale=_staleness(record, meta, entry),
    )


# -- titles --------------------------------------------------------------------------------------
def vllm_title(meta: PatchMeta) -> str:
    """``[Bugfix][Hardware][NVIDIA] Title``: tags stacked without spaces."""
    tags = "".join(f"[{tag.strip('[]')}]" for tag in meta.pr_tags)
    return f"{tags} {meta.title}" if tags else meta.title


def conventional_title(meta: PatchMeta) -> str:
    """``fix(decode): dispatch GQA group size 16``: the first word lowercased (acronyms kept)."""
    prefix = (meta.pr_scope or "fix").rstrip(":").strip()
    first, _, rest = meta.title.strip().rstrip(".").partition(" ")
    if not (first.isupper() or any(ch.isdigit() for ch in first)):
        first = first.lower()
    return f"{prefix}: {first} {rest}".rstrip()


# -- the template --------------------------------------------------------------------------------
def _level(line: str) -> int:
    return len(line) - len(line.lstrip("#")) if line.startswith("#") else 0


def _template_headings(template: str) -> set[str]:
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
    """Append ``content`` to the section under ``heading`` (template text there is kept); a
    heading the template lacks is added above the cut line."""
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        end = _cut_index(lines)
        return [*lines[:end], heading, "", content, "", *lines[end:]]
    end = _section_end(lines, start)
    section = list(lines[start + 1 : end])
    while section and not section[-1].strip():
        section.pop()
    return [*lines[: start + 1], *section, "", content, "", *lines[end:]]


def fill_template(template: str, sections: Sequence[tuple[str, str]]) -> str:
    """The template with each ``(heading, content)`` filled in and nothing below its
    "BEFORE SUBMITTING" line."""
    lines = template.splitlines()
    cut = _cut_index(lines)
    lines = lines[: cut + 1]
    for heading, content in sections:
        if content.strip():
            lines = _fill(lines, heading, content.strip("\n"))
    text = "\n".join(lines).strip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)


# -- the pieces of text --------------------------------------------------------------------------
def _paragraphs(text: str) -> str:
    return textwrap.dedent(text).strip()


def _issue_ref(issue: str, repository: str) -> str:
    match = re.fullmatch(re.escape(repository.rstrip("/")) + r"/issues/(\d+)", issue.strip())
    return f"#{match.group(1)}" if match else issue.strip()


def _issues(inp: TextInput) -> list[str]:
    refs = [_issue_ref(i, inp.repository) for i in inp.meta.issues]
    # "Addresses", not "Fixes": a closing keyword would close an issue the patch may fix only
    # in part; the submitter decides.
    lines = [f"Addresses {ref}" if ref.startswith("#") else f"Related: {ref}" for ref in refs]
    up = inp.meta.upstream
    if up.pr and up.state.value != "none":
        ref = f"#{up.number}" if up.pr.startswith(inp.repository.rstrip("/")) else up.pr
        lines.append(f"Same fix as {ref} ({up.state.value} when checked on {up.checked or '?'})")
    return lines


def _dependencies(inp: TextInput) -> str:
    lines = []
    for dep in inp.dependencies:
        where = ", ".join(dep.prs) or f"branch `patchkit/{dep.patch_id}`, not yet proposed"
        lines.append(f"Depends on the patch `{dep.patch_id}` ({where}).")
    if lines and inp.stacked:
        lines.append(
            "This change does not apply without it, so this branch carries that change first: "
            "review only the last commit, and merge the dependency first."
        )
    elif lines:
        lines.append("This change applies on its own; it is based directly on upstream.")
    return "\n".join(lines)


def _disclosure(inp: TextInput) -> str:
    text = (
        "**How this was prepared:** the change was carried downstream as a patch and exported "
        "with patchkit (`patchkit export-pr`), which also wrote this description from the "
        "patch's metadata and recorded test runs. A person must review every changed line and "
        "run its tests before submitting."
    )
    if inp.style == "vllm":
        text += (
            "\n<!-- submitter: say whether AI assistance was used, and why this does not "
            f"duplicate an open PR (gh pr list --repo {_slug(inp.repository)} --state open "
            '--search "...") -->'
        )
    return text


def _slug(repository: str) -> str:
    return "/".join(repository.rstrip("/").removesuffix(".git").split("/")[-2:])


def _command(spec: TestSpec, set_name: str) -> str:
    if spec.where == "upstream":
        return f"python -m pytest {spec.node}"
    return f"python -m pytest patchsets/{set_name}/{spec.node}"


def _plan_notes(meta: PatchMeta) -> list[str]:
    notes = []
    for spec in meta.tests:
        cap = spec.min_capability
        needs = " needs a CUDA GPU" if spec.gpu else ""
        needs += f" of compute capability {cap[0]}.{cap[1]} or newer" if spec.gpu and cap else ""
        needs += ";" if needs else ""
        where = (
            "runs in the upstream tree"
            if spec.where == "upstream"
            else f"ships with the downstream patch set `{meta.set_name}` (run from the patch "
            "repository against the patched tree); it is not part of this PR"
        )
        notes.append(f"- `{spec.node}`:{needs} {where}.")
    return notes


def plan_text(meta: PatchMeta) -> str:
    if not meta.tests:
        return "No tests are recorded for this patch: add a reproducer before submitting."
    commands = "\n".join(_command(spec, meta.set_name) for spec in meta.tests)
    return "```bash\n" + commands + "\n```\n\n" + "\n".join(_plan_notes(meta))


def result_text(verification: Verification | None) -> str:
    if verification is None:
        return (
            "Not yet verified: there is no verification record for this patch. Run the tests "
            "above and paste their results here before submitting."
        )
    v = verification
    lines = [
        f"Ran with `patchkit verify` on {v.time} against {v.target_version}, on "
        f"{v.environment}: **{v.result}**" + (f" ({v.reason})" if v.reason else "") + ".",
        "",
    ]
    for t in v.tests:
        detail = "; ".join(x for x in (t.counts, t.reason) if x)
        lines.append(f"- `{t.node}`: {t.result}" + (f" ({detail})" if detail else ""))
    if v.stale:
        lines += ["", f"**Note:** {v.stale}; run the tests again before submitting."]
    return "\n".join(lines).strip()


def _caveats(meta: PatchMeta) -> str:
    return f"**Caveats:** {_paragraphs(meta.notes)}" if meta.notes.strip() else ""


def _formatting(inp: TextInput) -> str:
    if not inp.formatting:
        return ""
    return "**Formatting:**\n" + "\n".join(f"- {line}" for line in inp.formatting)


def _join(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p.strip())


def _files(inp: TextInput) -> str:
    return f"Changes {', '.join(f'`{f}`' for f in inp.files)}; based on {inp.base}."


# -- vLLM ----------------------------------------------------------------------------------------
def _vllm_sections(inp: TextInput) -> list[tuple[str, str]]:
    purpose = _join(
        _paragraphs(inp.meta.why),
        _files(inp),
        "\n".join(_issues(inp)),
        _dependencies(inp),
        _disclosure(inp),
    )
    result = _join(result_text(inp.verification), _caveats(inp.meta), _formatting(inp))
    return [
        ("## Purpose", purpose),
        ("## Test Plan", plan_text(inp.meta)),
        ("## Test Result", result),
    ]


def _wrap(text: str, width: int = 72) -> str:
    paragraphs = re.split(r"\n\s*\n", _paragraphs(text))
    return "\n\n".join(textwrap.fill(" ".join(p.split()), width) for p in paragraphs)


def _trailers(inp: TextInput) -> list[str]:
    trailers = []
    match = _IDENTITY.match(inp.meta.author)
    if match and match.group("email").lower() != inp.identity.email.lower():
        trailers.append(f"Co-authored-by: {inp.meta.author.strip()}")
    trailers.append(f"Signed-off-by: {inp.identity}")  # DCO: the author, exactly
    return trailers


def _vllm_message(inp: TextInput, title: str) -> str:
    refs = "\n".join(_issues(inp))
    deps = "\n".join(f"Depends on the patch {d.patch_id}." for d in inp.dependencies)
    body = _join(_wrap(inp.meta.why), refs, deps, "\n".join(_trailers(inp)))
    return f"{title}\n\n{body}\n"


# -- FlashInfer and other conventional-commit projects -----------------------------------------
_FI = {
    "description": ("## 📌 Description", "## Description"),
    "issues": ("## 🔍 Related Issues", "## Related Issues"),
    "tests": ("## 🧪 Tests", "## Tests"),
    "notes": ("## Reviewer Notes", "## Notes"),
}


def _heading(kind: str, headings: set[str]) -> str:
    options = _FI[kind]
    return next((h for h in options if h in headings), options[0])


def _conventional_sections(inp: TextInput, headings: set[str]) -> list[tuple[str, str]]:
    issues = "\n".join(f"- {line}" for line in _issues(inp)) or "None filed."
    tests = _join(
        "**Test plan:**", plan_text(inp.meta), "**Test result:**", result_text(inp.verification)
    )
    notes = _join(_caveats(inp.meta), _formatting(inp), _disclosure(inp))
    description = _join(_paragraphs(inp.meta.why), _files(inp), _dependencies(inp))
    return [
        (_heading("description", headings), description),
        (_heading("issues", headings), issues),
        (_heading("tests", headings), tests),
        (_heading("notes", headings), notes),
    ]
