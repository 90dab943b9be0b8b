"""Where a rewrite looks, decided from text alone: its selector and the candidate files.

A rewrite names the file it was made on (``path``, its *home*), and may widen the search with
``search`` globs (``"vllm/model_executor/layers/fused_moe/**/*.py"``) so that it follows the
code when upstream renames the file or moves the function. Its anchors are qualified-name
patterns: ``*`` matches within one name (``"*Experts._supports_current_device"``), ``**`` any
number of dotted names; each with an expected count of edit sites, exact or a ``(low, high)``
range, over every candidate file together.

A file is a *candidate* when it is the home or matches a glob, and its text passes the cheap
prefilter: every ``needles`` regex occurs, and some anchor's last name is defined in it (a
wildcard last name always passes). Nothing here imports a rewrite module's code beyond its
class attributes, or parses a tree file: a :class:`Selector` is plain data (``to_json``), so the
candidate set of a tree can be computed, or cached with the rewrite module's hash, before any
libcst parse.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

Lister = Callable[[str], Iterable[str]]  # directory ("" for the root) -> file paths under it

_SEGMENT = r"[A-Za-z_*][A-Za-z0-9_*]*"
_QUALNAME = rf"{_SEGMENT}(?:\.{_SEGMENT})*"
ANCHOR_RE = re.compile(rf"^{_QUALNAME}(?:\|{_QUALNAME})*$")


@dataclass(frozen=True)
class AnchorSpec:
    """One anchor: a qualified-name pattern and the edit sites expected under it, in all."""

    pattern: str  # "Class.method", "*._supports_current_device", "**", "a|*.b" (either)
    low: int
    high: int

    @property
    def exact(self) -> bool:
        return "*" not in self.pattern and "|" not in self.pattern

    @property
    def alternatives(self) -> list[str]:
        return self.pattern.split("|")

    @property
    def expected(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"

    def matches(self, qualname: str) -> bool:
        return qualname == self.pattern or (
            not self.exact and _name_regex(self.pattern).match(qualname) is not None
        )

    def may_be_defined_in(self, data: bytes) -> bool:
        """False only when no alternative can be defined in ``data``: some name of it without a
        wildcard (the class, the method) is defined nowhere in the text."""
        return any(
            all(defines(data, name) for name in alt.split(".") if "*" not in name)
            for alt in self.alternatives
        )


def anchor_spec(pattern: str, count: object) -> AnchorSpec | None:
    """``count`` is a positive int or a ``(low, high)`` pair with 0 <= low <= high, 1 <= high."""
    if isinstance(count, int) and not isinstance(count, bool):
        return AnchorSpec(pattern, count, count) if count >= 1 else None
    if not isinstance(count, tuple) or len(count) != 2:
        return None
    low, high = count
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (low, high)):
        return None
    return AnchorSpec(pattern, low, high) if 0 <= low <= high and high >= 1 else None


@dataclass(frozen=True)
class Selector:
    """Everything that decides which files a rewrite class may touch."""

    rewrite: str  # the class name
    home: str  # the path it was made on
    search: tuple[str, ...]  # globs of other files it may have moved to
    needles: tuple[str, ...]  # regexes every candidate's text must contain
    anchors: tuple[AnchorSpec, ...]

    def roots(self) -> list[str]:
        """Directories to list: the literal part of each glob ("" for the whole tree)."""
        return list(dict.fromkeys(_root(glob) for glob in self.search))

    def wants(self, path: str) -> bool:
        return path == self.home or any(_glob_regex(g).match(path) for g in self.search)

    def admits(self, data: bytes) -> bool:
        """The text prefilter: no parse."""
        if not all(_needle(n).search(data) for n in self.needles):
            return False
        return any(a.may_be_defined_in(data) for a in self.anchors)

    def to_json(self) -> dict[str, object]:
        return {
            "rewrite": self.rewrite,
            "home": self.home,
            "search": list(self.search),
            "needles": list(self.needles),
            "anchors": {a.pattern: [a.low, a.high] for a in self.anchors},
        }


def wanted(selectors: Sequence[Selector], listing: Lister | None) -> dict[str, list[Selector]]:
    """Path -> the selectors whose home or globs take it, before its text is looked at; home
    paths first, then sorted. Without a ``listing`` (a reader that cannot list), only home
    paths are looked at."""
    paths = list(dict.fromkeys(s.home for s in selectors))
    if listing is not None:
        roots = {root for s in selectors for root in s.roots()}
        listed = {p for root in sorted(roots) for p in listing(root)}
        paths += sorted(listed - set(paths))
    found: dict[str, list[Selector]] = {}
    for path in paths:
        wanting = [s for s in selectors if s.wants(path)]
        if wanting:
            found[path] = wanting
    return found


def candidates(
    selectors: Sequence[Selector],
    read: Callable[[str], bytes | None],
    listing: Lister | None,
) -> dict[str, list[Selector]]:
    """Candidate path -> the selectors that take it (their text prefilter passes)."""
    found: dict[str, list[Selector]] = {}
    for path, wanting in wanted(selectors, listing).items():
        taking = admitting(wanting, read(path))
        if taking:
            found[path] = taking
    return found


def admitting(wanting: Sequence[Selector], data: bytes | None) -> list[Selector]:
    """Of the selectors that want a file, those whose prefilter its text passes."""
    return [s for s in wanting if data is not None and s.admits(data)]


def searched(selectors: Sequence[Selector]) -> str:
    """Where the selectors looked, for messages: ``a.py and pkg/**/*.py``."""
    places = list(
        dict.fromkeys([s.home for s in selectors] + [g for s in selectors for g in s.search])
    )
    return " and ".join(places)


def matches_any(specs: Iterable[AnchorSpec], qualname: str) -> AnchorSpec | None:
    return next((a for a in specs if a.matches(qualname)), None)


def from_counts(anchors: Mapping[str, object]) -> tuple[AnchorSpec, ...]:
    """Specs from a rewrite's ``anchors`` dict, already validated."""
    specs = [anchor_spec(p, c) for p, c in anchors.items()]
    return tuple(s for s in specs if s is not None)


# -- patterns ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=512)
def _name_regex(pattern: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_alternative(alt)})" for alt in pattern.split("|")) + r"\Z")


def _alternative(pattern: str) -> str:
    parts = []
    for segment in pattern.split("."):
        if segment == "**":
            parts.append(r"(?:[^.]+(?:\.[^.]+)*)")
        else:
            parts.append("".join("[^.]*" if c == "*" else re.escape(c) for c in segment))
    return r"\.".join(parts)


@functools.lru_cache(maxsize=512)
def _glob_regex(glob: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(r"(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _root(glob: str) -> str:
    literal = []
    for part in glob.split("/")[:-1]:
        if any(c in part for c in "*?["):
            break
        literal.append(part)
    return "/".join(literal)


@functools.lru_cache(maxsize=512)
def _defines(name: str) -> re.Pattern[bytes]:
    word = re.escape(name.encode())
    return re.compile(rb"\b(?:def|class)\s+" + word + rb"\b|^[ \t]*" + word + rb"[ \t]*[:=]", re.M)


def defines(data: bytes, name: str) -> bool:
    """``name`` is defined in ``data``: ``def name``, ``class name`` or ``name =`` / ``name:``
    at a line's start. The regex runs only on the lines holding the name, found by a plain
    substring search (scanning a 300 kB file with the regex alone takes tens of ms)."""
    word = name.encode()
    pattern = _defines(name)
    at = data.find(word)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        if pattern.search(data, start, len(data) if end < 0 else end + 1):
            return True
        at = data.find(word, len(data) if end < 0 else end + 1)
    return False


@functools.lru_cache(maxsize=512)
def _needle(regex: str) -> re.Pattern[bytes]:
    return re.compile(regex.encode(), re.M)


def valid_glob(glob: str) -> bool:
    return bool(glob) and not glob.startswith("/") and ".." not in glob.split("/")


def valid_needle(regex: str) -> bool:
    try:
        re.compile(regex)
    except re.error:
        return False
    return True
