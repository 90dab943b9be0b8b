"""An imported patch written into a patch set: ``patches/<id>.patch`` (a full-index diff),
``patches/<id>.toml`` (its metadata, with an ``[imported]`` table saying where it came from,
its base and how that was found), and the source files as they were in ``origin/<id>/``. A set
that does not exist yet is created for the target."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError, shown
from patchkit.importers.model import Meta, Origin
from patchkit.importers.scripts import package_names
from patchkit.importers.selfcheck import CheckTest, render
from patchkit.project.edits import appended_series, new_toml
from patchkit.project.sets import ID_PATTERN, MANIFEST
from patchkit.project.writer import ProjectWrites
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


def set_root(project: Path, name: str, target: str, writes: ProjectWrites) -> Path:
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
    table = {
        "name": name,
        "version": "0.1.0",
        "description": f"Patches imported for {target} by `patchkit import`.",
        "targets": [target],
        "series": [],
    }
    writes.put(manifest, new_toml({"patchset": table}))
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


def write(root: Path, entry: Entry, writes: ProjectWrites) -> Path:
    """Write one patch (its diff, metadata and origin files); returns the diff's path."""
    patches = root / "patches"
    patch_file = patches / f"{entry.patch_id}.{'py' if entry.rewrite else 'patch'}"
    writes.put(patch_file, entry.rewrite.encode() if entry.rewrite else entry.diff)
    writes.put(patches / f"{entry.patch_id}.toml", new_toml(_meta_doc(entry)))
    origin = root / "origin" / entry.patch_id
    for item in entry.origin:
        writes.put(origin / item.name, item.content)
    if entry.checks:
        test = root / test_node(entry.patch_id)
        writes.put(test, render(entry.patch_id, entry.checks, _package(entry.target)))
    return patch_file


def test_node(patch_id: str) -> str:
    """The set test a patch's self-checks are written as (``tests/test_<id>_self_check.py``):
    one file per id (an id with ``.`` or ``_`` gets its digest too: ``a.b`` and ``a-b`` differ)."""
    name = patch_id.replace("-", "_")
    if re.search(r"[^a-z0-9-]", patch_id):
        name = (
            re.sub(r"[^a-z0-9_]", "_", name)
            + "_"
            + hashlib.sha256(patch_id.encode()).hexdigest()[:8]
        )
    return f"tests/test_{name}_self_check.py"


def _package(target: str) -> str:
    return (package_names(target) or (target,))[0]


def _meta_doc(entry: Entry) -> dict[str, Any]:
    meta = entry.meta
    why = meta.why or f"Imported from {entry.imported['source']} ({entry.imported['form']})."
    doc: dict[str, Any] = {}
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
        doc["upstream"] = _upstream_doc(meta.prs[0], meta.fields)
    if entry.rewrite:
        doc["files"] = list(entry.files)
    if entry.checks:  # the mod's self-checks, made the patch's test
        doc["tests"] = [{"where": "set", "node": test_node(entry.patch_id), "gpu": False}]
    if entry.pending:
        doc["history"] = {"pending": entry.pending}
    imported: dict[str, Any] = dict(entry.imported)
    if meta.date:
        imported["date"] = meta.date
    if meta.author and not author_line(meta.author):
        imported["author"] = meta.author  # kept as read, never exported
    if meta.fields:
        imported["fields"] = dict(meta.fields)
    doc["imported"] = imported
    return doc


def _upstream_doc(pr: str, fields: Mapping[str, str]) -> dict[str, str]:
    """``[upstream]`` of an imported upstream PR, as its fields say."""
    upstream = {"pr": pr, "state": fields["PR-State"]}
    if fields.get("PR-Author"):
        upstream["author"] = fields["PR-Author"]  # whose PR: upstream-check says if ours
    if re.fullmatch(r"[0-9a-f]{40}", fields.get("Merge-Commit", "")):
        upstream["merge_commit"] = fields["Merge-Commit"]  # status retires it by this
    return upstream


def append_series(root: Path, ids: Sequence[str], writes: ProjectWrites) -> None:
    manifest = root / MANIFEST
    writes.put(manifest, appended_series(writes.read(manifest) or b"", ids))
