"""A mod's ``grep`` self-check read statically into a probe: ``grep -q "marker" "$SITE/vllm/x.py"
|| exit 1`` (or a plain ``grep -q`` under ``set -e``) says the file holds ``marker`` once the mod
has patched it, as ``python3 -c 'assert "marker" in inspect.getsource(m)'`` does.

Only what can be redone exactly is read: the quiet options (``-q``, ``-s``, ``-F``, ``-e``), one
marker, literal text (``-F``, or a basic expression with no character that means more than itself;
a ``.`` is taken as itself, the text a person marks a patch with), and Python files of the target
named by their installed path. Anything else is kept as a refusal naming the line and why."""

from __future__ import annotations

import posixpath
import re

from patchkit.importers.paths import repo_path
from patchkit.importers.selfcheck import Probe, SelfCheck
from patchkit.importers.shell import known

_QUIET = {"-q", "-s", "--quiet", "--silent", "-qs", "-sq"}
_FIXED = {"-F", "--fixed-strings", "-qF", "-Fq", "-sF", "-Fs"}
_SPECIAL = re.compile(r"[\[\]*^$\\]")  # a basic regular expression's characters that match more


def read_grep(
    words: tuple[str, ...], *, line: int, text: str, target: str, cwd: str = "/"
) -> SelfCheck:
    """The probe of ``grep [-qsF] [-e] MARKER FILE...`` (``words`` evaluated, files relative to
    ``cwd``), or why none."""
    options, rest, fixed, pattern = _split(words[1:])
    if options is None:
        return SelfCheck(line, text, refused="grep with options a static test cannot redo")
    if pattern is None:
        if not rest:
            return SelfCheck(line, text, refused="grep with no marker")
        pattern, rest = rest[0], rest[1:]
    if not known(pattern) or not pattern:
        return SelfCheck(line, text, refused="a marker computed at run time")
    if not fixed and _SPECIAL.search(pattern):
        return SelfCheck(line, text, refused="a regular expression, not a marker")
    if not rest:
        return SelfCheck(line, text, refused="grep reading its input, not a file of the target")
    probes = []
    for name in rest:
        dotted = _module(posixpath.join(cwd, name), target)
        if dotted is None:
            return SelfCheck(line, text, refused=f"{name} is no Python file of {target}")
        probes.append(Probe(dotted, present=(pattern,)))
    return SelfCheck(line, text, tuple(probes))


def _split(
    args: tuple[str, ...],
) -> tuple[tuple[str, ...] | None, tuple[str, ...], bool, str | None]:
    """(options, operands, fixed strings, the ``-e`` pattern); options None when one is not
    a quiet or fixed-string one."""
    options: list[str] = []
    fixed, pattern = False, None
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        flag = args[i]
        if flag in ("-e", "--regexp") and pattern is None and i + 1 < len(args):
            pattern, i = args[i + 1], i + 2
            continue
        if flag not in _QUIET | _FIXED:
            return None, (), False, None
        fixed = fixed or flag in _FIXED
        options.append(flag)
        i += 1
    operands = args[i + 1 :] if i < len(args) and args[i] == "--" else args[i:]
    return tuple(options), tuple(operands), fixed, pattern


def _module(name: str, target: str) -> str | None:
    """The dotted module an installed file of the target is (``/site-packages/vllm/x.py`` →
    ``vllm.x``); None for a file import cannot place."""
    if not known(name) or not name.endswith(".py"):
        return None
    full = posixpath.normpath(name)
    marker = re.search(r"(?:^|/)(?:site|dist)-packages/", full)
    if marker is None or repo_path(full, target) is None:
        return None
    installed = full[marker.end() : -len(".py")]
    parts = installed.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)
