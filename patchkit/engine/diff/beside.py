"""Whether lines a patch inserts stay apart from the statement upstream rewrote beside them.

A hunk placed by one side of its context may find the line right beside its change rewritten
upstream. That is a conflict a merge of lines cannot judge, and most often one for the merge of
statements: the patch changed ``return items[0]`` right under upstream's new
``items.sort(reverse=True)``. Lines the patch only *inserts* there (the base line beside them
kept) stay apart from upstream's rewrite, and keep their side of it, when upstream's rewrite
is the same code written again, in one of two ways:

- renamed: the same tokens, but names the statement reads (no callee, no member) replaced one
  for one, each old name gone from the file here (``S_IRWU_RWG_RWO & ~umask`` became
  ``DEFAULT_PERM & ~umask``);
- reshaped: the same names, numbers and strings, only their order and punctuation changed
  (``GET_EP(&ep, worker, ...)`` became ``ep = GET_EP(worker, ...)``);
- revalued: the same tokens, but numbers or strings given in place of others
  (``define([ucx_ver_minor], 3)`` became ``..., 2)``: a version);

and the lines the patch changes (added or removed) name none of the names upstream's rewrite
renamed or moved, nor, for new values, any name the rewritten lines hold but those they call
(``items.pop(0)`` became ``items.pop(1)``: a patch's line reading ``items`` is not apart), nor
any number or string upstream's rewrite replaced, whole or as a part of one of theirs
(``cfg.get("max_conn")`` became ``cfg.get("max_connections")``: a patch's
``DEFAULTS["max_conn"] = 5`` is written for the old key; ``3`` became ``2``: a patch's
``[1.3.0]`` copies the old value). A
rewrite that adds or drops anything (``sort()`` became ``sort(reverse=True)``), a renamed
callee or member, a rewrite the lines around it do not bound: not apart. Text is read as
tokens (names, numbers, strings, single marks), so no grammar is needed here: placement asks
where the grammar found the two in one scope, and, in a file without one, where the rewrite
is bounded by the base's own lines on its far side (both sides of the hunk then anchor it).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence

from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.placement import weight

_WINDOW = 12  # lines read beyond the hunk for upstream's rewrite and the lines that bound it
_TOKEN = re.compile(
    rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9A-Za-z_.]*|\S'
)
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_MEMBER = {b".", b":"}  # obj.name, ns::name (``->`` is read as two marks)


def _tokens(lines: Sequence[bytes]) -> list[bytes]:
    return _TOKEN.findall(b"".join(lines))


def _is_name(token: bytes) -> bool:
    return _NAME.fullmatch(token) is not None


def _word(token: bytes) -> bool:
    """A name, a number or a string (not a single mark)."""
    return len(token) > 1 or token.isalnum() or token == b"_"


def _kept_beside(hunk: Hunk, after: bool) -> bool:
    """The hunk's change on the dropped side only inserts: the first old line met from that
    edge is a context line (the base line beside the insertion is kept)."""
    ops = reversed(hunk.ops) if after else iter(hunk.ops)
    return next((kind for kind, _ in ops if kind != "+"), "-") == " "


def _rewrite(
    base: Sequence[bytes], target: Sequence[bytes], base_row: int, row: int, after: bool
) -> tuple[list[bytes], list[bytes]] | None:
    """Upstream's rewrite of the lines right after (``after``) or before ``base_row``, as
    ``row`` here: (base lines, lines here), when telling lines alike at base and here bound
    it on its far side; else None."""
    if after:
        old, new = list(base[base_row : base_row + _WINDOW]), list(target[row : row + _WINDOW])
    else:
        old = list(base[max(base_row - _WINDOW, 0) : base_row])[::-1]
        new = list(target[max(row - _WINDOW, 0) : row])[::-1]
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    if len(ops) < 2 or ops[0][0] != "replace" or ops[1][0] != "equal":
        return None
    _, _, i2, _, j2 = ops[0]
    _, e1, e2, _, _ = ops[1]
    if not any(weight(line) for line in old[e1:e2]):
        return None
    was, now = old[:i2], new[:j2]
    return (was, now) if after else (was[::-1], now[::-1])


def _renamed(was: list[bytes], now: list[bytes], target: Sequence[bytes]) -> set[bytes] | None:
    """The names of a rewrite that only renamed names it reads, old and new; else None."""
    if len(was) != len(now):
        return None
    pairs = {(a, b) for a, b in zip(was, now, strict=True) if a != b}
    if not pairs or any(not (_is_name(a) and _is_name(b)) for a, b in pairs):
        return None
    if len({a for a, _ in pairs}) != len(pairs):
        return None  # one name became two: not a rename
    for i, token in enumerate(was):
        changed = token != now[i]
        called = i + 1 < len(was) and was[i + 1] == b"("
        member = i > 0 and (was[i - 1] in _MEMBER or was[i - 2 : i] == [b"-", b">"])
        if changed and (called or member):
            return None
    text = b"".join(target)
    if any(re.search(rb"\b" + re.escape(a) + rb"\b", text) for a, _ in pairs):
        return None  # the old name is still here: another thing, not the same one renamed
    return {name for pair in pairs for name in pair}


def _reshaped(was: list[bytes], now: list[bytes]) -> set[bytes] | None:
    """The names a rewrite moved, when it kept every name, number and string (only their
    order and the marks between them changed); else None."""
    if Counter(filter(_word, was)) != Counter(filter(_word, now)):
        return None
    matcher = difflib.SequenceMatcher(None, was, now, autojunk=False)
    moved = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            moved |= {t for t in (*was[i1:i2], *now[j1:j2]) if _is_name(t)}
    return moved


def _literal(token: bytes) -> bool:
    return token[:1] in (b'"', b"'") or token[:1].isdigit()


def _revalued(was: list[bytes], now: list[bytes]) -> set[bytes] | None:
    """Every name a rewrite holds but those it calls, when it only gave other numbers or
    strings (a version bumped): what it does to them may have changed; else None."""
    if len(was) != len(now):
        return None
    pairs = [(a, b) for a, b in zip(was, now, strict=True) if a != b]
    if not pairs or not all(_literal(a) and _literal(b) for a, b in pairs):
        return None
    return {t for i, t in enumerate(was) if _is_name(t) and was[i + 1 : i + 2] != [b"("]}


def inserted_apart(
    base: Sequence[bytes],
    target: Sequence[bytes],
    hunk: Hunk,
    rows: tuple[int, int],
    after: bool,
) -> bool:
    """Whether ``hunk``'s change beside upstream's rewrite, right after (``after``) or before
    its base row ``rows[0]`` (``rows[1]`` here), only inserts lines that stay apart from it,
    as the module says."""
    if not _kept_beside(hunk, after):
        return False
    found = _rewrite(base, target, *rows, after)
    if found is None:
        return False
    was, now = _tokens(found[0]), _tokens(found[1])
    moved = _renamed(was, now, target)
    if moved is None:
        moved = _reshaped(was, now)
    if moved is None:
        moved = _revalued(was, now)
    if moved is None:
        return False
    changed = [t for kind, line in hunk.ops if kind != " " for t in _tokens([line])]
    named = {t for t in changed if _is_name(t)}
    return not moved & named and not _replaced_values(was, now) & _parts(changed)


def _replaced_values(was: list[bytes], now: list[bytes]) -> set[bytes]:
    """The numbers and strings upstream's rewrite took out, unquoted."""
    gone = Counter(filter(_literal, was)) - Counter(filter(_literal, now))
    return {t.strip(b"\"'") for t in gone} - {b""}


def _parts(tokens: Sequence[bytes]) -> set[bytes]:
    """The numbers and strings among ``tokens``, unquoted, whole and cut at their marks."""
    found = set()
    for token in filter(_literal, tokens):
        bare = token.strip(b"\"'")
        found |= {bare, *re.split(rb"[^0-9A-Za-z_]+", bare)}
    return found - {b""}
