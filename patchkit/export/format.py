"""The target's own formatters on an exported change: ``ruff`` for Python, ``clang-format`` for
C++/CUDA, each configured as the tree at the base configures it, and each only on the lines the
patch changed. Notes say what they did, or why they did not run; a formatter that fails leaves
the file as the patch has it."""

from __future__ import annotations

import difflib
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from patchkit.engine.difftext import FileDelta
from patchkit.errors import SourceError

PY_SUFFIXES = (".py", ".pyi")
CPP_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh")

Lines = list[tuple[int, int]]  # 1-based, inclusive line ranges
ReadBase = Callable[[str], bytes | None]  # a repository path's bytes at the base, or None


@dataclass(frozen=True)
class _Formatter:
    name: str
    suffixes: tuple[str, ...]
    format_lines: Callable[[bytes, str, Lines], bytes]  # touches only the lines given
    fix: Callable[[bytes, str], bytes] | None = None  # whole-file fixes (``ruff check --fix``)


def changed_lines(before: bytes | None, after: bytes) -> Lines:
    """The line ranges of ``after`` that are not in ``before``."""
    new = after.splitlines()
    if before is None:
        return [(1, max(len(new), 1))]
    matcher = difflib.SequenceMatcher(None, before.splitlines(), new, autojunk=False)
    return [
        (j1 + 1, j2) for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert")
    ]


def _tool(argv: list[str], content: bytes) -> bytes:
    proc = subprocess.run(argv, input=content, capture_output=True, check=False)
    if proc.returncode != 0:
        first = (proc.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[0]
        raise SourceError(f"`{' '.join(argv[:2])}` failed: {first}")
    return proc.stdout


def _ruff(tree_root: Path) -> tuple[_Formatter | None, str]:
    if not shutil.which("ruff"):
        return None, "not available (not installed)"
    config = tree_root / "pyproject.toml"
    cfg = ["--config", str(config)] if config.is_file() else ["--isolated"]

    def args(path: str) -> list[str]:
        return ["--no-cache", "--force-exclude", "--quiet", *cfg, "--stdin-filename",
                str(tree_root / path), "-"]  # fmt: skip

    def fix(content: bytes, path: str) -> bytes:
        return _tool(["ruff", "check", "--fix", "--exit-zero", *args(path)], content)

    def format_lines(content: bytes, path: str, lines: Lines) -> bytes:
        for start, end in reversed(lines):  # bottom up: the ranges above stay where they are
            content = _tool(["ruff", "format", f"--range={start}-{end + 1}", *args(path)], content)
        return content

    return _Formatter("ruff", PY_SUFFIXES, format_lines, fix), ""


def _clang_format(read_base: ReadBase) -> tuple[_Formatter | None, str]:
    style = read_base(".clang-format")
    if not shutil.which("clang-format"):
        return None, "not available (not installed)"
    if style is None:
        return None, "not run (no .clang-format in the tree at the base)"

    def format_lines(content: bytes, path: str, lines: Lines) -> bytes:
        with tempfile.TemporaryDirectory(prefix="patchkit-clang-") as tmp:
            (Path(tmp) / ".clang-format").write_bytes(style)
            argv = ["clang-format", f"--style=file:{tmp}/.clang-format",
                    f"--assume-filename={path}", *(f"--lines={s}:{e}" for s, e in lines)]  # fmt: skip
            return _tool(argv, content)

    return _Formatter("clang-format", CPP_SUFFIXES, format_lines), ""


def _format_file(f: _Formatter, d: FileDelta) -> tuple[FileDelta, str]:
    """Whole-file fixes only where upstream's own file is already clean by them (the installed
    tool may not be the version upstream pins); formatting only on the lines the patch changed."""
    assert d.after is not None
    after, skipped = d.after, ""
    if f.fix and (d.before is None or f.fix(d.before, d.path) == d.before):
        after = f.fix(after, d.path)
    elif f.fix:
        skipped = "; its fixes were not applied, as they would change upstream's lines too"
    lines = changed_lines(d.before, after)
    after = f.format_lines(after, d.path, lines) if lines else after
    verb = "reformatted" if after != d.after else "no changes to"
    return replace(d, after=after), f"{f.name}: {verb} {d.path} (the patch's lines){skipped}"


def _format_all(f: _Formatter, deltas: list[FileDelta]) -> tuple[list[FileDelta], list[str]]:
    out, notes = [], []
    for d in deltas:
        if d.after is None or not d.path.endswith(f.suffixes):
            out.append(d)
            continue
        try:
            d, note = _format_file(f, d)
        except SourceError as exc:
            note = f"{f.name}: {exc.message}; {d.path} left as the patch has it"
        out.append(d)
        notes.append(note)
    return out, notes


def format_deltas(
    deltas: list[FileDelta], *, tree_root: Path, read_base: ReadBase
) -> tuple[list[FileDelta], tuple[str, ...]]:
    """The target's formatters, configured at the base, on the exported files; notes say what
    they did or why they did not run."""

    def ruff() -> tuple[_Formatter | None, str]:
        return _ruff(tree_root)

    def clang_format() -> tuple[_Formatter | None, str]:
        return _clang_format(read_base)

    makers = (
        ("ruff", PY_SUFFIXES, "Python", ruff),
        ("clang-format", CPP_SUFFIXES, "C++/CUDA", clang_format),
    )
    notes: list[str] = []
    for name, suffixes, kind, make in makers:
        if not any(d.after is not None and d.path.endswith(suffixes) for d in deltas):
            continue
        formatter, why_not = make()
        if formatter is None:
            notes.append(f"{name}: {why_not}; {kind} files left as the patch has them")
            continue
        deltas, done = _format_all(formatter, deltas)
        notes += done
    return deltas, tuple(notes)
