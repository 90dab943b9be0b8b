"""Series of patches: a quilt ``series`` with DEP-3 headers, ``git format-patch`` output (one
mbox file, or a directory of numbered messages), and a commit range of a git checkout (made
into the same messages by ``git format-patch``, through the one git wrapper)."""

from __future__ import annotations

import re
from pathlib import Path

from patchkit.errors import ImportRefused, shown
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.importers.diffs import map_diff
from patchkit.importers.meta import parse_dep3, parse_mail
from patchkit.importers.model import Candidate, Form, Origin
from patchkit.trust.gitargs import check_range
from patchkit.trust.paths import under

MAIL_START = re.compile(rb"^From [0-9a-f]{40} ", re.MULTILINE)


def series_file(root: Path) -> Path | None:
    for name in ("series", "patches/series"):
        if (root / name).is_file():
            return inside_source(root, name, str(root))
    return None


def inside_source(root: Path, name: str, where: str) -> Path:
    """``root/name`` where it really is, refused (ImportRefused) when it is absolute, climbs
    out with ``..`` or is a link leading out of ``root``: import copies what it reads into
    the set, so it reads only the source it was given."""
    hint = "keep the series' patches inside its directory, as files, not links out of it"
    return under(root, name, what=where, error=ImportRefused, hint=hint)


def read_quilt(root: Path, target: str) -> list[Candidate]:
    series = series_file(root)
    assert series is not None
    found = []
    for line in series.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        strip = next((int(w[2:]) for w in words[1:] if w.startswith("-p")), 1)
        path = inside_source(series.parent, words[0], f"{series}: entry")
        if not path.is_file():
            raise ImportRefused(f"{series}: lists {words[0]}, which is not in {series.parent}")
        mapped = map_diff(path.read_bytes(), target, strip=strip, source=str(path))
        meta = parse_dep3(mapped.preamble)
        origin = (Origin.of(series), Origin.of(path))
        found.append(Candidate(path.stem, Form.QUILT, path, meta, mapped.text, origin=origin))
    return found


def split_mbox(data: bytes) -> list[bytes]:
    starts = [m.start() for m in MAIL_START.finditer(data)]
    return [data[a:b] for a, b in zip(starts, [*starts[1:], len(data)], strict=True)]


def _slug(title: str, fallback: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48].rstrip("-")
    return slug or fallback


def read_messages(
    messages: list[tuple[bytes, Path, str]], target: str, form: Form
) -> list[Candidate]:
    """Candidates from format-patch messages: (message, source, origin file name) each."""
    found = []
    for number, (message, source, origin_name) in enumerate(messages, 1):
        meta, body = parse_mail(message)
        mapped = map_diff(body, target, strip=1, source=f"{source} message {number}")
        name = _slug(meta.title, f"{source.stem}-{number}")
        origin = (Origin(origin_name, message),)
        found.append(Candidate(name, form, source, meta, mapped.text, origin=origin))
    return found


def read_mbox(path: Path, target: str) -> list[Candidate]:
    if path.is_dir():
        files = sorted(
            inside_source(path, p.name, str(path))
            for p in path.iterdir()
            if p.is_file() and is_mail(p.read_bytes()[:64])
        )
        messages = [(m, f, f.name) for f in files for m in split_mbox(f.read_bytes())]
    else:
        parts = split_mbox(path.read_bytes())
        messages = [(m, path, f"{i:04d}-{path.name}") for i, m in enumerate(parts, 1)]
    return read_messages(messages, target, Form.MBOX)


def read_range(spec: str, target: str) -> list[Candidate]:
    """``DIR@A..B`` (or ``A..B`` in the current directory): the commits after A up to B."""
    where, _, commits = spec.rpartition("@")
    root = Path(where or ".").resolve()
    if not root.is_dir() or not is_repo(root):
        raise ImportRefused(f"{spec}: {root} is not a git checkout", hint="use DIR@A..B")
    old, new = check_range(commits, where=spec)
    with GitRepo(root) as repo:
        for end in (old, new):
            if repo.resolve(end) is None:
                raise ImportRefused(f"{spec}: {shown(end)} is not a commit of {root}")
        args = ("--stdout", "--full-index", "--no-signature", "--end-of-options", f"{old}..{new}")
        data = repo.git("format-patch", *args)
    parts = split_mbox(data)
    if not parts:
        raise ImportRefused(f"{spec}: the range holds no commits")
    messages = [(m, root, f"{i:04d}.patch") for i, m in enumerate(parts, 1)]
    return read_messages(messages, target, Form.RANGE)


def is_mail(data: bytes) -> bool:
    return bool(MAIL_START.match(data))


def is_range(spec: str) -> bool:
    return bool(re.fullmatch(r"(?:.*@)?[^@\s]+\.\.[^@\s]+", spec)) and not Path(spec).exists()
