"""``patchkit cache``: what patchkit keeps in its cache, by kind and size; ``cache prune``
removes what nothing refers to any more.

Pruned: a release archive already committed to its target's repository (the commit holds it),
worktrees git still lists whose directory is gone, stopped rebases whose project is gone or
that have no state, journals of project writes already rolled back, lock holder notes of
processes that ended, and the half-made leftovers of interrupted runs (``*.tmp``, ``*.part``,
staging repositories), recorded runs (``warm/``) no patchkit can replay any more: unreadable,
not sealed by this cache, of another version, or whose tree or project is gone. Never pruned:
repositories, the shared trees, a stopped rebase of a project that exists (``rebase --abort``
drops it), the rewrite and record caches, a recorded run that may be replayed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from patchkit import cacheroot
from patchkit.cache import Cache
from patchkit.gitrepo import GitRepo, is_repo
from patchkit.workspace.replay import Record, read_record

TRAILER = "Source release "  # how a release commit names its archive (see upstream.sources)


@dataclass(frozen=True)
class Kind:
    name: str  # the cache's top-level directory (or file)
    files: int
    bytes: int


@dataclass(frozen=True)
class CacheReport:
    root: Path
    kinds: tuple[Kind, ...]

    @property
    def total(self) -> int:
        return sum(k.bytes for k in self.kinds)

    def to_json(self) -> dict[str, object]:
        return {
            "root": str(self.root),
            "total_bytes": self.total,
            "kinds": {k.name: {"files": k.files, "bytes": k.bytes} for k in self.kinds},
        }


@dataclass(frozen=True)
class Pruned:
    removed: tuple[str, ...]  # what was removed, each with why
    freed: int  # bytes


def _files(path: Path) -> Iterator[Path]:
    if path.is_file() or path.is_symlink():
        yield path
        return
    for base, _dirs, names in os.walk(path):
        for name in names:
            yield Path(base) / name


def _size(path: Path) -> tuple[int, int]:
    count = total = 0
    for file in _files(path):
        try:
            total += file.lstat().st_size
        except OSError:
            continue
        count += 1
    return count, total


def cache_report(root: Path | None = None) -> CacheReport:
    """Sizes per kind: repos, trees, downloads, rebase, rewrites, records, locks, ..."""
    root = _cache(root).root
    kinds = tuple(Kind(p.name, *_size(p)) for p in sorted(root.iterdir()))
    return CacheReport(root, kinds)


# -- prune ------------------------------------------------------------------------------------
def prune(root: Path | None = None) -> Pruned:
    cache = _cache(root)
    removed: list[tuple[str, int]] = []
    steps = (_worktrees, _committed_archives, _stopped_rebases, _leftovers, _holders, _records)
    for step in steps:
        removed += step(cache)
    return Pruned(tuple(what for what, _ in removed), sum(size for _, size in removed))


def _cache(root: Path | None) -> Cache:
    """The cache at ``root`` (default: the one in use), checked as every command checks it."""
    if root is None:
        return Cache.current()
    cache = Cache(root)
    cache.check()
    return cache


def _remove(path: Path, why: str) -> tuple[str, int]:
    size = _size(path)[1]
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    return f"{path} ({why})", size


def _repos(cache: Cache) -> list[Path]:
    repos = cache.existing("repos")
    return sorted(p for p in repos.glob("*.git") if is_repo(p)) if repos else []


def _worktrees(cache: Cache) -> list[tuple[str, int]]:
    """Worktrees a repository lists whose directory is gone (git forgets them)."""
    out = []
    for repo_path in _repos(cache):
        with GitRepo(repo_path) as repo:
            before = _size(repo_path / "worktrees")[1] if (repo_path / "worktrees").is_dir() else 0
            if repo.git("worktree", "prune", "--dry-run", "-v").strip():
                repo.git("worktree", "prune")
                after = _size(repo_path / "worktrees")[1]
                out.append((f"{repo_path}: worktrees whose directory is gone", before - after))
    return out


def _committed_archives(cache: Cache) -> list[tuple[str, int]]:
    """Release archives a repository has committed (the commit names the archive)."""
    downloads = cache.existing("downloads")
    if downloads is None:
        return []
    committed = set()
    for repo_path in _repos(cache):
        with GitRepo(repo_path) as repo:
            log = repo.text("log", "--all", "--format=%B", "--grep", TRAILER, "--fixed-strings")
        for line in log.splitlines():
            if line.startswith(TRAILER):
                committed.add(line[len(TRAILER) :].split(" ")[0])
    return [
        _remove(p, "its release is committed to the repository")
        for p in sorted(downloads.iterdir())
        if p.name in committed
    ]


def _stopped_rebases(cache: Cache) -> list[tuple[str, int]]:
    rebase = cache.existing("rebase")
    out = []
    for path in sorted(rebase.iterdir()) if rebase else []:
        if path.name.startswith("project-"):  # a project's journal directory
            if not (path / "journal.json").exists():
                out.append(_remove(path, "no interrupted write left in it"))
            continue
        project = _project_of(path)
        if project is None or not Path(project).is_dir():
            _drop_worktree(cache, path / "tree")
            out.append(_remove(path, f"its project {project or '(unknown)'} is gone"))
    return out


def _project_of(path: Path) -> str | None:
    try:
        state = json.loads((path / "state.json").read_text())
    except (OSError, ValueError):
        return None
    found = state.get("project") if isinstance(state, dict) else None
    return found if isinstance(found, str) else None


def _drop_worktree(cache: Cache, tree: Path) -> None:
    for repo_path in _repos(cache):
        listed = GitRepo(repo_path).text("worktree", "list", "--porcelain")
        if f"worktree {tree}" in listed.splitlines():
            GitRepo(repo_path).git("worktree", "remove", "--force", str(tree))


def _leftovers(cache: Cache) -> list[tuple[str, int]]:
    """Half-made files of runs that were interrupted."""
    out = []
    for pattern in cache.LEFTOVERS:
        for path in sorted(cache.root.glob(pattern)):
            if "worktrees" not in path.parts and path.exists():
                out.append(_remove(path, "left by an interrupted run"))
    return out


def _holders(cache: Cache) -> list[tuple[str, int]]:
    """Notes of lock holders whose process has ended."""
    locks = cache.existing("locks")
    out = []
    for note in sorted(locks.glob("*.holder.json")) if locks else []:
        try:
            pid = int(json.loads(note.read_text()).get("pid"))
            os.kill(pid, 0)
        except (OSError, ValueError, TypeError, AttributeError):
            out.append(_remove(note, "its process has ended"))
    return out


def _records(cache: Cache) -> list[tuple[str, int]]:
    """Recorded runs of the warm path (``ops/warm.py``) that can never be replayed again, and
    the half-written ones of interrupted runs."""
    warm = cache.existing("warm")
    out = []
    for path in sorted(warm.iterdir()) if warm else []:
        if path.name.endswith(".tmp"):
            out.append(_remove(path, "left by an interrupted run"))
            continue
        why = _stale(read_record(cacheroot.sealing_key(cache.root), str(path)))
        if why is not None:
            out.append(_remove(path, why))
    return out


def _stale(record: Record | None) -> str | None:
    """Why a recorded run can never be replayed again; None if it may be."""
    if record is None:
        return "a recorded run this patchkit cannot read (another version, or not sealed here)"
    if not os.path.isdir(record.root):
        return "a recorded run whose tree is gone"
    if not os.path.isdir(record.project):
        return "a recorded run whose project is gone"
    return None
