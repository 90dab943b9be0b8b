"""Upstream pull requests that make the same fix as a patch, found with the GitHub CLI.

A PR counts when it is the one the metadata records, when it names one of the patch's issues
(``#N`` in its title or body), or when it changes one of the patch's files in the same code: its
diff of that file names an identifier the patch is about (taken from the patch's title and why:
``_warmup_and_capture``, ``DISPATCH_GQA_GROUP_SIZE``). The state recorded is the strongest found:
merged, then open, then closed unmerged; none when nothing counts."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from patchkit.errors import SourceError
from patchkit.model import PatchKind, PatchMeta, PrState, RelatedPr, UpstreamPr
from patchkit.upstream.github import Gh

log = logging.getLogger("patchkit.upstream.duplicates")

FIELDS = "number,url,state,title,files,author"
LIMIT = "30"
MAX_PRS = int(LIMIT)  # PRs of one answer examined (each may cost a `gh pr diff`), whatever gh sends
MAX_DIFFS = 30  # `gh pr diff` calls for one patch, whatever the searches found
MAX_NUMBER = 10**9  # a pull request number larger than this is not one
MAX_TITLE = 300  # characters of a PR title kept
MAX_KEYWORDS = 3
PROJECTS = {"vllm", "flashinfer"}  # names that are everywhere in their own repository
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STATES = {"OPEN": PrState.OPEN, "MERGED": PrState.MERGED, "CLOSED": PrState.CLOSED}
_RANK = {PrState.MERGED: 0, PrState.OPEN: 1, PrState.CLOSED: 2}


@dataclass(frozen=True)
class Found:
    """An upstream PR for the same fix, and why it counts."""

    number: int
    url: str
    state: PrState
    title: str
    evidence: tuple[str, ...]  # "recorded in the metadata", "names #39809", "changes f.py (g)"
    author: str = ""  # the PR author's login


def _code_like(token: str) -> bool:
    inner = token.strip("_")
    if "_" in inner:
        return True  # snake_case, SCREAMING_CASE
    upper = sum(c.isupper() for c in inner)
    if any(c.isdigit() for c in inner):
        return upper >= 2 and len(inner) >= 4  # SM12x, MXFP4
    return upper >= 1 and inner[1:] != inner[1:].lower() and len(inner) >= 6  # MambaMixer2


def keywords(meta: PatchMeta) -> tuple[str, ...]:
    """Identifiers the patch is about, from its title and why (project names left out)."""
    found: list[str] = []
    for token in _IDENT.findall(f"{meta.title} {meta.why}"):
        if _code_like(token) and token.lower() not in PROJECTS and token not in found:
            found.append(token)
    return tuple(found[:MAX_KEYWORDS])


def patch_files(meta: PatchMeta) -> tuple[str, ...]:
    """The repository paths the patch changes: a rewrite's ``files``, a diff's headers."""
    if meta.kind is PatchKind.REWRITE:
        return meta.files
    paths = re.findall(r"^\+\+\+ b/(\S+)", meta.file.read_text(errors="replace"), re.MULTILINE)
    return tuple(dict.fromkeys(paths))


def _number(url: str, slug: str) -> int | None:
    match = re.search(re.escape(slug) + r"/(?:pull|issues)/(\d+)/?$", url.strip())
    return int(match.group(1)) if match else None


class _Search:
    """The PRs found for one patch, merged by number."""

    def __init__(self, gh: Gh, slug: str, meta: PatchMeta) -> None:
        self.gh, self.slug, self.meta = gh, slug, meta
        self.found: dict[int, Found] = {}
        self.files = patch_files(meta)
        self.words = keywords(meta)
        self.diffs = 0  # `gh pr diff` calls made

    def add(self, raw: object, why: str) -> None:
        number = _pr_number(raw)
        if number is None or not isinstance(raw, dict):
            raise SourceError(
                f"`gh` answered for {self.slug} without a pull request number "
                f"(a whole number from 1 to {MAX_NUMBER}): {_short(raw)}",
                hint="update the GitHub CLI (gh --version), then try again",
            )
        state = _STATES.get(_text(raw.get("state")).upper(), PrState.CLOSED)
        old = self.found.get(number)
        evidence = (*old.evidence, why) if old else (why,)
        url = f"https://github.com/{self.slug}/pull/{number}"  # never a URL gh made up
        title = _text(raw.get("title"))[:MAX_TITLE]
        who = raw.get("author")
        login = str(who.get("login", "")) if isinstance(who, dict) else ""
        author = login if LOGIN.match(login) else ""
        self.found[number] = Found(
            number, url, state, title, tuple(dict.fromkeys(evidence)), author
        )

    def recorded(self) -> None:
        urls = [u for u in (self.meta.upstream.pr, *self.meta.prs) if u]
        for number in dict.fromkeys(n for n in (_number(u, self.slug) for u in urls) if n):
            raw = self.gh.json("pr", "view", str(number), "--repo", self.slug, "--json", FIELDS)
            self.add(raw, "recorded in the patch metadata")

    def _list(self, query: str) -> list[object]:
        args = ("--state", "all", "--search", query, "--json", FIELDS, "--limit", LIMIT)
        result = self.gh.json("pr", "list", "--repo", self.slug, *args)
        listed = result if isinstance(result, list) else []
        if len(listed) > MAX_PRS:
            log.warning(
                "`gh pr list` answered %d PRs for %r in %s; only the first %d (MAX_PRS) are "
                "examined",
                len(listed),
                query,
                self.slug,
                MAX_PRS,
            )
        return listed[:MAX_PRS]

    def issues(self) -> None:
        for number in (_number(i, self.slug) for i in self.meta.issues):
            if number is None:
                continue
            for raw in self._list(f"{number} in:title,body"):
                self.add(raw, f"names #{number}")

    def code(self) -> None:
        for word in self.words:
            for raw in self._list(word):
                files = raw.get("files") if isinstance(raw, dict) else None
                touched = [f for f in _paths(files) if f in self.files]
                number = _pr_number(raw)
                if touched and number is not None and self._same_code(str(number), touched):
                    self.add(raw, f"changes {', '.join(touched)} ({word})")

    def _same_code(self, number: str, files: Iterable[str]) -> bool:
        """Whether the PR's diff of ``files`` names one of the patch's identifiers (False
        once MAX_DIFFS diffs were read for this patch: said once)."""
        self.diffs += 1
        if self.diffs > MAX_DIFFS:
            if self.diffs == MAX_DIFFS + 1:
                log.warning(
                    "%s: more PRs change its files than the %d (MAX_DIFFS) whose diffs are "
                    "read; the rest are not examined",
                    self.meta.id,
                    MAX_DIFFS,
                )
            return False
        diff = self.gh.text("pr", "diff", number, "--repo", self.slug)
        lines = _changed(diff, set(files))
        return any(word in line for line in lines for word in self.words)


def _pr_number(raw: object) -> int | None:
    """A PR's number as gh gives it (an integer, or digits), within 1..MAX_NUMBER."""
    value = raw.get("number") if isinstance(raw, dict) else None
    if isinstance(value, str) and value.isdigit() and len(value) <= 10:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_NUMBER:
        return None
    return value


def _text(value: object) -> str:
    """A string field of gh's answer; anything else (a number, a table) counts as empty."""
    return value if isinstance(value, str) else ""


def _short(raw: object) -> str:
    """What a person sees of an answer patchkit cannot use: its kind and keys, never all of it."""
    if isinstance(raw, dict):
        return "an object with keys " + ", ".join(sorted(str(k)[:40] for k in raw)[:10])
    return f"a {type(raw).__name__}"


def _paths(files: object) -> list[str]:
    items = files if isinstance(files, list) else []
    return [f["path"] for f in items if isinstance(f, dict) and isinstance(f.get("path"), str)]


def _changed(diff: str, files: set[str]) -> list[str]:
    """Changed lines and hunk headers of ``files`` in a unified diff."""
    lines, keep = [], False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            keep = any(line.endswith(f" b/{f}") for f in files)
        elif keep and (line.startswith(("+", "-", "@@")) and not line.startswith(("+++", "---"))):
            lines.append(line)
    return lines


def search(gh: Gh, slug: str, meta: PatchMeta) -> list[Found]:
    """Every upstream PR found for ``meta``'s fix in ``slug``, strongest first."""
    s = _Search(gh, slug, meta)
    s.recorded()
    s.issues()
    s.code()
    recorded = "recorded in the patch metadata"
    return sorted(
        s.found.values(),
        key=lambda f: (_RANK[f.state], recorded not in f.evidence, -len(f.evidence), -f.number),
    )


def decide(
    found: list[Found], today: str, recorded: UpstreamPr | None = None, me: str | None = None
) -> UpstreamPr:
    """The ``[upstream]`` table the search gives: the strongest PR found (its author, and
    whether that is ``me``, the exporter), every other one found as related, or none. A
    recorded PR the search could not look up (another repository's) is kept, never dropped."""
    if not found:
        if recorded is not None and recorded.pr:
            return replace(recorded, checked=today)
        return UpstreamPr(None, PrState.NONE, today)
    best, *rest = found
    related = tuple(RelatedPr(f.url, f.state, "; ".join(f.evidence)) for f in rest)
    author = best.author or None
    ours = (author == me) if author and me else None
    return UpstreamPr(best.url, best.state, today, author, ours, related)
