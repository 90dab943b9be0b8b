"""Unified diffs (git's extended format) parsed with unidiff into plain values.

Lines are kept as bytes with their own line endings, so CRLF files round-trip. Paths are
checked here: absolute paths and ``..`` components are refused before anything reads them.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import unidiff
import unidiff.errors
from unidiff.constants import LINE_TYPE_NO_NEWLINE

from patchkit.engine.diffcheck import check_modes, stray_lines
from patchkit.errors import ConfigError, MalformedPatch, UnsafePathError

_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d{6}))?$", re.MULTILINE)
_MODE = re.compile(r"^(old|new|new file|deleted file) mode (\d{6})$", re.MULTILINE)
_ENCODING = ("utf-8", "surrogateescape")


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
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p in (self.old_path, self.new_path) if p))


def safe_relpath(raw: str, source: Path) -> str:
    """A repository-relative POSIX path, or UnsafePathError naming the patch file."""
    path = PurePosixPath(raw)
    if path.is_absolute() or raw.startswith("~") or "\\" in raw:
        raise UnsafePathError(f"{source}: refuses absolute path {raw!r}; patches use tree paths")
    if any(part in ("..", "") for part in raw.split("/")) or raw in (".", ""):
        raise UnsafePathError(f"{source}: refuses path {raw!r}: it leaves the tree")
    if is_git_internal(raw):
        raise UnsafePathError(f"{source}: refuses path {raw!r}: patches never write inside .git")
    return str(path)


def is_git_internal(path: str) -> bool:
    """Inside a ``.git`` directory (hooks, config): never a patch's business."""
    return any(part.lower() == ".git" for part in path.split("/"))


def _strip_prefix(name: str) -> str | None:
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def _hunk(raw: unidiff.Hunk) -> Hunk:
    old: list[bytes] = []
    new: list[bytes] = []
    added: list[bytes] = []
    ops: list[tuple[str, bytes]] = []
    last_kind = None
    for line in raw:
        if line.line_type == LINE_TYPE_NO_NEWLINE:
            for seq in {"-": (old,), "+": (new, added), " ": (old, new)}.get(last_kind or "", ()):
                seq[-1] = seq[-1].rstrip(b"\n")
            if ops:
                ops[-1] = (ops[-1][0], ops[-1][1].rstrip(b"\n"))
            continue
        value = line.value.encode(*_ENCODING)
        ops.append((line.line_type, value))
        if line.line_type in (" ", "-"):
            old.append(value)
        if line.line_type in (" ", "+"):
            new.append(value)
        if line.line_type == "+":
            added.append(value)
        last_kind = line.line_type
    header = (
        f"@@ -{raw.source_start},{raw.source_length} +{raw.target_start},{raw.target_length} @@"
    )
    if raw.section_header:
        header += f" {raw.section_header}"
    return Hunk(header, raw.source_start, tuple(old), tuple(new), tuple(added), tuple(ops))


def _file_patch(raw: unidiff.PatchedFile, source: Path) -> FilePatch:
    info = str(raw.patch_info or "")
    index = _INDEX.search(info)
    modes = {kind: int(mode, 8) for kind, mode in _MODE.findall(info)}
    old_mode = modes.get("old") or modes.get("deleted file")
    new_mode = modes.get("new") or modes.get("new file")
    if index and index.group(3) and not (old_mode or new_mode):
        old_mode = new_mode = int(index.group(3), 8)
    old_path = None if raw.is_added_file else _strip_prefix(raw.source_file)
    new_path = None if raw.is_removed_file else _strip_prefix(raw.target_file)
    zero = re.compile(r"^0+$")
    old_blob = index.group(1) if index and not zero.match(index.group(1)) else None
    new_blob = index.group(2) if index and not zero.match(index.group(2)) else None
    fp = FilePatch(
        old_path=safe_relpath(old_path, source) if old_path else None,
        new_path=safe_relpath(new_path, source) if new_path else None,
        old_blob=old_blob,
        new_blob=new_blob,
        old_mode=old_mode,
        new_mode=new_mode,
        hunks=tuple(_hunk(h) for h in raw),
        binary=bool(raw.is_binary_file) or "GIT binary patch" in info,
    )
    check_modes(fp, source)
    return fp


def parse_diff(data: bytes, source: Path) -> tuple[FilePatch, ...]:
    """Parse a whole diff; ConfigError names the file when unidiff cannot read it."""
    text = data.decode(*_ENCODING)
    if "GIT binary patch" in text:
        raise ConfigError(
            f"{source}: carries a GIT binary patch, which patchkit does not apply",
            hint="ship the binary file beside the patch set and copy it in a build step instead",
        )
    try:
        parsed = unidiff.PatchSet(io.StringIO(text, newline=""))
    except unidiff.errors.UnidiffParseError as exc:
        raise ConfigError(f"{source}: not a valid unified diff: {exc}") from None
    if not parsed:
        raise ConfigError(f"{source}: contains no file changes")
    stray = stray_lines(text)
    if stray:
        number, line, path = stray[0]
        raise MalformedPatch(
            f"{source}: line {number} ({line[:60]!r}) in the part for {path} is no part of any "
            "hunk: a hunk header is mangled or a hunk was cut, so some of its changes were lost",
            hint="regenerate the diff (git diff --full-index) rather than editing it by hand",
        )
    return tuple(_file_patch(f, source) for f in parsed)


def split_lines(content: bytes) -> list[bytes]:
    """Lines with their endings (only ``\\n`` ends a line, so ``\\r\\n`` stays whole)."""
    lines = content.split(b"\n")
    result = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result
