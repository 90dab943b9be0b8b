"""What a SOURCE is, told from its content (never from its name alone), and the candidates read
from it. A source import cannot read becomes one refused candidate naming why, so the other
sources of the same import still go ahead."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from patchkit.errors import ImportRefused, PatchkitError
from patchkit.importers.diffs import is_git_diff, looks_like_diff, map_diff
from patchkit.importers.dockerfile import is_dockerfile
from patchkit.importers.meta import comment_meta, parse_dep3, parse_mail
from patchkit.importers.model import Candidate, Form, Meta, Origin
from patchkit.importers.mods import read_mod
from patchkit.importers.prs import is_pr_spec, named_pr, read_pr
from patchkit.importers.scripts import read_script, script_comments
from patchkit.importers.series import (
    is_mail,
    is_range,
    read_mbox,
    read_quilt,
    read_range,
    series_file,
)


def read_source(spec: str, target: str) -> list[Candidate]:
    """Every patch in ``spec`` (a file, a directory, or ``DIR@A..B``)."""
    path = Path(spec)
    try:
        if is_pr_spec(spec):
            return read_pr(spec, target)
        if is_range(spec):
            return read_range(spec, target)
        if path.is_dir():
            return _directory(path, target)
        if path.is_file():
            return _file(path, target)
        raise ImportRefused(f"{spec}: no such file or directory, and not a commit range A..B")
    except PatchkitError as exc:
        return [_refused(spec, path, exc.message)]
    except (ValueError, UnicodeError, OSError, SyntaxError, RecursionError) as exc:
        return [_refused(spec, path, f"{spec}: cannot be read ({type(exc).__name__}: {exc})")]


def _refused(spec: str, path: Path, why: str) -> Candidate:
    return Candidate(path.stem or spec, _guess_form(path), path, Meta(), refused=why)


def _guess_form(path: Path) -> Form:
    if (path.is_dir() and (path / "run.sh").is_file()) or is_dockerfile(path):
        return Form.MOD
    return Form.SCRIPT if path.suffix == ".py" else Form.PLAIN_DIFF


def _directory(root: Path, target: str) -> list[Candidate]:
    if (root / "run.sh").is_file():
        return read_mod(root, target)
    if series_file(root) is not None:
        return read_quilt(root, target)
    files = sorted(p for p in root.iterdir() if p.is_file())
    if files and any(is_mail(p.read_bytes()[:64]) for p in files):
        return read_mbox(root, target)
    found = [c for p in files if p.suffix in (".patch", ".diff", ".py") for c in _file(p, target)]
    if not found:
        raise ImportRefused(
            f"{root}: holds no run.sh, quilt series, format-patch messages, diffs or scripts"
        )
    return found


def _file(path: Path, target: str) -> list[Candidate]:
    data = path.read_bytes()
    if is_mail(data):
        return read_mbox(path, target)
    if path.name == "run.sh" or _is_shell(path, data) or is_dockerfile(path):
        return read_mod(path.parent, target, script=path)
    if looks_like_diff(data):
        return [_diff(path, data, target)]
    if _is_python(path, data):
        edits = read_script(data, path, target)
        meta = comment_meta(script_comments(data), fallback_title=path.stem)
        return [
            Candidate(path.stem, Form.SCRIPT, path, meta, edits=edits, origin=(Origin.of(path),))
        ]
    raise ImportRefused(
        f"{path}: neither a diff, a format-patch message, a replace script nor a run.sh",
        hint="give the file patchkit should import, or a directory holding it",
    )


def _is_shell(path: Path, data: bytes) -> bool:
    """A build or install script: ``*.sh``, or a ``#!`` line naming sh or bash."""
    head = data[:200].decode("utf-8", "replace")
    return path.suffix in (".sh", ".bash") or bool(re.match(r"#!.*\b(ba)?sh\b", head))


def _is_python(path: Path, data: bytes) -> bool:
    head = data[:200].decode("utf-8", "replace")
    return path.suffix == ".py" or bool(re.match(r"#!.*python", head))


def guess_strip(data: bytes) -> int:
    """``-p`` for a diff file: 1 when old and new names differ in their first component
    (``a/x b/x``, ``pkg.orig/x pkg/x``); 0 for absolute or bare paths."""
    names = re.findall(rb"^(?:---|\+\+\+) (\S+)", data, re.MULTILINE)
    pairs = [n for n in names if n != b"/dev/null"]
    if not pairs or pairs[0].startswith(b"/"):
        return 0
    firsts = {n.split(b"/")[0] for n in pairs if b"/" in n}
    return 1 if len(firsts) > 1 or firsts & {b"a", b"b"} else 0


def _diff(path: Path, data: bytes, target: str) -> Candidate:
    strip = 1 if is_git_diff(data) else guess_strip(data)
    mapped = map_diff(data, target, strip=strip, source=str(path))
    if mapped.preamble.startswith(("From:", "Subject:")):
        meta, _ = parse_mail(data)
    else:
        meta = parse_dep3(mapped.preamble)
    form = Form.GIT_DIFF if is_git_diff(data) else Form.PLAIN_DIFF
    pr = named_pr(path.name, target)
    if pr is not None and pr not in meta.prs:  # 01-pr59958.patch: the upstream PR it carries
        meta = replace(meta, prs=(*meta.prs, pr))
    return Candidate(path.stem, form, path, meta, mapped.text, origin=(Origin.of(path),))
