"""An imported patch written into a patch set: ``patches/<id>.patch`` (a full-index diff),
``patches/<id>.toml`` (its metadata, with an ``[imported]`` table saying where it came from,
its base and how that was found), and the source files as they were in ``origin/<id>/``. A set
that does not exist yet is created for the target."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from patchkit.cache import Cache
from patchkit.errors import ConfigError, shown
from patchkit.gitrepo import locate_checkout
from patchkit.importers.model import Meta, Origin
from patchkit.importers.scripts import package_names
from patchkit.importers.selfcheck import CheckTest, render
from patchkit.project.sets import ID_PATTERN, MANIFEST
from patchkit.tomlread import read_toml
from patchkit.trust.names import author_line


@dataclass(frozen=True)
class Entry:
    """What to write for one patch."""

    patch_id: str
    target: str
    diff: bytes
    meta: Meta
    imported: dict[str, str]  # form, source, base, base_how, outcome
    origin: tuple[Origin, ...]
    status: str = "local"  # "merged" when upstream has it at the lock
    merged_in: str = ""
    pending: str = ""  # why it does not apply at the lock (left out of apply until fixed)
    rewrite: str = ""  # a rewrite module written instead of the diff
    files: tuple[str, ...] = ()  # the files the rewrite changes
    checks: tuple[CheckTest, ...] = ()  # the source's self-checks: written as its test


@contextlib.contextmanager
def writing(project: Path) -> Iterator[None]:
    """One import at a time writes a project's patch sets: an advisory lock kept in the
    project's git directory (so imports with different caches exclude each other, and the
    working copy gets no lock file), or in the cache for a project that is no git checkout."""
    key = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    found = locate_checkout(project.resolve())
    path = (
        found[1] / f"patchkit-import-{key}.lock"
        if found is not None
        else Cache.current().lock(f"import-{key}.lock")
    )
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def set_root(project: Path, name: str, target: str) -> Path:
    """The set ``name`` under ``project/patchsets``, made for ``target`` if it is new."""
    root = project / "patchsets" / name
    manifest = root / MANIFEST
    if manifest.is_file():
        targets = read_toml(manifest).get("patchset", {}).get("targets", [])
        if target not in targets:
            raise ConfigError(
                f"{manifest}: set {shown(name)} is for {', '.join(targets)}, not {target}",
                hint="import into a set of this target (--into NAME makes a new one)",
            )
        return root
    if not ID_PATTERN.match(name):
        raise ConfigError(f"{shown(name)} is not a valid set name (lowercase, digits, . _ -)")
    (root / "patches").mkdir(parents=True, exist_ok=True)
    doc = tomlkit.document()
    table = tomlkit.table()
    table.update(
        {
            "name": name,
            "version": "0.1.0",
            "description": f"Patches imported for {target} by `patchkit import`.",
            "targets": [target],
            "series": [],
        }
    )
    doc["patchset"] = table
    manifest.write_text(tomlkit.dumps(doc))
    return root


def taken_ids(project: Path) -> set[str]:
    """Every patch id under ``project/patchsets`` (ids are unique across sets)."""
    return {p.stem for p in (project / "patchsets").glob("*/patches/*.toml")}


def existing_patches(project: Path) -> dict[bytes, str]:
    """Every patch file's bytes under ``project/patchsets`` -> its id."""
    found: dict[bytes, str] = {}
    for path in sorted((project / "patchsets").glob("*/patches/*")):
        if path.suffix in (".patch", ".diff", ".py") and path.is_file():
            found.setdefault(path.read_bytes(), path.stem)
    return found


def free_id(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-.") or "imported"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def write(root: Path, entry: Entry) -> Path:
    """Write one patch (its diff, metadata and origin files); returns the diff's path."""
    patches = root / "patches"
    patch_file = patches / f"{entry.patch_id}.{'py' if entry.rewrite else 'patch'}"
    patch_file.write_bytes(entry.rewrite.encode() if entry.rewrite else entry.diff)
    (patches / f"{entry.patch_id}.toml").write_text(tomlkit.dumps(_meta_doc(entry)))
    origin = root / "origin" / entry.patch_id
    origin.mkdir(parents=True, exist_ok=True)
    for item in entry.origin:
        (origin / item.name).write_bytes(item.content)
    if entry.checks:
        test = root / test_node(entry.patch_id)
        test.parent.mkdir(exist_ok=True)
        test.write_bytes(render(entry.patch_id, entry.checks, _package(entry.target)))
    return patch_file


def test_node(patch_id: str) -> str:
    """The set test a patch's self-checks are written as (``tests/test_<id>_self_check.py``)."""
    return f"tests/test_{re.sub(r'[^a-z0-9]+', '_', patch_id)}_self_check.py"


def _package(target: str) -> str:
    return (package_names(target) or (target,))[0]


def _meta_doc(entry: Entry) -> Any:
    meta = entry.meta
    why = meta.why or f"Imported from {entry.imported['source']} ({entry.imported['form']})."
    doc = tomlkit.document()
    doc.update(
        {
            "id": entry.patch_id,
            "title": meta.title or entry.patch_id,
            "target": entry.target,
            "why": why,
            "author": author_line(meta.author),  # one line: a line break would forge trailers
            "issues": list(meta.issues),
            "prs": list(meta.prs),
            "status": entry.status,
            "merged_in": entry.merged_in,
        }
    )
    if "Tolerated" in meta.fields:  # run.sh went on when it failed (cmd || echo skip)
        doc["on_failure"] = "skip"
    if meta.prs and "PR-State" in meta.fields:  # pr:owner/name#N: the PR it carries
        upstream = {"pr": meta.prs[0], "state": meta.fields["PR-State"]}
        if meta.fields.get("PR-Author"):
            upstream["author"] = meta.fields["PR-Author"]  # whose PR: upstream-check says if ours
        doc["upstream"] = upstream
    if entry.rewrite:
        doc["files"] = list(entry.files)
    if entry.checks:  # the mod's self-checks, made the patch's test
        tests = tomlkit.aot()
        tests.append(
            tomlkit.item({"where": "set", "node": test_node(entry.patch_id), "gpu": False})
        )
        doc["tests"] = tests
    if entry.pending:
        doc["history"] = {"pending": entry.pending}
    imported = tomlkit.table()
    imported.update(entry.imported)
    if meta.date:
        imported["date"] = meta.date
    if meta.author and not author_line(meta.author):
        imported["author"] = meta.author  # kept as read, never exported
    if meta.fields:
        imported["fields"] = dict(meta.fields)
    doc["imported"] = imported
    return doc


def append_series(root: Path, ids: Sequence[str]) -> None:
    manifest = root / MANIFEST
    doc = tomlkit.parse(manifest.read_text())
    series = doc["patchset"]["series"]
    for patch_id in ids:
        series.append(patch_id)
    manifest.write_text(tomlkit.dumps(doc))
