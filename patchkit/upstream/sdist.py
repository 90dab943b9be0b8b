"""Source releases extracted safely: every member checked to land inside the release's one
top-level directory (no absolute paths, ``..``, links out, devices), then what the sdist
builder added and the repository never had is dropped."""

from __future__ import annotations

import posixpath
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from patchkit.errors import SourceError, shown

MAX_RELEASE_BYTES = 8 << 30  # what a release's members may hold, together (vLLM's: ~0.1 GB)
MAX_MEMBERS = 500_000  # members of a release (vLLM's: a few thousand)


@dataclass(frozen=True)
class SdistTree:
    root: Path  # the release's files, top-level directory stripped, sdist-only files dropped
    mtime: int  # newest member mtime: a deterministic date when the index gives none


def extract_sdist(archive: Path, dest: Path) -> SdistTree:
    """Extract a source release under ``dest``, refusing any member that would land outside."""
    try:
        with tarfile.open(archive) as tar:
            members = _bounded(tar, archive)
            for member in members:  # paths first, so an absolute path is named as such
                _check_member(member, None, archive)
            top = _single_top(members, archive)
            for member in members:
                _check_member(member, top, archive)
            _extract_all(tar, members, dest)
    except (tarfile.TarError, OSError) as exc:
        raise SourceError(
            f"cannot extract {archive}: {exc}",
            hint=f"delete {archive} and fetch again; if it persists the release is broken",
        ) from exc
    root = dest / top
    _drop_sdist_files(root)
    return SdistTree(root, max((int(m.mtime) for m in members), default=0))


def _bounded(tar: tarfile.TarFile, archive: Path) -> list[tarfile.TarInfo]:
    """The archive's members, read one by one (a gzip bomb's headers say what it would
    write): SourceError before extracting when more than :data:`MAX_MEMBERS` or than
    :data:`MAX_RELEASE_BYTES` together."""
    members, total = [], 0
    for member in tar:
        members.append(member)
        total += member.size
        if len(members) > MAX_MEMBERS or total > MAX_RELEASE_BYTES:
            raise SourceError(
                f"{archive} is no source release patchkit extracts: over {MAX_MEMBERS} members "
                f"or {MAX_RELEASE_BYTES} bytes (MAX_MEMBERS, MAX_RELEASE_BYTES); nothing was "
                "extracted",
                hint="the archive is unsafe or broken; use a git source for this target",
            )
    return members


def _extract_all(tar: tarfile.TarFile, members: list[tarfile.TarInfo], dest: Path) -> None:
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, members=members, filter="data")
    else:  # Python without extraction filters: _check_member has already vetted every member
        tar.extractall(dest, members=members)


def _single_top(members: list[tarfile.TarInfo], archive: Path) -> str:
    tops = {PurePosixPath(m.name).parts[0] for m in members if PurePosixPath(m.name).parts}
    if len(tops) != 1:
        raise SourceError(
            f"{archive} is not a source release: it has {len(tops)} top-level entries, not one",
            hint="use a git source for this target in upstream.lock",
        )
    return tops.pop()


def _check_member(member: tarfile.TarInfo, top: str | None, archive: Path) -> None:
    name = member.name
    problem = _unsafe_name(name, top)
    if problem is None and (member.issym() or member.islnk()):
        base = posixpath.dirname(name) if member.issym() else ""
        problem = _unsafe_name(posixpath.join(base, member.linkname), top, link=True)
    if problem is None and (member.ischr() or member.isblk() or member.isfifo()):
        problem = "is a device or fifo"
    if problem:
        raise SourceError(
            f"{archive}: member {shown(name)} {problem}; refusing to extract the release",
            hint="the archive is unsafe or broken; report it to the project or use a git source",
        )


def _unsafe_name(name: str, top: str | None, *, link: bool = False) -> str | None:
    what = "links outside the release" if link else "has an unsafe path"
    if name.startswith("/"):
        return f"{what} (absolute)"
    norm = posixpath.normpath(name)
    if ".." in PurePosixPath(name).parts and not link:
        return f"{what} ('..')"
    if norm.startswith("..") or (top and PurePosixPath(norm).parts[:1] != (top,)):
        return what
    return None


_EGG_INFO_CFG = re.compile(r"\n*\[egg_info\]\ntag_build = ?\ntag_date = 0\n*\Z")


def _drop_sdist_files(root: Path) -> None:
    """Remove what the sdist builder added and the repository never had."""
    (root / "PKG-INFO").unlink(missing_ok=True)
    _strip_egg_info_cfg(root / "setup.cfg")
    for egg_info in [*root.glob("*.egg-info"), *root.glob("src/*.egg-info")]:
        if egg_info.is_dir():
            shutil.rmtree(egg_info)
        else:
            egg_info.unlink()


def _strip_egg_info_cfg(setup_cfg: Path) -> None:
    """setuptools appends an ``[egg_info]`` block to setup.cfg (creating it if needed)."""
    if not setup_cfg.is_file() or setup_cfg.is_symlink():
        return
    text = setup_cfg.read_text(errors="surrogateescape")
    stripped = _EGG_INFO_CFG.sub("\n", text).lstrip("\n")
    if stripped == text:
        return
    if stripped.strip():
        setup_cfg.write_text(stripped, errors="surrogateescape")
    else:
        setup_cfg.unlink()
