"""Telling overloads apart: definitions that share a scope path (``sort`` taking a view and a
flag, ``sort`` taking a view and a range) are one definition each by their signature, the
lines from the scope's first line to the opening of its body.

A look-alike twin (a copy under the same name with the same parameters) is still a twin:
only a signature that exactly one of the target's scopes has picks it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from patchkit.engine.structure.scopes import Scope, ScopePath, ScopeTree

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


_OVERLOADING = ("cpp", "cuda")  # C has no overloads; Python redefines a name
_BUILTIN = {"int", "char", "short", "long", "double", "float", "bool", "signed", "unsigned"}
_OPEN, _CLOSE = b"(<[{", b")>]}"
_TRAILING = re.compile(rb"^[\s)]*((?:const|volatile|&&|&|\s)*)")


def _split_top(text: bytes) -> list[bytes]:
    """``text`` split at its commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in _OPEN) - (char in _CLOSE)
        if char == ord(",") and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _parameter_type(parameter: bytes) -> bytes:
    """``const T& x = T{}`` as ``const T&``: its default and its name left out."""
    depth, cut = 0, len(parameter)
    for i, char in enumerate(parameter):
        depth += (char in _OPEN) - (char in _CLOSE)
        if char == ord("=") and depth == 0:
            cut = i
            break
    words = parameter[:cut].split()
    last = words[-1].decode(errors="replace") if words else ""
    if len(words) > 1 and last.isidentifier() and last not in _BUILTIN:
        words[-1] = b""
    return _canonical(b" ".join(words).replace(b" *", b"*").replace(b" &", b"&").strip())


_CV = (b"const", b"volatile")


def _canonical(declared: bytes) -> bytes:
    """A parameter's type as it counts in a C++ signature: the ``const``/``volatile`` of a
    by-value parameter itself left out (``const int`` and ``int`` are one type there, so are
    ``int* const`` and ``int*``), those of what a pointer or reference leads to kept and put
    first (``int const*`` is ``const int*``, which differs from ``int*``)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(declared):
        depth += (char in _OPEN) - (char in _CLOSE)
        if depth == 0 and char in b"*&":
            parts += [declared[start:i], declared[i : i + 1]]
            start = i + 1
    parts.append(declared[start:])
    parts[-1] = b" ".join(w for w in parts[-1].split() if w not in _CV)  # the parameter's own
    for i in range(0, len(parts) - 1, 2):  # what each pointer or reference leads to
        words = parts[i].split()
        cv = sorted(w for w in words if w in _CV)
        parts[i] = b" ".join([*cv, *(w for w in words if w not in _CV)])
    return b"".join(parts)


def _parameters(head: bytes, name: str) -> bytes | None:
    """The parameter types and qualifiers of ``name(...)`` in ``head``: ``(size_t,bool)const``;
    None when ``head`` holds no whole parameter list of that name."""
    short = name.rsplit("::", 1)[-1].encode()
    found = re.search(rb"\b" + re.escape(short) + rb"\s*\(", head) if short else None
    if found is None:
        return None
    depth, start = 0, found.end() - 1
    for i in range(start, len(head)):
        depth += (head[i] in b"(") - (head[i] in b")")
        if depth == 0:
            types = b",".join(_parameter_type(p) for p in _split_top(head[start + 1 : i]))
            qualifiers = _TRAILING.match(head[i:])
            return (
                b"(" + types + b")" + b"".join((qualifiers.group(1) if qualifiers else b"").split())
            )
    return None


def overloaded(tree: ScopeTree, lines: Sequence[bytes], path: ScopePath) -> bool:
    """Whether the definitions of ``tree`` at ``path`` are C++ overloads, each with parameter
    types of its own: not a name defined twice. Copies with the same parameter types (their
    names may differ) are a second definition; so is any whose parameters cannot be read."""
    if tree.language not in _OVERLOADING:
        return False
    seen = set()
    for scope in tree.find(path):
        head = b" ".join(lines[scope.start : min(scope.end + 1, scope.start + _HEAD, len(lines))])
        types = _parameters(head.split(b"{", 1)[0], path[-1])
        if types is None or types in seen:
            return False
        seen.add(types)
    return True
