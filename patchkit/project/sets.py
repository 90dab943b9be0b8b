"""Patch sets: ``patchsets/<name>/patchset.toml`` (the manifest and the ordered series) and one
``patches/<id>.toml`` of metadata per patch beside its ``<id>.patch`` (a unified diff) or
``<id>.py`` (a libcst rewrite). Errors name the file and the key."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from patchkit.errors import ConfigError, shown
from patchkit.fileio import read_file
from patchkit.model import (
    PatchHistory,
    PatchKind,
    PatchMeta,
    PatchSet,
    TestSpec,
    UpstreamStatus,
)
from patchkit.project.benchspec import load_benches
from patchkit.project.exportspec import load_export
from patchkit.project.upstreamspec import load_upstream
from patchkit.tomlread import read_toml
from patchkit.tomlschema import Table
from patchkit.trust.names import check_name
from patchkit.trust.paths import under

MANIFEST = "patchset.toml"
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
KIND_BY_SUFFIX = {".patch": PatchKind.DIFF, ".diff": PatchKind.DIFF, ".py": PatchKind.REWRITE}


def project_of(meta_file: Path) -> Path:
    """The project a patch's metadata belongs to: ``<project>/patchsets/<set>/patches/<id>.toml``."""
    if meta_file.parent.name != "patches" or meta_file.parents[2].name != "patchsets":
        raise ConfigError(
            f"{meta_file}: is not a patch's metadata in a project (patchsets/<set>/patches/)"
        )
    return meta_file.parents[3]


def _capability(text: Any, where: str, path: Path) -> tuple[int, int] | None:
    if text in (None, ""):
        return None
    match = re.fullmatch(r"(\d{1,4})\.(\d{1,4})", text) if isinstance(text, str) else None
    if not match:
        raise ConfigError(f'{path}: {where}.min_capability must look like "9.0"')
    return int(match.group(1)), int(match.group(2))


def _kinds(item: Table) -> tuple[str, ...]:
    kinds = item.texts("gpu_kinds")
    if not all(kinds):
        raise item.fail("gpu_kinds", 'an array like ["H100", "H200"]', list(kinds))
    return kinds


def _tests(meta: Table) -> tuple[TestSpec, ...]:
    tests = []
    for item in meta.tables("tests"):
        where = item.text("where", "set")
        if where not in ("set", "upstream"):
            raise item.fail("where", '"set" or "upstream"', where)
        tests.append(
            TestSpec(
                where=where,
                node=item.text("node"),
                gpu=item.flag("gpu", False),
                min_capability=_capability(item.get("min_capability"), item.where, item.path),
                gpu_kinds=_kinds(item),
            )
        )
    return tuple(tests)


@dataclass(frozen=True)
class _Dir:
    """A set's ``patches`` directory, looked at once for all its patches: its real path, the
    names in it and which of them are plain files (no link), as the directory listing says
    (a thousand patches: no resolve and no stat each)."""

    real: Path
    names: frozenset[str]
    plain: frozenset[str]  # regular files, not symlinks

    @staticmethod
    def of(path: Path) -> _Dir | None:
        try:
            with os.scandir(path) as entries:
                listed = [(e.name, e.is_file(follow_symlinks=False)) for e in entries]
            return _Dir(
                path.resolve(),
                frozenset(n for n, _ in listed),
                frozenset(n for n, plain in listed if plain),
            )
        except OSError:
            return None  # each patch then looks for itself (and says what is missing)

    def real_path(self, path: Path) -> Path | None:
        """``path.resolve()`` for a plain file of this directory, without a system call."""
        return self.real / path.name if path.name in self.plain else None


def _patch_file(meta: Table, patch_id: str, beside: _Dir | None) -> tuple[Path, PatchKind]:
    meta_path = meta.path
    named = "file" in meta
    names = [_named_file(meta)] if named else [f"{patch_id}{s}" for s in KIND_BY_SUFFIX]
    listed = None if named or beside is None else beside
    found = [
        meta_path.parent / n
        for n in names
        if (listed is None or n in listed.names)
        and ((listed is not None and n in listed.plain) or (meta_path.parent / n).is_file())
    ]
    if len(found) != 1:
        shown_names = ", ".join(Path(n).name for n in names)
        what = "none" if not found else "more than one"
        raise ConfigError(
            f"{meta_path}: patch {shown(patch_id)} needs exactly one of {shown_names}; found {what}"
        )
    kind = KIND_BY_SUFFIX.get(found[0].suffix)
    if kind is None:
        raise ConfigError(f"{meta_path}: file {found[0].name} must end in .patch, .diff or .py")
    return _real(found[0], listed), kind


def _named_file(meta: Table) -> str:
    """The metadata's ``file``: a file beside it (no absolute path, no ``..``, no link out)."""
    name = meta.text("file")
    under(meta.path.parent, name, what=f"{meta.path}: key `file`", hint=_FILE_HINT)
    return name


_FILE_HINT = 'name the patch\'s file beside its metadata (`file = "x.patch"`); nothing was read'


def _real(path: Path, beside: _Dir | None) -> Path:
    """``path.resolve()``; for a plain file of a directory already listed, without resolve's
    system call per part of the path (a set of a thousand patches)."""
    known = beside.real_path(path) if beside is not None else None
    return known if known is not None else path.resolve()


def _files(meta: Table, kind: PatchKind) -> tuple[str, ...]:
    """``files``: the repository paths a rewrite may change, so that the files a patch touches
    are known without importing it (checked against the rewrite whenever it runs)."""
    files, path = meta.texts("files"), meta.path
    if files and kind is not PatchKind.REWRITE:
        raise ConfigError(f"{path}: key 'files' is for rewrites; a diff names its own files")
    for name in files:
        pure = PurePosixPath(name)
        if not name or pure.is_absolute() or ".." in pure.parts or "\\" in name:
            raise ConfigError(
                f"{path}: files: {shown(name)} is not a relative path inside the tree"
            )
    if len(set(files)) != len(files):
        raise ConfigError(f"{path}: files lists a path twice")
    return files


def _hardware(pr: dict[str, Any], path: Path) -> tuple[tuple[int, int], ...]:
    """``[pr] hardware = ["12.0", "12.1"]``: the compute capabilities the change is for."""
    value = pr.get("hardware", [])
    items = value if isinstance(value, list) else [None]
    caps = [re.fullmatch(r"(\d{1,4})\.(\d{1,4})", v) if isinstance(v, str) else None for v in items]
    if not all(caps):
        raise ConfigError(f'{path}: [pr] hardware must be a list of capabilities like ["12.1"]')
    return tuple((int(m.group(1)), int(m.group(2))) for m in caps if m)


def load_patch(
    meta_path: Path, set_name: str, targets: tuple[str, ...], beside: _Dir | None = None
) -> PatchMeta:
    """One patch's metadata; ``beside``: its directory, looked at once for the whole set."""
    raw = read_toml(meta_path)
    meta = Table(raw, meta_path)
    patch_id, target, status = _identity(meta, targets)
    file, kind = _patch_file(meta, patch_id, beside)
    pr = meta.table("pr")
    return PatchMeta(
        id=patch_id,
        title=meta.text("title"),
        why=meta.text("why"),
        target=target,
        kind=kind,
        file=file,
        meta_file=_real(meta_path, beside),
        set_name=set_name,
        author=meta.text("author", ""),
        issues=meta.texts("issues"),
        prs=meta.texts("prs"),
        status=status,
        merged_in=meta.optional_text("merged_in"),
        requires=meta.texts("requires"),
        tests=_tests(meta),
        benches=load_benches(raw, meta_path),
        optional=meta.flag("optional", False),
        on_failure=_on_failure(meta),
        files=_files(meta, kind),
        upstream=load_upstream(meta),
        export=load_export(raw, meta_path, meta_path.parent.parent),
        pr_tags=pr.texts("tags"),
        pr_scope=pr.optional_text("scope"),
        pr_hardware=_hardware(pr.raw, meta_path),
        pr_since=pr.text("since", ""),
        pr_caveats=pr.optional_text("caveats"),
        notes=meta.text("notes", ""),
        history=_history(meta.table("history")),
    )


def _identity(meta: Table, targets: tuple[str, ...]) -> tuple[str, str, UpstreamStatus]:
    """The patch's id (its file name), its target (one of the set's) and its upstream status."""
    meta_path = meta.path
    patch_id = meta.text("id")
    if patch_id != meta_path.stem:
        raise ConfigError(
            f"{meta_path}: id {shown(patch_id)} must match the file name {shown(meta_path.stem)}"
        )
    target = meta.text("target")
    if target not in targets:
        raise ConfigError(
            f"{meta_path}: target {shown(target)} is not among the set's targets {targets}"
        )
    try:
        status = UpstreamStatus(meta.text("status", "local"))
    except (ValueError, ConfigError):
        raise ConfigError(f"{meta_path}: status must be local, forwarded or merged") from None
    return patch_id, target, status


def _history(history: Table) -> PatchHistory:
    return PatchHistory(
        absorbed_by=history.optional_text("absorbed_by"),
        broken_by=history.optional_text("broken_by"),
        pending=history.optional_text("pending"),
    )


def load_patchset(root: Path) -> PatchSet:
    manifest = root / MANIFEST
    raw = read_toml(manifest).get("patchset")
    if not isinstance(raw, dict):
        raise ConfigError(f"{manifest}: needs a [patchset] table")
    table = Table(raw, manifest, "patchset")
    name = check_name(table.text("name"), what="set name", where=f"{manifest}: key `name`")
    targets = table.texts("targets")
    for named in targets:
        check_name(named, what="target", where=f"{manifest}: key `targets`")
    series = table.texts("series")
    for patch_id in series:
        if not ID_PATTERN.fullmatch(patch_id):
            raise ConfigError(f"{manifest}: series entry {shown(patch_id)} is not a valid patch id")
    if len(set(series)) != len(series):
        raise ConfigError(f"{manifest}: series lists a patch twice")
    where = root / "patches"
    beside = _Dir.of(where)
    patches = tuple(load_patch(where / f"{pid}.toml", name, targets, beside) for pid in series)
    _check_requires(patches, manifest)
    return PatchSet(
        name=name,
        version=table.text("version"),
        description=table.text("description", ""),
        targets=targets,
        root=root.resolve(),
        patches=patches,
    )


def _check_requires(patches: tuple[PatchMeta, ...], manifest: Path) -> None:
    seen: set[str] = set()
    for patch in patches:
        for needed in patch.requires:
            if needed not in seen:
                raise ConfigError(
                    f"{patch.meta_file}: requires {shown(needed)}, which is not earlier in the series "
                    f"of {manifest}"
                )
        seen.add(patch.id)


def load_patchsets(project: Path, names: list[str] | None = None) -> list[PatchSet]:
    """The patch sets under ``project/patchsets`` (all of them, or those named), by name."""
    base = project / "patchsets"
    available = sorted(p.parent.name for p in base.glob(f"*/{MANIFEST}"))
    chosen = names or available
    missing = [n for n in chosen if n not in available]
    if missing:
        raise ConfigError(
            f"no patch set {', '.join(missing)} under {base} (available: {', '.join(available)})"
        )
    return [load_patchset(base / n) for n in chosen]


def select_patches(
    sets: list[PatchSet], target: str, *, include: tuple[str, ...] = (), only: tuple[str, ...] = ()
) -> list[PatchMeta]:
    """The series for ``target`` across sets: opt-in patches only when included by id, and
    patches upstream merged (retired by a rebase: ``status = "merged"``) or left pending by
    ``rebase --allow-pending`` (they do not apply at the lock) only when named."""
    patches = [p for s in sets for p in s.for_target(target)]
    known = {p.id for p in patches}
    unknown = [i for i in (*include, *only) if i not in known]
    if unknown:
        raise ConfigError(f"no patch {', '.join(unknown)} for target {shown(target)}")
    if only:
        return [p for p in patches if p.id in only]
    retired = UpstreamStatus.MERGED
    return [
        p
        for p in patches
        if p.id in include or (not p.optional and p.status is not retired and not p.history.pending)
    ]


def patch_digest(meta: PatchMeta) -> str:
    """The sha256 of a patch's file: what verification records and state are keyed by."""
    return hashlib.sha256(read_file(meta.file)).hexdigest()


def _on_failure(meta: Table) -> str:
    """``on_failure``: ``stop`` (the default: nothing is written) or ``skip``."""
    value = meta.text("on_failure", "stop")
    if value not in ("stop", "skip"):
        raise meta.fail("on_failure", '"stop" or "skip"', value)
    return value
