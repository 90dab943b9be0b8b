"""The target's own formatters on an exported change: ``ruff`` for Python, ``clang-format`` for
C++/CUDA, each at the version upstream's ``.pre-commit-config.yaml`` at the base pins
(:mod:`patchkit.export.tools`), configured as the base configures it, and each only on the
lines the patch changed. Notes say what they did, or why they did not run (the base pins no
such tool). A pinned formatter that cannot be installed, or fails on a file, stops the export
(:class:`FormatterUnavailable`, exit 10): the output never depends on what this machine has."""

from __future__ import annotations

import difflib
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchkit.engine.diff.make import FileDelta
from patchkit.errors import FormatterUnavailable, SourceError
from patchkit.export.tools import Tool, pinned_tool, pinned_versions

PY_SUFFIXES = (".py", ".pyi")
CPP_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh")

Lines = list[tuple[int, int]]  # 1-based, inclusive line ranges
ReadBase = Callable[[str], bytes | None]  # a repository path's bytes at the base, or None
PRE_COMMIT = ".pre-commit-config.yaml"
RUFF_CONFIGS = ("pyproject.toml", "ruff.toml", ".ruff.toml")


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


def _tool(argv: list[str], content: bytes, cwd: Path | None = None) -> bytes:
    proc = subprocess.run(argv, input=content, capture_output=True, check=False, cwd=cwd)
    if proc.returncode != 0:
        first = (proc.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[0]
        raise SourceError(f"`{' '.join(argv[:2])}` failed: {first}")
    return proc.stdout


def _ruff(tool: Tool, read_base: ReadBase, tmp: Path) -> _Formatter:
    """``ruff`` configured as the base configures it: its ``pyproject.toml`` / ``ruff.toml``
    copied from the base commit (never the checkout's own files) beside empty stand-ins for
    the base's Python files (so import sorting knows the first-party modules), the exported
    file named as if it lay there, run from that directory."""
    for name in RUFF_CONFIGS:
        content = read_base(name)
        if content is not None:
            (tmp / name).write_bytes(content)
    configs = [tmp / n for n in RUFF_CONFIGS if (tmp / n).is_file()]
    cfg = ["--config", str(configs[0])] if configs else ["--isolated"]

    def args(path: str) -> list[str]:
        return ["--no-cache", "--force-exclude", "--quiet", *cfg, "--stdin-filename",
                str(tmp / path), "-"]  # fmt: skip

    def fix(content: bytes, path: str) -> bytes:
        return _tool([str(tool.path), "check", "--fix", "--exit-zero", *args(path)], content, tmp)

    def format_lines(content: bytes, path: str, lines: Lines) -> bytes:
        for start, end in reversed(lines):  # bottom up: the ranges above stay where they are
            argv = [str(tool.path), "format", f"--range={start}-{end + 1}", *args(path)]
            content = _tool(argv, content, tmp)
        return content

    return _Formatter(f"ruff {tool.version}", PY_SUFFIXES, format_lines, fix)


def _clang_format(tool: Tool, read_base: ReadBase, tmp: Path) -> _Formatter | None:
    style = read_base(".clang-format")
    if style is None:
        return None
    (tmp / ".clang-format").write_bytes(style)

    def format_lines(content: bytes, path: str, lines: Lines) -> bytes:
        argv = [str(tool.path), f"--style=file:{tmp}/.clang-format",
                f"--assume-filename={path}", *(f"--lines={s}:{e}" for s, e in lines)]  # fmt: skip
        return _tool(argv, content)

    return _Formatter(f"clang-format {tool.version}", CPP_SUFFIXES, format_lines)


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
            raise FormatterUnavailable(
                f"{f.name} failed on {d.path}: {exc.message}",
                hint="fix the patch so upstream's formatter accepts the file; nothing was exported",
            ) from None
        out.append(d)
        notes.append(note)
    return out, notes


def _stand_ins(root: Path, paths: Sequence[str]) -> None:
    """Empty Python files where the base has them: ruff's import sorting tells first-party
    modules by what exists under the project root (down to the module imported)."""
    for path in paths:
        if path.endswith(PY_SUFFIXES):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).touch()


def format_deltas(
    deltas: list[FileDelta], *, read_base: ReadBase, base_paths: Sequence[str] = ()
) -> tuple[list[FileDelta], tuple[str, ...]]:
    """Upstream's formatters, at the versions its ``.pre-commit-config.yaml`` at the base pins
    and configured as the base configures them, on the exported files' changed lines. A tool
    the base does not pin is not run (upstream does not run it either); one it pins that cannot
    be installed raises :class:`FormatterUnavailable`. Notes say what each did."""
    pins = pinned_versions(read_base(PRE_COMMIT))
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="patchkit-format-") as tmp:
        for name, suffixes, make in _MAKERS:
            if not any(d.after is not None and d.path.endswith(suffixes) for d in deltas):
                continue
            if name not in pins:
                notes.append(f"{name}: not run (upstream's {PRE_COMMIT} at the base pins none)")
                continue
            root = Path(tmp) / name
            root.mkdir()
            _stand_ins(root, base_paths)
            formatter = make(pinned_tool(name, pins[name]), read_base, root)
            if formatter is None:
                notes.append(f"{name}: not run (no .clang-format in the tree at the base)")
                continue
            deltas, done = _format_all(formatter, deltas)
            notes += done
    return deltas, tuple(notes)


_MAKERS: tuple[tuple[str, tuple[str, ...], Callable[..., _Formatter | None]], ...] = (
    ("ruff", PY_SUFFIXES, _ruff),
    ("clang-format", CPP_SUFFIXES, _clang_format),
)
