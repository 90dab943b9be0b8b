"""Unified diffs (git's extended format) parsed into plain values, in one linear pass.

Here: the values (:class:`FilePatch`, :class:`Hunk`) and the reading of each file's headers.
Lines are kept as bytes with their own line endings, so CRLF files round-trip. Every path passes
:func:`patchkit.engine.diff.paths.safe_relpath` before anything reads it, and modes git never
writes are refused (``check``: a symbolic link's target passes the policy of
:mod:`patchkit.workspace.links`); a hunk's lines are read by :mod:`patchkit.engine.diff.hunks`. A
parsed diff is remembered by its content, so the several readers of one patch in a run parse it
once.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from patchkit.engine.diff.check import check_link, check_modes
from patchkit.engine.diff.extended import FilePart, name_of, read_extended
from patchkit.engine.diff.hunks import read_body, scan
from patchkit.engine.diff.paths import ENCODING, safe_relpath
from patchkit.errors import MalformedPatch, UnsupportedChange, shown
from patchkit.workspace.links import LINK

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*?)\r?\n?$", re.DOTALL)
_CACHE: OrderedDict[tuple[str, str], tuple[FilePatch, ...]] = OrderedDict()
_CACHE_SIZE = 2048  # a series parses each of its diffs once, however many it holds


@dataclass(frozen=True)
class Hunk:
    header: str  # "@@ -10,7 +10,8 @@ def f():"
    old_start: int  # 1-based line of the first old line (0 for an empty old side)
    old: tuple[bytes, ...]  # context and removed lines, in order
    new: tuple[bytes, ...]  # context and added lines, in order
    added: tuple[bytes, ...]  # the added lines alone
    ops: tuple[tuple[str, bytes], ...] = ()  # every line in order: (" " | "-" | "+", text)

    @property
    def lead(self) -> int:
        """How many context lines come before its first change."""
        return next((i for i, (kind, _) in enumerate(self.ops) if kind != " "), len(self.ops))

    @property
    def trail(self) -> int:
        """How many context lines come after its last change."""
        kinds = [kind for kind, _ in self.ops]
        return next((i for i, kind in enumerate(reversed(kinds)) if kind != " "), len(kinds))


@dataclass(frozen=True)
class FilePatch:
    old_path: str | None  # None for a new file
    new_path: str | None  # None for a deleted file
    old_blob: str | None  # full blob id the diff was made against, if the diff carries one
    new_blob: str | None
    old_mode: int | None
    new_mode: int | None
    hunks: tuple[Hunk, ...]
    binary: bool = False

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def link(self) -> bool:
        """A symbolic link's part (mode 120000 on either side): applied whole (``links``)."""
        return LINK in (self.old_mode, self.new_mode)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p in (self.old_path, self.new_path) if p))


def split_lines(content: bytes) -> list[bytes]:
    """Lines with their endings (only ``\\n`` ends a line, so ``\\r\\n`` stays whole): a binary
    stream's readlines splits so, in C (four times faster than splitting and re-adding)."""
    return io.BytesIO(content).readlines()


def parse_diff(data: bytes, source: Path) -> tuple[FilePatch, ...]:
    """Parse a whole diff; MalformedPatch (exit 6, like any patch that cannot apply) names the
    file (and line) when it is not a valid one."""
    key = (str(source), hashlib.sha256(data).hexdigest())
    found = _CACHE.get(key)
    if found is None:
        found = _Parser(data, source).run()
        _CACHE[key] = found
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    return found


def _text(raw: bytes) -> str:
    return raw.decode(*ENCODING)


@dataclass
class _File(FilePart):
    """One file's part of the diff while it is being read: its header and its hunks."""

    hunks: list[Hunk] = field(default_factory=list)


class _Parser:
    def __init__(self, data: bytes, source: Path) -> None:
        self.source = source
        self.data = data
        self.lines = split_lines(data)
        self.i = 0
        self.files: list[FilePatch] = []
        self.in_file: str | None = None  # the path of the part being read, after its +++

    def fail(self, what: str, line: int | None = None) -> MalformedPatch:
        at = line if line is not None else self.i + 1
        return MalformedPatch(
            f"{self.source}: not a valid unified diff: {what} (line {at})",
            hint="regenerate the diff (`git diff --full-index`, or `patchkit record`)",
        )

    def run(self) -> tuple[FilePatch, ...]:
        if b"GIT binary patch" in self.data:
            raise UnsupportedChange(
                f"{self.source}: carries a GIT binary patch, which patchkit does not apply",
                hint="ship the binary file beside the patch set and copy it in a build step "
                "instead",
            )
        lines = self.lines
        while self.i < len(lines):
            line = lines[self.i]
            if line.startswith(b"diff --git "):
                self._git_file()
            elif line.startswith(b"diff ") and self._plain_header_file():
                pass
            elif (
                line.startswith(b"--- ")
                and lines[self.i + 1 : self.i + 2]
                and lines[self.i + 1].startswith(b"+++ ")
            ):
                current = _File(self.i + 1)
                self._names(current)
                self._hunks(current)
                self._finish(current)
            elif line.startswith(b"@@ "):
                raise self.fail("a hunk outside any file")
            else:
                self._between_files(line)
                self.i += 1  # text around the diff: a commit message, a signature
        if not self.files:
            raise MalformedPatch(
                f"{self.source}: contains no file changes",
                hint="check that the file is the diff you meant (an empty or cut file?)",
            )
        return tuple(self.files)

    def _between_files(self, line: bytes) -> None:
        """A line outside every hunk: fine around the diff, but inside a file's part (after
        its ``+++`` line) it is a line some hunk lost (a mangled header, a cut hunk)."""
        text = line.rstrip(b"\r\n")
        if self.in_file is None or not text.strip():
            return
        if text.startswith((b"From ", b"-- ")) or text == b"--":
            self.in_file = None
            return
        raise MalformedPatch(
            f"{self.source}: line {self.i + 1} ({shown(_text(text)[:60])}) in the part for "
            f"{self.in_file} is no part of any hunk: a hunk header is mangled or a hunk was cut, "
            "so some of its changes were lost",
            hint="regenerate the diff (git diff --full-index) rather than editing it by hand",
        )

    # -- one file ------------------------------------------------------------------------
    def _git_file(self) -> None:
        self.in_file = None
        current = _File(self.i + 1, git=True)
        header = self.lines[self.i].rstrip(b"\r\n")[len(b"diff --git ") :]
        current.header_old, current.header_new = self._header_paths(header)
        self.i += 1
        while self.i < len(self.lines) and read_extended(
            current, self.lines[self.i], self.source, self.i + 1
        ):
            self.i += 1
        if self.i < len(self.lines) and self.lines[self.i].startswith(b"--- "):
            if not self.lines[self.i + 1 : self.i + 2] or not self.lines[self.i + 1].startswith(
                b"+++ "
            ):
                raise self.fail("a `---` line without its `+++` line")
            self._names(current)
        self._hunks(current)
        self._finish(current)

    def _plain_header_file(self) -> bool:
        """``diff -ru a b`` and its extended lines (an ``index`` line, modes), then ``---``
        and ``+++``; False (nothing read) when no ``---`` line follows."""
        current, start = _File(self.i + 1), self.i
        self.in_file = None
        self.i += 1
        while self.i < len(self.lines) and read_extended(
            current, self.lines[self.i], self.source, self.i + 1
        ):
            self.i += 1
        rest = self.lines[self.i : self.i + 2]
        if len(rest) < 2 or not (rest[0].startswith(b"--- ") and rest[1].startswith(b"+++ ")):
            self.i = start + 1
            return False
        self._names(current)
        self._hunks(current)
        self._finish(current)
        return True

    def _header_paths(self, header: bytes) -> tuple[str | None, str | None]:
        if header.startswith(b'"'):
            end = header.find(b'" ', 1)
            if end < 0:
                return None, None
            return name_of(header[: end + 1]), name_of(header[end + 2 :])
        half = (len(header) - 1) // 2  # "a/P b/P": the usual case, one path twice
        if header[half : half + 1] == b" " and header[:half][2:] == header[half + 1 :][2:]:
            return name_of(header[:half]), name_of(header[half + 1 :])
        parts = header.split(b" b/", 1)
        if len(parts) == 2:
            return name_of(parts[0]), name_of(b"b/" + parts[1])
        return None, None

    def _names(self, current: _File) -> None:
        """The ``---`` and ``+++`` lines (the caller saw both)."""
        old = self.lines[self.i][4:].rstrip(b"\r\n").split(b"\t", 1)[0]
        new = self.lines[self.i + 1][4:].rstrip(b"\r\n").split(b"\t", 1)[0]
        current.old, current.new = name_of(old), name_of(new)
        self.in_file = current.new or current.old
        self.i += 2

    # -- hunks ---------------------------------------------------------------------------
    def _hunks(self, current: _File) -> None:
        while self.i < len(self.lines) and self.lines[self.i].startswith(b"@@ "):
            current.hunks.append(self._hunk())

    def _hunk(self) -> Hunk:
        header_line = self.lines[self.i]
        found = _HUNK.match(header_line)
        if not found:
            raise self.fail(f"a malformed hunk header {shown(_text(header_line.rstrip()))}")
        start, old_len, new_start, new_len, section = found.groups()
        if max(len(n or b"") for n in (start, old_len, new_start, new_len)) > 18:  # > 10**18 lines
            shown_header = _text(header_line.rstrip())[:60]
            raise self.fail(f"a hunk header with a number no file has {shown(shown_header)}")
        old_count = int(old_len) if old_len is not None else 1
        new_count = int(new_len) if new_len is not None else 1
        header = f"@@ -{int(start)},{old_count} +{int(new_start)},{new_count} @@"
        if section:
            header += f" {_text(section)}"
        first = self.i + 1
        self.i += 1
        end, old_n, new_n, marked = scan(self.lines, self.i, old_count, new_count)
        if old_n != old_count or new_n != new_count:
            raise self.fail(
                f"hunk {header} has {old_n} old and {new_n} new lines, but its header "
                f"says {old_count} and {new_count}",
                first,
            )
        old, new, added, ops = read_body(self.lines[self.i : end], marked)
        self.i = end
        return Hunk(header, int(start), old, new, added, ops)

    def _refuse_empty(self, current: _File) -> None:
        """A part that changes nothing, or renames from its ``diff --git`` line alone, is a
        diff cut short: refused, never read as a change."""
        moved = current.header_old != current.header_new and current.old is None
        changes = (
            current.hunks
            or current.added
            or current.deleted
            or current.binary
            or (current.old_mode and current.new_mode and current.old_mode != current.new_mode)
            or (current.old is not None and current.old != current.new)
        )
        name = current.header_new or current.new or current.old or "a file"
        if moved and not (current.added or current.deleted):
            why = "names two paths on its `diff --git` line but has no `rename from/to` lines"
        elif not changes:
            why = "changes nothing (no hunk, mode, rename, new or deleted file)"
        else:
            return
        raise MalformedPatch(
            f"{self.source}: the part for {name} (line {current.line}) {why}: the diff was cut "
            "or edited by hand",
            hint="regenerate the diff (git diff --full-index) rather than editing it by hand",
        )

    # -- the finished file -----------------------------------------------------------------
    def _finish(self, current: _File) -> None:
        self._refuse_empty(current)
        old = current.old if current.old is not None else current.header_old
        new = current.new if current.new is not None else current.header_new
        if current.added:
            old = ""
        if current.deleted:
            new = ""
        # a plain diff's new or deleted file: one hunk from or to nothing (git says so in its
        # header instead: an empty file it changes has such a hunk too)
        only = current.hunks[0] if len(current.hunks) == 1 and not current.git else None
        if only is not None and only.old_start == 0 and not only.old and not current.deleted:
            old = ""
        if only is not None and not only.new and only.header.split()[2] == "+0,0":
            new = ""
        if old is None and new is None:
            raise self.fail("a file whose paths cannot be read", current.line)
        old, new = (old if old is not None else new), (new if new is not None else old)
        if current.index_mode and not (current.old_mode or current.new_mode):
            current.old_mode = current.new_mode = current.index_mode
        fp = FilePatch(
            old_path=safe_relpath(old, self.source) if old else None,
            new_path=safe_relpath(new, self.source) if new else None,
            old_blob=current.old_blob,
            new_blob=current.new_blob,
            old_mode=current.old_mode,
            new_mode=current.new_mode,
            hunks=tuple(current.hunks),
            binary=current.binary,
        )
        check_modes(fp.path, (fp.old_mode, fp.new_mode), self.source)
        sides = [(h.old, h.new) for h in fp.hunks]
        check_link(fp.path, fp.new_path, (fp.old_mode, fp.new_mode), sides, self.source)
        self.files.append(fp)
