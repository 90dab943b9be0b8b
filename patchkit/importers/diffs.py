"""Diffs as people carry them, made into diffs on the target's repository paths.

Accepts git diffs (``diff --git``, full or abbreviated ``index`` lines, mode lines) and plain
ones (``diff -u``, ``Index:`` lines, timestamps after the names, absolute or site-packages
paths). Each file's names are stripped (``-pN``), mapped onto the target's tree
(:mod:`patchkit.importers.paths`) and written back as ``a/PATH b/PATH`` with git headers, so
the engine's parser reads them. Text before the first file (a mail or DEP-3 header) and after
the last hunk (a signature) is returned apart, never parsed as diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from patchkit.errors import ImportRefused, shown
from patchkit.importers.paths import repo_path, strip_components

_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_KEEP = (
    *(b"index ", b"old mode", b"new mode", b"new file mode", b"deleted file mode"),
    *(b"similarity index", b"rename from", b"rename to", b"copy from", b"copy to"),
)


@dataclass
class _Section:
    git_line: bytes = b""  # "diff --git a/x b/y"
    headers: list[bytes] = field(default_factory=list)  # index / mode lines, as found
    old: bytes = b""  # the name after "--- "
    new: bytes = b""
    hunks: list[bytes] = field(default_factory=list)


@dataclass(frozen=True)
class MappedDiff:
    text: bytes  # the diff on repository paths
    preamble: str  # what came before the first file
    paths: tuple[str, ...]  # repository paths it changes
    abbreviated: bool  # index lines present but not full 40-digit ids
    has_index: bool  # any index line at all


def _name(raw: bytes) -> str:
    """A diff header name without a timestamp (``\\t2024-...``) or quotes."""
    text = raw.decode("utf-8", "surrogateescape").split("\t")[0].strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] == '"' else text


def _hunk_len(line: bytes) -> int:
    match = _HUNK.match(line)
    assert match
    old = int(match.group(1)) if match.group(1) is not None else 1
    new = int(match.group(2)) if match.group(2) is not None else 1
    return old + new


def _read_hunk(lines: list[bytes], i: int) -> tuple[bytes, int]:
    """The hunk starting at ``lines[i]`` and the index after it (counted by its header)."""
    need = _hunk_len(lines[i])
    out = [lines[i]]
    i += 1
    while i < len(lines) and need > 0:
        line = lines[i]
        kind = line[:1]
        if kind == b"\\":
            out.append(line)
        elif kind in (b" ", b"-", b"+") or line in (b"\n", b"\r\n"):
            need -= 2 if kind in (b" ", b"\n", b"\r") else 1
            out.append(line if kind != b"\n" else b" \n")
        else:
            break
        i += 1
    while i < len(lines) and lines[i].startswith(b"\\"):
        out.append(lines[i])
        i += 1
    return b"".join(out), i


def _sections(data: bytes) -> tuple[list[_Section], bytes]:
    lines = data.splitlines(keepends=True)
    sections: list[_Section] = []
    preamble: list[bytes] = []
    current: _Section | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(b"diff --git "):
            current = _Section(git_line=line.rstrip(b"\r\n"))
            sections.append(current)
        elif line.startswith(b"--- ") and i + 1 < len(lines) and lines[i + 1].startswith(b"+++ "):
            if current is None or current.old or current.hunks:
                current = _Section()
                sections.append(current)
            current.old, current.new = line[4:], lines[i + 1][4:]
            i += 1
        elif current is not None and _HUNK.match(line):
            hunk, i = _read_hunk(lines, i)
            current.hunks.append(hunk)
            continue
        elif current is not None and line.startswith(_KEEP) and not current.hunks:
            current.headers.append(line.rstrip(b"\r\n"))
        elif not sections:
            preamble.append(line)
        i += 1
    return sections, b"".join(preamble)


def _git_names(git_line: bytes) -> tuple[str, str]:
    rest = git_line[len(b"diff --git ") :].decode("utf-8", "surrogateescape")
    half = len(rest) // 2
    return rest[:half], rest[half + 1 :]


def _pick(section: _Section) -> tuple[str | None, str | None]:
    """The old and new names as written (None for /dev/null)."""
    if section.old or section.new:
        old, new = _name(section.old), _name(section.new)
    else:
        old, new = _git_names(section.git_line)
    old_name = None if old == "/dev/null" else old
    new_name = None if new == "/dev/null" else new
    if old_name and new_name and old_name != new_name:
        # diff -u x.py.orig x.py: both name the same file; patch takes the one without .orig
        for suffix in (".orig", ".old", ".bak", "~"):
            if old_name.endswith(suffix):
                old_name = new_name
            if new_name.endswith(suffix):
                new_name = old_name
    return old_name, new_name


def _map(name: str | None, target: str, strip: int, directory: str, source: str) -> str | None:
    if name is None:
        return None
    stripped = strip_components(name, strip)
    mapped = repo_path(stripped, target, directory=directory) if stripped else None
    if mapped is None or mapped.startswith(("/", "..")):
        raise ImportRefused(
            f"{source}: {shown(name)} is not a file of {target} (after -p{strip}"
            + (f" -d {directory}" if directory else "")
            + ")",
            hint="import only the files of the target's package; split other files out",
        )
    return mapped


def _write(section: _Section, old: str | None, new: str | None) -> bytes:
    a, b = old or new, new or old
    head = [f"diff --git a/{a} b/{b}".encode()]
    head += section.headers
    if section.hunks:
        head.append(f"--- a/{old}".encode() if old else b"--- /dev/null")
        head.append(f"+++ b/{new}".encode() if new else b"+++ /dev/null")
    return b"\n".join(head) + b"\n" + b"".join(section.hunks)


def map_diff(
    data: bytes, target: str, *, strip: int = 1, directory: str = "", source: str = "diff"
) -> MappedDiff:
    """The diff ``data`` on the target's repository paths (see the module docstring)."""
    sections, preamble = _sections(data)
    sections = [s for s in sections if s.hunks or s.headers]
    if not sections:
        raise ImportRefused(f"{source}: contains no file changes")
    out, paths = [], []
    for section in sections:
        # git's own a/ b/ prefixes always go with -p1, whatever the run.sh says for the tree
        old_raw, new_raw = _pick(section)
        old = _map(old_raw, target, strip, directory, source)
        new = _map(new_raw, target, strip, directory, source)
        out.append(_write(section, old, new))
        paths += [p for p in (old, new) if p and p not in paths]
    index = [h for s in sections for h in s.headers if h.startswith(b"index ")]
    abbreviated = any(len(h.split()[1].split(b"..")[0]) < 40 for h in index)
    return MappedDiff(
        b"".join(out),
        preamble.decode("utf-8", "replace"),
        tuple(paths),
        abbreviated,
        bool(index),
    )


def looks_like_diff(data: bytes) -> bool:
    return bool(re.search(rb"^(?:diff --git |--- .*\n\+\+\+ )", data, re.MULTILINE))


def is_git_diff(data: bytes) -> bool:
    return bool(re.search(rb"^diff --git ", data, re.MULTILINE))
