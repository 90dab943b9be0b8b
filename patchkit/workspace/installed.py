"""Installed distributions as trees: patch vLLM or FlashInfer where pip put them, as container
image builds do, instead of a checkout.

The distribution is found through the metadata of the interpreter that will run it
(:mod:`patchkit.workspace.distribution`; the package itself is never imported). Its ``RECORD`` says which files it holds and their sha256, so patchkit checks
every file before touching it and refuses, by name, files someone else already changed. The
upstream commit comes from the release's version file (``vllm/_version.py``,
``flashinfer/_build_meta.py``). State lives beside the packages in
``site-packages/.patchkit/<dist-name>/``.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import ClassVar

from patchkit.errors import TreeError
from patchkit.model import LockEntry
from patchkit.targets import TargetProfile, commits_match, profile
from patchkit.workspace.distribution import Distribution, find_distribution, safe_relative
from patchkit.workspace.distribution import InstalledError as InstalledError
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree, sha256

log = logging.getLogger("patchkit.workspace.installed")


@dataclass
class InstalledTree(Tree):
    """A Tree over site-packages that remembers the distribution's RECORD."""

    kind: ClassVar[str] = "installed"
    dist: Distribution | None = None
    profile: TargetProfile | None = field(default=None, repr=False)

    def written(self, paths: Sequence[str]) -> None:
        invalidate_pycache(self, paths)


# --- the tree ----------------------------------------------------------------------------------


def _mapper(prof: TargetProfile, dist: Distribution) -> Callable[[str], str | None]:
    """Repository path -> site-packages path, for files the distribution holds, or new files in
    a directory it holds; anything else (vLLM's ``csrc/``, ``CMakeLists.txt``) -> None."""
    held_dirs = dist.directories()

    def mapper(repo_path: str) -> str | None:
        site_path = prof.installed_path(repo_path)
        if site_path is None or safe_relative(site_path) is None:
            return None
        if site_path in dist.files or str(PurePosixPath(site_path).parent) in held_dirs:
            return site_path
        return None

    return mapper


def _target_profile(entry: LockEntry) -> TargetProfile:
    prof = profile(entry.name)
    if prof is None or not prof.installed_map:
        raise InstalledError(
            f"patchkit does not know how {entry.name} lays out an installed distribution",
            hint="patch a checkout of it with --checkout DIR",
        )
    return prof


def state_dir_for(dist: Distribution) -> Path:
    return dist.location / ".patchkit" / dist.name.lower()


def open_installed(entry: LockEntry, python: Path | None) -> Tree:
    """The installed distribution of ``entry``'s target, for ``python`` (default: the
    interpreter running patchkit), as a tree rooted at its site-packages."""
    prof = _target_profile(entry)
    dist = find_distribution(prof.distribution, python or sys.executable)
    tree = InstalledTree(
        root=dist.location,
        state_dir=state_dir_for(dist),
        target=entry.name,
        mapper=_mapper(prof, dist),
        dist=dist,
        profile=prof,
    )
    settle_state(tree)
    return tree


# Packages of prebuilt kernels that make a patched source tree moot: FlashInfer loads the .so
# files of flashinfer-jit-cache (or its own data/aot/) before it would JIT-compile its headers.
_PREBUILT = {"flashinfer": ("flashinfer_jit_cache", "flashinfer-jit-cache", "flashinfer/data/aot")}


def prebuilt_kernels(tree: Tree) -> str | None:
    """A warning when the installed target also has prebuilt kernels, so patched sources (CUDA
    headers) may never be compiled; None when there are none."""
    known = _PREBUILT.get(tree.target)
    if not isinstance(tree, InstalledTree) or known is None:
        return None
    module, dist, aot = known
    found = [p.name for p in tree.root.glob(f"{module}-*.dist-info")]
    if (tree.root / module).is_dir() or found:
        where = found[0] if found else module
        return (
            f"{dist} is installed in {tree.root} ({where}): {tree.target} loads its prebuilt "
            f"kernels, so patched CUDA sources are never compiled for the modules it ships; "
            f"`pip uninstall {dist}` for the interpreter that serves (or rebuild it from the "
            "patched tree) for the patches to take effect"
        )
    if (tree.root / aot).is_dir():
        return (
            f"{tree.root / aot} holds prebuilt kernels: {tree.target} loads them, so patched "
            "CUDA sources are never compiled for the modules there; remove that directory "
            "(or rebuild it from the patched tree) for the patches to take effect"
        )
    return None


# --- what treecheck asks of an installed tree -----------------------------------------------------


def record_digest(content: bytes, algorithm: str = "sha256") -> str:
    """A digest as RECORD writes it: urlsafe base64, no padding."""
    raw = hashlib.new(algorithm, content).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _installed(tree: Tree) -> InstalledTree:
    if not isinstance(tree, InstalledTree) or tree.dist is None or tree.profile is None:
        raise TreeError(f"{tree.root}: not a tree made by open_installed")
    return tree


def installed_commit(tree: Tree) -> str | None:
    """The upstream commit the installed release names in its version file."""
    prof = _installed(tree).profile
    assert prof is not None
    if not tree.holds(prof.version_file):
        return None
    content = tree.read(prof.version_file)
    return prof.commit_in(content.decode(errors="replace")) if content else None


def _repo_path(prof: TargetProfile, site_path: str) -> str | None:
    """The repository path of a site-packages path (longest installed prefix wins)."""
    for prefix, installed in sorted(prof.installed_map, key=lambda m: -len(m[1])):
        if site_path.startswith(installed):
            return prefix + site_path[len(installed) :]
    return None


def _differs(tree: InstalledTree, repo_path: str) -> bool:
    """The file is not as RECORD has it: edited, deleted, or added by someone else."""
    assert tree.dist is not None
    site_path = tree.mapper(repo_path)
    if site_path is None:
        return False
    recorded = tree.dist.files.get(site_path)
    current = tree.read(repo_path)
    if recorded is None:
        return current is not None
    if recorded.digest is None or recorded.algorithm is None:
        return False  # RECORD lists it without a hash (RECORD itself, .pyc): nothing to check
    return current is None or record_digest(current, recorded.algorithm) != recorded.digest


def modified_files(tree: Tree, paths: Sequence[str] | None) -> list[str]:
    """Of ``paths`` (None: every file of the distribution), those whose bytes differ from
    RECORD: someone already modified them."""
    itree = _installed(tree)
    assert itree.dist is not None and itree.profile is not None
    if paths is None:
        mapped = (_repo_path(itree.profile, p) for p in itree.dist.files)
        paths = [p for p in mapped if p is not None and itree.holds(p)]
    return sorted(p for p in paths if _differs(itree, p))


def outside_changes(tree: Tree) -> list[str]:
    """Files of the distribution changed by someone other than patchkit (for status): those
    that differ from RECORD, less those patchkit wrote and that are still as it left them."""
    state = StateStore(tree.state_dir).load()
    ours = {
        p for p, rec in (state.files if state else {}).items() if _digest(tree, p) == rec.result
    }
    return [p for p in modified_files(tree, None) if p not in ours]


# --- state left behind by a reinstall ------------------------------------------------------------


def _digest(tree: Tree, repo_path: str) -> str | None:
    content = tree.read(repo_path)
    return sha256(content) if content is not None else None


def settle_state(tree: Tree) -> None:
    """pip never removes ``.patchkit/``, so a reinstall leaves state for files it replaced.

    Every file the state names back exactly as RECORD has it: the state is obsolete and is
    dropped (nothing of anyone's is lost). A state made at another upstream commit that still
    describes patched files: refused, since reset would put the old release's files back."""
    itree = _installed(tree)
    store = StateStore(tree.state_dir)
    state = store.load()
    if state is None or (store.dir / "journal.json").exists():
        return  # an interrupted run: apply and reset recover it first
    files = list(state.files.values())
    as_recorded = not modified_files(itree, [rec.path for rec in files])
    if as_recorded and any(_digest(tree, rec.path) != rec.result for rec in files):
        log.warning("%s: reinstalled since patchkit patched it; dropping the old state", tree.root)
        store.save(None)
        return
    commit = installed_commit(itree)
    if state.commit and commit and not commits_match(state.commit, commit):
        raise InstalledError(
            f"{store.file} records patches applied to {state.target} at {state.commit}, but the "
            f"installed release is at {commit}, and not every file the state names is as the "
            "installed RECORD has it (upgraded, then edited?)",
            hint=f"reinstall the package, then remove {tree.state_dir} and apply again",
        )


# --- compiled caches -----------------------------------------------------------------------------


def invalidate_pycache(tree: Tree, paths: Iterable[str]) -> list[Path]:
    """Remove ``__pycache__/<module>.*.pyc`` of every written ``.py`` file, so Python cannot
    run stale bytecode (pip's hash-based or same-mtime pycs). Returns the files removed."""
    removed = []
    for repo_path in paths:
        if not repo_path.endswith(".py") or not tree.holds(repo_path):
            continue
        source = tree.disk_path(repo_path)
        for pyc in sorted((source.parent / "__pycache__").glob(f"{source.stem}.*.pyc")):
            pyc.unlink(missing_ok=True)
            removed.append(pyc)
    return removed
