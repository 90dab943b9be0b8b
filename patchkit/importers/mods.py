"""Container mods: a directory whose ``run.sh`` patches an installed package.

The script is read, never run. Recognised steps: ``patch`` (``-pN``, ``-d DIR``, ``-i FILE`` or
``< FILE``, ``cat FILE | patch``), ``git apply`` (``-pN``, ``--directory``), ``cd DIR``, simple
``NAME=value`` variables, ``for x in GLOB; do ...; done`` over the mod's files, and ``python
script.py`` (a replace script, read by :mod:`patchkit.importers.scripts`). A file the script
names is looked up by its name in the mod directory (the path it has inside the image is not
known here). Every other step is listed as not translated, for a person to look at.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.errors import ImportRefused
from patchkit.importers.diffs import map_diff
from patchkit.importers.meta import comment_meta, parse_dep3
from patchkit.importers.model import Candidate, Form, Meta, Origin
from patchkit.importers.scripts import SITE, read_script, script_comments

_QUIET = {"set", "echo", "exit", "true", ":", "printf", "trap"}
_VAR = re.compile(r"\$\{?(\w+)\}?")
_LOOP = re.compile(r"^for (\w+) in (.+?);\s*do\s+(.+?);?\s*done$")


@dataclass
class _Shell:
    root: Path  # the mod directory
    target: str
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    comments: list[str] = field(default_factory=list)  # the comment block above the step
    header: list[str] = field(default_factory=list)  # comments at the top of run.sh
    found: list[Candidate] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)


def read_mod(root: Path, target: str) -> list[Candidate]:
    """One candidate per patch or script the mod's ``run.sh`` applies; the steps it does not
    translate ride on each candidate (and on a refusal, when it applies nothing)."""
    run_sh = root / "run.sh"
    shell = _Shell(root, target)
    for number, line in _lines(run_sh.read_text(errors="replace")):
        _line(shell, number, line)
    if not shell.found:
        steps = "; ".join(shell.untranslated) or "nothing"
        raise ImportRefused(
            f"{run_sh}: applies no patch or replace script that import can read ({steps})",
            hint="import the diff or script itself, or record the change by hand",
        )
    extra = tuple(shell.untranslated)
    several = len(shell.found) > 1
    return [
        replace(
            c,
            name=f"{root.name}-{c.source.stem}" if several else root.name,
            untranslated=extra,
            origin=(Origin.of(run_sh), *c.origin),
        )
        for c in shell.found
    ]


def _lines(text: str) -> list[tuple[int, str]]:
    """Logical lines (continuations joined) with their first line number."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        out.append((start, pending + raw))
        pending = ""
    return out


def _line(shell: _Shell, number: int, line: str) -> None:
    stripped = line.strip()
    if stripped.startswith("#"):
        comment = stripped.lstrip("#").strip()
        if not comment.startswith("!"):
            (shell.comments if shell.found or shell.untranslated else shell.header).append(comment)
        return
    if not stripped:
        if shell.found or shell.untranslated:
            shell.comments.clear()
        return
    loop = _LOOP.match(stripped)
    body = loop.group(3) if loop else stripped
    items = _loop_items(shell, loop.group(2)) if loop else [""]
    for item in items:
        if loop:
            shell.env[loop.group(1)] = item
        for words in _commands(shell, number, body):
            _command(shell, number, words, stripped)
    shell.comments.clear()


def _loop_items(shell: _Shell, pattern: str) -> list[str]:
    """``for p in /mods/x/*.patch``: the mod's files whose names match."""
    names = sorted(p.name for p in shell.root.iterdir() if p.is_file())
    words = [posixpath.basename(w) for w in shlex.split(_expand(shell, pattern))]
    return [n for n in names if any(fnmatch.fnmatch(n, w) for w in words)]


def _commands(shell: _Shell, number: int, text: str) -> list[list[str]]:
    """The simple commands of a line, split at ``;``, ``&&``, ``||`` (quotes respected)."""
    try:
        lexer = shlex.shlex(_expand(shell, text), posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError as exc:
        shell.untranslated.append(f"line {number}: cannot be read ({exc}): {text}")
        return []
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in (";", "&&", "||", "&"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def _substitutions(text: str) -> list[tuple[int, int]]:
    """Spans of the outermost ``$(...)`` in ``text`` (parentheses balanced)."""
    spans, start, depth = [], -1, 0
    for i, char in enumerate(text):
        if text.startswith("$(", i) and depth == 0:
            start = i
        if char == "(" and start >= 0:
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
                start = -1
    return spans


def _expand(shell: _Shell, text: str) -> str:
    """``$(...)`` asking for site-packages becomes it, ``$(dirname ...)`` the mod directory;
    ``$NAME`` and ``${NAME}`` the values assigned above. Anything else is left as written."""
    for start, end in reversed(_substitutions(text)):
        inner = text[start + 2 : end - 1]
        if re.search(r"site-?packages|purelib|platlib", inner):
            text = text[:start] + SITE + text[end:]
        elif inner.startswith("dirname"):
            text = text[:start] + str(shell.root) + text[end:]
    return _VAR.sub(lambda m: shell.env.get(m.group(1), m.group(0)), text)


def _command(shell: _Shell, number: int, words: list[str], line: str) -> None:
    words = [w for w in words if w != "sudo"]
    if words[0] == "export":
        words = words[1:]
    if not words:
        return
    if re.fullmatch(r"\w+=.*", words[0]) and len(words) == 1:
        key, value = words[0].split("=", 1)
        shell.env[key] = value
        return
    head = words[0]
    if head == "cd" and len(words) == 2:
        shell.cwd = posixpath.join(shell.cwd, words[1])
    elif "patch" in words and (head in ("patch", "cat") or "|" in words):
        _patch(shell, number, words)
    elif head == "git" and words[1:2] == ["apply"]:
        _git_apply(shell, number, words[2:])
    elif re.fullmatch(r"python[\d.]*", head) and len(words) == 2 and words[1].endswith(".py"):
        _script(shell, number, words[1])
    elif head not in _QUIET:
        shell.untranslated.append(f"line {number}: {line}")


def _file(shell: _Shell, name: str, number: int) -> Path | None:
    found = shell.root / posixpath.basename(name)
    if not found.is_file():
        shell.untranslated.append(f"line {number}: names {name}, which is not in {shell.root}")
        return None
    return found


def _patch(shell: _Shell, number: int, words: list[str]) -> None:
    strip, directory, infile = 0, shell.cwd, ""
    if words[0] == "cat" and len(words) > 1:
        infile = words[1]
    args = words[words.index("patch") + 1 :]
    i = 0
    while i < len(args):
        word = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if word in ("-p", "-d", "-i", "<", "--input", "--directory", "--strip"):
            i += 1
        if word.startswith(("-p", "--strip")):
            strip = int((word.split("=", 1)[1] if "=" in word else word[2:]) or value)
        elif word.startswith(("-d", "--directory")):
            given = (word.split("=", 1)[1] if "=" in word else word[2:]) or value
            directory = posixpath.join(shell.cwd, given)
        elif word.startswith(("-i", "--input", "<")):
            infile = _inline(word) or value
        i += 1
    _diff(shell, number, infile, strip, directory)


def _inline(word: str) -> str:
    """The file glued to ``<file``, ``-ifile`` or ``--input=file``; "" when it follows."""
    if word.startswith("--input"):
        return word.split("=", 1)[1] if "=" in word else ""
    return word[1:] if word.startswith("<") else word[2:]


def _git_apply(shell: _Shell, number: int, args: list[str]) -> None:
    strip, directory, files = 1, shell.cwd, []
    for word in args:
        if word.startswith("-p"):
            strip = int(word[2:])
        elif word.startswith("--directory="):
            directory = posixpath.join(shell.cwd, word.split("=", 1)[1])
        elif not word.startswith("-"):
            files.append(word)
    for name in files:
        _diff(shell, number, name, strip, directory)


def _diff(shell: _Shell, number: int, name: str, strip: int, directory: str) -> None:
    path = _file(shell, name, number) if name else None
    if path is None:
        if not name:
            shell.untranslated.append(f"line {number}: a patch read from no file import can see")
        return
    data = path.read_bytes()
    try:
        mapped = map_diff(data, shell.target, strip=strip, directory=directory, source=str(path))
    except ImportRefused as exc:
        shell.untranslated.append(f"line {number}: {exc.message}")
        return
    meta = _meta(shell, mapped.preamble, path.stem)
    shell.found.append(
        Candidate(path.stem, Form.MOD, path, meta, diff=mapped.text, origin=(Origin.of(path),))
    )


def _script(shell: _Shell, number: int, name: str) -> None:
    path = _file(shell, name, number)
    if path is None:
        return
    source = path.read_bytes()
    try:
        edits = read_script(source, path, shell.target)
    except ImportRefused as exc:
        shell.untranslated.append(f"line {number}: {exc.message}")
        return
    meta = _meta(shell, "\n".join(script_comments(source)), path.stem)
    shell.found.append(
        Candidate(path.stem, Form.MOD, path, meta, edits=edits, origin=(Origin.of(path),))
    )


def _meta(shell: _Shell, preamble: str, stem: str) -> Meta:
    from_patch = parse_dep3(preamble) if preamble.strip() else Meta()
    own = comment_meta([*shell.comments, *shell.header], fallback_title=stem)
    if from_patch.title:
        return replace(from_patch, issues=from_patch.issues + own.issues, prs=own.prs)
    return own
