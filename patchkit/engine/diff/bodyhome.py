"""A hunk's definition found in its own file by its body, where upstream renamed it.

Upstream renamed the definition a hunk changes (``get_warpspeed_policy`` became
``get_lookahead_policy``), or moved its body into a new one and left a wrapper under the old
name (``ztrymalloc_usable`` now only calls ``ztrymalloc_usable_internal``): the scope merge
finds no scope with the base's path, or one whose body is another, and conflicts. The
definition is then looked for in the same file by its body: the named scope whose lines are
nearest the base scope's (difflib's ratio), taken only when all of these hold:

- it is alike enough (``_NEAR``) and clearly nearer than any other scope here (``_CLEAR``);
- the base scope is in turn the nearest to it of the base's definitions, clearly: its body
  is not another definition's that upstream changed less (hunk order kept, never a swap);
- the scope with the base's path here, if any, is not alike (``_NEAR``): the body left it;
- its name is new: no definition of the base has it (never placed in another definition the
  base had);
- both are of one kind (``def``, ``class``, ``struct``, a C function) and their names share a
  word (a rename keeps part of a name: ``get``, ``policy``; ``ztrymalloc``, ``usable``).

Bodies are compared by the lines between their common head and tail, at most ``_MIDDLE`` of
them (a longer rest is no match: no file makes this cost seconds). The base scope is then merged into it as into a moved definition (the hunk's own lines found
untouched, once, in it: :func:`~patchkit.engine.diff.scopemerge.ScopeMerge.merge_into`).
Anything less, and the conflict stands. Only in the engine's last pass, after every other way.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from patchkit.engine.diff.fileview import FileView
from patchkit.engine.ends import common_ends
from patchkit.engine.structure import Scope

_NEAR = 0.6  # a body at least this alike the base's may be the same definition
_CLEAR = 0.1  # the nearest must beat the second by this much
_MIDDLE = 400  # lines between two bodies' common head and tail compared at most
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_KINDS = {"def", "class", "struct", "union", "enum", "namespace", "extern"}


def _words(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(name) if len(w) >= 3} - _KINDS


def _kind(name: str) -> str:
    first = name.split(" ", 1)[0]
    return first if first in _KINDS else ""


def _related(old: str, new: str) -> bool:
    """One kind of definition, names sharing a word."""
    return _kind(old) == _kind(new) and bool(_words(old) & _words(new))


def _alike(want: Sequence[bytes], lines: Sequence[bytes]) -> float:
    """difflib's ratio of the two (their common head and tail counted as matching, the rest
    compared), 0 when a cheap upper bound is already below ``_NEAR`` minus ``_CLEAR`` (a far
    body needs no exact figure) or the rest is longer than ``_MIDDLE`` lines (not compared)."""
    total, floor = len(want) + len(lines), _NEAR - _CLEAR
    if not total or 2 * min(len(want), len(lines)) < floor * total:
        return 0.0
    head, tail = common_ends(want, lines)
    middle = (want[head : len(want) - tail], lines[head : len(lines) - tail])
    if max(map(len, middle)) > _MIDDLE:
        return 0.0
    matcher = difflib.SequenceMatcher(None, *middle, autojunk=False)
    kept = 2 * (head + tail)
    if kept + matcher.quick_ratio() * (total - kept) < floor * total:
        return 0.0
    return (kept + 2 * sum(block.size for block in matcher.get_matching_blocks())) / total


def _ranked(view: FileView, want: Sequence[bytes]) -> list[tuple[float, Scope]]:
    """The definitions of ``view`` by how alike their lines are to ``want``, nearest first."""
    tree = view.tree
    if tree is None:
        return []
    scored = [(_alike(want, view.lines[s.start : s.end + 1]), s) for s in tree.scopes if s.named]
    return sorted(scored, key=lambda pair: -pair[0])


def _clear(ranked: list[tuple[float, Scope]]) -> Scope | None:
    """The nearest, when alike enough and clear of the second; else None."""
    if not ranked or ranked[0][0] < _NEAR:
        return None
    if len(ranked) > 1 and ranked[0][0] - ranked[1][0] < _CLEAR:
        return None
    return ranked[0][1]


def body_home(base: FileView, scope: Scope, target: FileView) -> Scope | None:
    """The definition of ``target`` that holds the body of the base's ``scope`` under another
    name, as the module says; None when there is none, or no sure one."""
    if not scope.named or target.tree is None:
        return None
    want = base.lines[scope.start : scope.end + 1]
    home = _clear(_ranked(target, want))
    if home is None or home.path == scope.path or not _related(scope.path[-1], home.path[-1]):
        return None
    if base.tree is None or base.tree.ending_with(home.path[-1:]):
        return None  # a name the base had: that definition, not this one's new name
    for same in target.tree.find(scope.path):
        if _alike(want, target.lines[same.start : same.end + 1]) >= _NEAR:
            return None  # the base's own name still holds a body like it
    back = _clear(_ranked(base, target.lines[home.start : home.end + 1]))
    return home if back == scope else None
