"""Names the target file still spells the old way, in the lines a patch adds.

A patch made on a newer file adds ``git_buf_dispose(&buf);`` where the release's file calls
that function ``git_buf_free`` on every line (upstream renamed it after the release branched):
the added line, carried as written, names what the release's file never names. The added line
takes the target's spelling when

- it names a word the base file names and the target file names nowhere (words the patch
  brings that neither names are the patch's own, and stay);
- the base file against the target's shows that word rewritten one for one: lines of the base
  that the target has in place of them, differing only by one run of names, on two lines at
  least, every such line agreeing on the new spelling, the old spelling gone from the target
  and the new one absent from the base (learned as :func:`patchkit.engine.diff.renames.learn`
  learns a scope's renames, here across the whole file);
- no line the patch adds or removes defines the word anew (the patch brings it itself);
- the added lines name the word only as a called function (``word(``), never as a member
  (``.word``, ``->word``, ``ns::word``), a keyword argument, a parameter or a variable: a
  local that upstream renamed in one function says nothing of another function's names, nor of
  another API's attribute or keyword of the same spelling;
- no hunk that removes lines (those are not respelled) adds a line naming the word: the patch's
  own uses of one name are never split between two spellings.

Only a hunk that removes nothing changes, and only its added lines; context lines stay the
base's, for placing and merging. A hunk that removes lines is merged against upstream's rewrite
of them (:mod:`patchkit.engine.diff.renames`, :mod:`patchkit.engine.diff.present`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from patchkit.engine.diff.parse import Hunk
from patchkit.engine.diff.renames import Rename, learn, renamed, tokens

_WORD = re.compile(rb"[A-Za-z_]\w*\Z")


def _words(lines: Sequence[bytes]) -> set[bytes]:
    return {t[0] for line in lines for t in tokens(line) if _WORD.match(t[0])}


def _names(text: bytes, word: bytes) -> bool:
    """``word`` stands in ``text`` as a whole word (found by plain search: no regex scan)."""
    at = text.find(word)
    while at >= 0:
        before, after = text[at - 1 : at], text[at + len(word) : at + len(word) + 1]
        if not _WORDLIKE.match(before) and not _WORDLIKE.match(after):
            return True
        at = text.find(word, at + 1)
    return False


_WORDLIKE = re.compile(rb"\w\Z")


_LONG = 2000  # characters: a longer line (minified, generated) is not read for names
_STATEMENT = {b"return", b"else", b"case", b"if", b"while", b"not", b"and", b"or", b"in", b"await"}
_CAP = 40  # base lines naming a word paired with the target's, at most


def _defines(line: bytes, word: bytes) -> bool:
    """``line`` defines ``word``: a name or ``*``/``&`` right before it (a type, ``def``,
    ``#define``; not ``return``), and ``(``, ``=``, ``;``, ``[`` or ``:`` right after it."""
    found = [t[0] for t in tokens(line)]
    for i, token in enumerate(found):
        if token != word or i == 0 or i + 1 >= len(found) or found[i + 1] not in _OPENS:
            continue
        before = found[i - 1]
        if before in (b"*", b"&") or (_WORD.match(before) and before not in _STATEMENT):
            return True
    return False


_OPENS = {b"(", b"=", b";", b"[", b":"}


def _defined(hunks: Sequence[Hunk], word: bytes) -> bool:
    """A line the patch adds or removes defines ``word`` (the patch brings it itself)."""
    return any(
        kind != " " and word in text and (len(text) > _LONG or _defines(text, word))
        for hunk in hunks
        for kind, text in hunk.ops
    )


def _index(lines: Sequence[bytes]) -> dict[bytes, list[int]]:
    found: dict[bytes, list[int]] = {}
    for i, line in enumerate(lines):
        found.setdefault(line, []).append(i)
    return found


def _in_place(base: Sequence[bytes], target: Sequence[bytes], word: bytes) -> list[Rename]:
    """The renames of ``word`` that its base lines show, each paired with the line the target
    has in its place (framed alike: the same text before and after the word, a neighbour of
    it at base kept right beside it), and read by :func:`learn`: the few lines that can show
    it, never a line diff of the whole file."""
    where: dict[bytes, list[int]] | None = None
    rows: list[bytes] = []
    paired: list[bytes] = []
    for i, line in enumerate(base):
        if word not in line or len(line) > _LONG or word not in _words([line]):
            continue
        where = where if where is not None else _index(target)
        at = next(t for t in tokens(line) if t[0] == word)
        head, tail = line[: at[1]], line[at[2] :]
        above = where.get(base[i - 1], []) if i > 0 else []  # the file's first line: none
        below = where.get(base[i + 1], []) if i + 1 < len(base) else []  # its last: none
        spots = {j + 1 for j in above} | {j - 1 for j in below}
        fits = [
            target[j]
            for j in spots
            if 0 <= j < len(target)
            and target[j].startswith(head)
            and target[j].endswith(tail)
            and len(target[j]) > len(head) + len(tail)
        ]
        if len(set(fits)) == 1:
            rows.append(line)
            paired.append(fits[0])
        if len(rows) >= _CAP:
            break
    return [r for r in learn(rows, paired) if word in r.old]


_MEMBER = {b".", b"->", b"::", b">", b":"}


def _only_called(lines: Sequence[bytes], word: bytes) -> bool:
    """Every use of ``word`` in ``lines`` is a call of a free function (``word(``; no member,
    no keyword argument, no variable)."""
    for line in lines:
        found = [t[0] for t in tokens(line)]
        for i, token in enumerate(found):
            if token != word:
                continue
            if found[i + 1 : i + 2] != [b"("] or (i > 0 and found[i - 1] in _MEMBER):
                return False
    return True


def file_renames(
    base: Sequence[bytes], target: Sequence[bytes], hunks: Sequence[Hunk]
) -> list[Rename]:
    """The renames upstream made across the file that the inserting hunks' added lines need:
    each of a word those lines name, the base names and the target nowhere, to a spelling
    the base names nowhere."""
    inserting = [h for h in hunks if not any(kind == "-" for kind, _ in h.ops)]
    added = [line for hunk in inserting for line in hunk.added]
    kept = _words([line for hunk in hunks if hunk not in inserting for line in hunk.added])
    named = {w for w in _words(added) - kept if _only_called(added, w)}
    if not named:
        return []
    base_text, target_text = b"".join(base), b"".join(target)
    # a word anywhere in the target's text, even inside a longer one, counts as named there:
    # one scan of the text per word, and never a rename the target may still spell
    gone = [w for w in sorted(named) if w not in target_text and _names(base_text, w)]
    found = [r for w in gone if not _defined(hunks, w) for r in _in_place(base, target, w)]
    return [r for r in found if not any(_names(base_text, w) for w in _words([r.new]))]


def respelled(hunk: Hunk, renames: Sequence[Rename]) -> Hunk:
    """``hunk`` with its added lines in the target's spelling (itself when none changes, or
    when it removes lines: those a merge weighs against upstream's rewrite of them)."""
    if not renames or any(kind == "-" for kind, _ in hunk.ops):
        return hunk
    ops = tuple((k, renamed([t], renames)[0] if k == "+" else t) for k, t in hunk.ops)
    if ops == hunk.ops:
        return hunk
    return dataclasses.replace(
        hunk,
        new=tuple(text for kind, text in ops if kind != "-"),
        added=tuple(text for kind, text in ops if kind == "+"),
        ops=ops,
    )
