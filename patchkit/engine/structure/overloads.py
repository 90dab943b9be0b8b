"""Telling overloads apart: definitions that share a scope path (``sort`` taking a view and a
flag, ``sort`` taking a view and a range) are one definition each by their signature, the
lines from the scope's first line to the opening of its body.

A look-alike twin (a copy under the same name with the same parameters) is still a twin:
only a signature that exactly one of the target's scopes has picks it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from patchkit.engine.structure.scopes import Scope

_SPACE = re.compile(rb"\s+")
_HEAD = 8  # lines a signature may span at most


def signature(lines: Sequence[bytes], scope: Scope) -> bytes:
    """The scope's head, whitespace left out: ``template<classV>voidsort(Vconst&v,boolf)``
    (to its body's ``{``, a Python ``:`` ending a line, or ``_HEAD`` lines)."""
    head = b""
    for row in range(scope.start, min(scope.end + 1, scope.start + _HEAD, len(lines))):
        line = lines[row]
        cut = line.find(b"{")
        head += _SPACE.sub(b"", line[:cut] if cut >= 0 else line)
        if cut >= 0 or line.rstrip().endswith(b":"):
            break
    return head


def by_signature(
    base: Sequence[bytes], scope: Scope, lines: Sequence[bytes], twins: Sequence[Scope]
) -> list[Scope]:
    """The one of ``twins`` (scopes of ``lines`` sharing ``scope``'s path) whose signature is
    the base scope's; all of them when not exactly one has it."""
    want = signature(base, scope)
    same = [twin for twin in twins if signature(lines, twin) == want]
    return same if len(same) == 1 else list(twins)
