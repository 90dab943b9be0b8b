"""``sed -i`` edits as mods write them, read (never run) into commands patchkit can redo on any
release: ``s/RE/REPLACEMENT/FLAGS`` (flags ``g``, a number, ``I``), ``a``/``i``/``c`` with one
line of text, and ``d``, each optionally after an address (``/RE/``, a line number, ``$``).
Regular expressions are POSIX basic ones (``-E``/``-r``: extended), translated to Python's.
Anything else (hold space, branches, ``-n`` with ``p``, ``w`` files, ``e``) is refused, naming
the line of run.sh.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.errors import ImportRefused

MAX_PROGRAM = 10_000  # characters of one sed expression


@dataclass(frozen=True)
class SedCommand:
    """One sed command on one file, as Python regular expressions."""

    verb: str  # "s", "a", "i", "c" or "d"
    address: str | None = None  # a Python regex, "#N" for line N, "$" for the last line
    pattern: str = ""  # s: a Python regex
    replacement: str = ""  # s: a Python replacement; a/i/c: the line of text
    count: int = 1  # s: 0 replaces every match of a line (flag g), else the Nth
    ignore_case: bool = False
    line: int = 0  # run.sh's line


def parse_sed(expression: str, *, extended: bool, line: int) -> SedCommand:
    """One ``sed`` expression; ImportRefused naming ``line`` when it is not one import redoes."""
    if len(expression) > MAX_PROGRAM:
        raise ImportRefused(f"line {line}: a sed expression longer than {MAX_PROGRAM} characters")
    text = expression.strip()
    address, text = _address(text, extended, line)
    if not text:
        raise ImportRefused(f"line {line}: sed expression {expression!r} has no command")
    verb, rest = text[0], text[1:]
    if verb == "s":
        return _substitute(rest, address, extended, line)
    if verb in "aic":
        if rest.startswith("\\"):  # a\ TEXT (or a\ and TEXT on the next line): kept as is
            body = rest[2:] if rest.startswith("\\\n") else rest[1:]
        else:  # GNU's one-liner: a TEXT, leading blanks dropped
            body = rest.lstrip()
        if "\n" in body.rstrip("\n"):
            raise ImportRefused(f"line {line}: sed {verb} with several lines is not read")
        return SedCommand(verb, address, replacement=body.rstrip("\n"), line=line)
    if verb == "d" and not rest.strip():
        return SedCommand("d", address, line=line)
    raise ImportRefused(f"line {line}: sed command {verb!r} in {expression!r} is not read")


def _address(text: str, extended: bool, line: int) -> tuple[str | None, str]:
    if text.startswith("/"):
        end = _unescaped(text, "/", 1)
        if end < 0:
            raise ImportRefused(f"line {line}: sed address {text!r} is not closed")
        return _regex(text[1:end], extended), text[end + 1 :].lstrip()
    match = re.match(r"(\d+|\$)\s*", text)
    if match:
        where = "$" if match.group(1) == "$" else f"#{match.group(1)}"
        return where, text[match.end() :]
    return None, text


def _substitute(rest: str, address: str | None, extended: bool, line: int) -> SedCommand:
    if not rest or rest[0] in "\\\n":
        raise ImportRefused(f"line {line}: sed s without a delimiter")
    delim = rest[0]
    first = _unescaped(rest, delim, 1)
    second = _unescaped(rest, delim, first + 1) if first > 0 else -1
    if second < 0:
        raise ImportRefused(f"line {line}: sed s{rest!r} is not closed")
    pattern = rest[1:first].replace("\\" + delim, delim)
    replacement = rest[first + 1 : second].replace("\\" + delim, delim)
    flags = rest[second + 1 :].strip()
    if not re.fullmatch(r"[gI\d]*", flags):
        raise ImportRefused(f"line {line}: sed s flags {flags!r} are not read (g, N, I are)")
    count = 0 if "g" in flags else int("".join(c for c in flags if c.isdigit()) or 1)
    regex, repl = _checked(_regex(pattern, extended), _replacement(replacement), line)
    return SedCommand("s", address, regex, repl, count, "I" in flags, line)


_CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "xdigit": "0-9A-Fa-f",
    "punct": "!-/:-@\\[-`{-~", "word": "a-zA-Z0-9_",
}  # fmt: skip


def _checked(regex: str, replacement: str, line: int) -> tuple[str, str]:
    """A regex Python compiles, refs to groups it has, and no nested repetition (whose time
    grows exponentially with a line's length): else ImportRefused naming ``line``."""
    if _nests_repetition(regex):
        raise ImportRefused(f"line {line}: sed pattern {regex!r} nests repetitions: not read")
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise ImportRefused(f"line {line}: sed pattern {regex!r} is not read ({exc})") from None
    refs = [int(n) for n in re.findall(r"\\(\d)", replacement)]
    if refs and max(refs) > compiled.groups:
        raise ImportRefused(f"line {line}: sed replacement names group {max(refs)}, not there")
    return regex, replacement


def _nests_repetition(regex: str) -> bool:
    """Whether a repeated group holds a repetition itself (``(a*)*``, ``((a|b)+)*``)."""
    inner: list[bool] = []  # per open group: a quantifier seen inside it
    i = 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a bracket expression holds no quantifiers
            close = regex.find("]", i + 2)
            i = len(regex) if close < 0 else close + 1
            continue
        if ch == "(":
            inner.append(False)
        elif ch == ")" and inner:
            had = inner.pop()
            repeated = i + 1 < len(regex) and regex[i + 1] in "*+{"
            if had and repeated:
                return True
            if inner and (had or repeated):
                inner[-1] = True
        elif ch in "*+{" and inner:
            inner[-1] = True
        i += 1
    return False


def _unescaped(text: str, char: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == char:
            return i
        i += 1
    return -1


def _regex(pattern: str, extended: bool) -> str:
    """A POSIX basic (or extended) regular expression as Python's: ``[[:space:]]`` classes and
    GNU's word edges ``\\<``, ``\\>`` included."""
    pattern = re.sub(r"\[:(\w+):\]", lambda m: _CLASSES.get(m.group(1), m.group(0)), pattern)
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if not extended and nxt in "(){}+?|":
                out.append(nxt)  # BRE: \( is a group
            elif nxt == "n":
                out.append("\\n")
            elif nxt == "t":
                out.append("\\t")
            elif nxt == "<":
                out.append("\\b(?=\\w)")
            elif nxt == ">":
                out.append("\\b(?<=\\w)")
            else:
                out.append(re.escape(nxt) if not nxt.isalnum() else "\\" + nxt)
            i += 2
            continue
        if not extended and ch in "(){}+?|":
            out.append("\\" + ch)  # BRE: a plain ( is itself
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _replacement(text: str) -> str:
    """sed's replacement (``&``, ``\\1``) as Python's (``\\g<0>``, ``\\1``)."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "t": "\t", "&": "&"}.get(nxt, "\\" + nxt if nxt.isdigit()
                                                             else nxt.replace("\\", "\\\\")))  # fmt: skip
            i += 2
            continue
        out.append("\\g<0>" if ch == "&" else ch.replace("\\", "\\\\"))
        i += 1
    return "".join(out)


def run_sed(commands: Sequence[SedCommand], text: str) -> tuple[str, list[SedCommand]]:
    """``text`` after the commands (run as ``sed -i -e ... -e ...``), and the commands that
    never matched a line (a sed that changes nothing there)."""
    lines = text.splitlines(keepends=True)
    used: set[int] = set()
    out: list[str] = []
    for number, raw in enumerate(lines, 1):
        body, end = (raw[:-1], "\n") if raw.endswith("\n") else (raw, "")
        pieces = _line(commands, body, number, number == len(lines), used)
        out.extend(p + end if i == len(pieces) - 1 else p + "\n" for i, p in enumerate(pieces))
    unused = [c for i, c in enumerate(commands) if i not in used]
    return "".join(out), unused


def _line(
    commands: Sequence[SedCommand], body: str, number: int, last: bool, used: set[int]
) -> list[str]:
    before: list[str] = []
    after: list[str] = []
    current: str | None = body
    for index, cmd in enumerate(commands):
        if current is None or not _selected(cmd, current, number, last):
            continue
        if cmd.verb == "s":
            flags = re.IGNORECASE if cmd.ignore_case else 0
            new, n = _sub(cmd, current, flags)
            if n:
                used.add(index)
                current = new
            continue
        used.add(index)
        if cmd.verb == "a":
            after.append(cmd.replacement)
        elif cmd.verb == "i":
            before.append(cmd.replacement)
        elif cmd.verb == "c":
            current = cmd.replacement
            break
        elif cmd.verb == "d":
            current = None
    middle = [] if current is None else [current]
    return before + middle + after


def _sub(cmd: SedCommand, text: str, flags: int) -> tuple[str, int]:
    regex = re.compile(cmd.pattern, flags)
    if cmd.count <= 1:
        return regex.subn(cmd.replacement, text, count=0 if cmd.count == 0 else 1)
    matches = list(regex.finditer(text))
    if len(matches) < cmd.count:
        return text, 0
    m = matches[cmd.count - 1]
    return text[: m.start()] + m.expand(cmd.replacement) + text[m.end() :], 1


def _selected(cmd: SedCommand, body: str, number: int, last: bool) -> bool:
    if cmd.address is None:
        return True
    if cmd.address == "$":
        return last
    if cmd.address.startswith("#"):
        return number == int(cmd.address[1:])
    return re.search(cmd.address, body) is not None
