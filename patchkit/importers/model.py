"""What an importer reads out of a source: plain values, before any base is found.

A :class:`Candidate` is one patch as its source states it: a diff whose paths are already the
target's repository paths, or the edits a replace script makes (:class:`FileEdits`), with the
metadata the source carried and the source files themselves (kept beside the imported patch).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from patchkit.importers.sed import SedCommand
from patchkit.importers.selfcheck import CheckTest


class Form(str, enum.Enum):
    MOD = "container-mod"  # a directory with run.sh (patch -p1 -d /, git apply, python x.py)
    SCRIPT = "replace-script"  # Python: assert old in code; code = code.replace(old, new)
    GIT_DIFF = "git-diff"  # diff --git, with index lines (full or abbreviated)
    PLAIN_DIFF = "plain-diff"  # diff -u / patch files without git headers
    QUILT = "quilt-series"  # series + patches with DEP-3 headers
    MBOX = "git-mbox"  # git format-patch output: one mbox file or a directory of them
    RANGE = "git-range"  # a commit range A..B of a git checkout
    PR = "upstream-pr"  # pr:owner/name#N, an upstream pull request carried until a release has it


@dataclass(frozen=True)
class Replace:
    """``code.replace(old, new[, count])`` on one file, guarded (or not) by ``assert old in``."""

    old: str
    new: str
    count: int = -1  # as str.replace: -1 replaces every occurrence
    line: int = 0  # where the script says it


@dataclass(frozen=True)
class FileEdits:
    """What a mod does to one file, in order: a script's replacements, then ``sed -i``
    commands; or (an overlay copied over it) its whole new content."""

    path: str  # the target's repository path
    replaces: tuple[Replace, ...]
    sed: tuple[SedCommand, ...] = ()
    content: bytes | None = None  # the file's bytes after the mod (``cp overlay/x.py ...``)


@dataclass(frozen=True)
class Meta:
    title: str = ""
    why: str = ""
    author: str = ""
    date: str = ""
    issues: tuple[str, ...] = ()
    prs: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)  # DEP-3 / mail headers as found


@dataclass(frozen=True)
class Origin:
    """A source file as read, kept beside the imported patch (``origin/<name>``)."""

    name: str
    content: bytes

    @classmethod
    def of(cls, path: Path) -> Origin:
        return cls(path.name, path.read_bytes())


@dataclass(frozen=True)
class Candidate:
    """One patch read from a source, not yet placed."""

    name: str  # what to call it (becomes the patch id)
    form: Form
    source: Path  # the file or directory it came from
    meta: Meta
    diff: bytes | None = None  # a diff on repository paths (a/..., b/...), index lines kept
    edits: tuple[FileEdits, ...] = ()  # or the edits of a replace script
    origin: tuple[Origin, ...] = ()  # source files to keep beside the imported patch
    untranslated: tuple[str, ...] = ()  # steps of the source import did not turn into a patch
    refused: str = ""  # why this source cannot be imported (nothing else is set then)
    checks: tuple[CheckTest, ...] = ()  # the source's self-checks of this patch: its tests

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(e.path for e in self.edits)
