"""``patchkit port``: the plumbing under rebase, for one diff file.

A diff made at base commit B is applied to a checkout at whatever commit it is, through the
same chain as a rebase: exact → unique context / probe → three-way merge from B's blobs. The
tree is edited in place through :func:`patchkit.workspace.txn.commit` (all or nothing); on any outcome
but ``applied``, ``carried`` or ``upstreamed`` nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from patchkit.engine.diff.make import FileDelta, unified_diff
from patchkit.engine.diff.parse import parse_diff
from patchkit.engine.series import Blobs, run_patch, touched_paths
from patchkit.errors import ConfigError, SourceError, TreeError
from patchkit.gitrepo import GitRepo, blob_id
from patchkit.model import PatchKind, PatchMeta
from patchkit.outcome import FileChange, Outcome, PatchResult
from patchkit.upstream.moved import HistoryFinder
from patchkit.upstream.refs import resolve_release_ref
from patchkit.workspace.journal import Write
from patchkit.workspace.locks import writing
from patchkit.workspace.state import StateStore
from patchkit.workspace.tree import Tree, checkout_tree
from patchkit.workspace.treecheck import changed_files
from patchkit.workspace.txn import KEEP, commit, recover


@dataclass(frozen=True)
class PortReport:
    patch_file: Path
    base: str  # the full commit the diff was made at
    checkout: Path
    outcome: Outcome  # applied only when the files it touches are as they were at ``base``
    result: PatchResult
    written: tuple[str, ...]
    refreshed: bytes | None = None  # partly upstreamed: the diff still needed on this tree

    @property
    def succeeded(self) -> bool:
        """The change is in the tree: applied, carried, upstreamed, or what upstream had not
        taken applied over what it had."""
        return self.outcome.carried


class _BaseBlobs(Blobs):
    """Blobs of the checkout's repository, and the base commit's files by (abbreviated) id, so
    a diff without full index lines still gets its three-way base."""

    def __init__(self, repo: GitRepo, base_files: dict[str, bytes]) -> None:
        super().__init__([])
        self._repos = [repo]  # the port's own repository: one cat-file process for all reads
        self._by_id = {blob_id(c): c for c in base_files.values()}

    def read(self, sha: str) -> bytes | None:
        found = super().read(sha) if len(sha) == 40 else None
        if found is not None:
            return found
        hits = [c for i, c in self._by_id.items() if i.startswith(sha)]
        return hits[0] if len(hits) == 1 else None


def port(
    *,
    patch_file: Path,
    base_commit: str,
    checkout: Path,
    allow_dirty: bool = False,
    explain: bool = False,
) -> PortReport:
    """Apply ``patch_file`` (made at ``base_commit``) to ``checkout`` in place."""
    tree = checkout_tree(checkout, "port")
    with writing(tree, "port"):
        return _port(tree, patch_file, base_commit, allow_dirty, explain)


def _port(
    tree: Tree, patch_file: Path, base_commit: str, allow_dirty: bool, explain: bool
) -> PortReport:
    store = StateStore(tree.state_dir)
    recover(tree, store)
    meta = _meta(patch_file)
    paths = touched_paths(meta)
    with GitRepo(tree.root) as repo:
        base = _resolve(repo, base_commit)
        base_files = repo.read_files(base, paths)
        blobs = _BaseBlobs(repo, base_files)
        finder = HistoryFinder(repo, base)  # to the checkout's files as they are
        result = run_patch(meta, tree.read, blobs, explain=explain, finder=finder)
        paths = [*paths, *(c.path for c in result.changes if c.path not in paths)]
    outcome = _outcome(result, tree, base_files, paths)
    written: tuple[str, ...] = ()
    refreshed = None
    if outcome.writes:
        _check_clean(tree, paths, allow_dirty)
        writes = [Write(c.path, c.content, _mode(tree, c)) for c in _with_renames(result)]
        if outcome is Outcome.PARTLY_UPSTREAMED:
            refreshed = _still_needed(tree, result)
        commit(tree, store, writes, KEEP, command="port")
        written = tuple(w.path for w in writes)
    return PortReport(patch_file, base, tree.root, outcome, result, written, refreshed)


def _still_needed(tree: Tree, result: PatchResult) -> bytes:
    """The diff of what this port writes, against the tree as it is: the part of the patch
    upstream has not taken."""
    deltas = []
    for change in result.changes:
        before_path = change.old_path or change.path
        deltas.append(
            FileDelta(
                change.path,
                tree.read(before_path),
                change.content,
                tree.mode(before_path),
                change.mode,
            )
        )
    return unified_diff(deltas)


def _meta(patch_file: Path) -> PatchMeta:
    path = patch_file.resolve()
    if not path.is_file():
        raise ConfigError(
            f"{patch_file} does not exist",
            hint="give the path of a diff (or a rewrite's .py) to port",
        )
    kind = PatchKind.REWRITE if path.suffix == ".py" else PatchKind.DIFF
    if kind is PatchKind.DIFF:
        parse_diff(path.read_bytes(), path)  # a malformed diff is MalformedPatch (exit 6) naming it
    return PatchMeta(path.stem, path.stem, "ported", "port", kind, path, path, "port")


def _resolve(repo: GitRepo, rev: str) -> str:
    """``rev`` as people give it: a commit, a tag, a release version (``0.6.6`` for the tag
    ``v0.6.6`` patchkit gives each release it fetches), or the upstream commit a release names
    (or a prefix of it)."""
    found = resolve_release_ref(repo, rev)
    if found is None:
        raise SourceError(
            f"{rev} is not a commit, tag, release version or upstream commit of {repo.path}",
            hint="pass the commit the diff was made at (fetch it into the checkout first), or "
            "the release version it was made for",
        )
    return found


def _check_clean(tree: Tree, paths: list[str], allow_dirty: bool) -> None:
    dirty = changed_files(tree, paths)
    if dirty and not allow_dirty:
        raise TreeError(
            f"uncommitted changes in files the patch touches: {', '.join(dirty)} ({tree.root})",
            hint="commit or stash them first, or pass --allow-dirty to patch on top of them",
        )


def _outcome(
    result: PatchResult, tree: Tree, base_files: dict[str, bytes], paths: list[str]
) -> Outcome:
    return result.outcome.since_base(lambda: all(tree.read(p) == base_files.get(p) for p in paths))


def _mode(tree: Tree, change: FileChange) -> int | None:
    """A renamed file keeps the mode (and kind: a link) of the file it moves, as in a series."""
    return change.mode or (tree.mode(change.old_path) if change.old_path else None)


def _with_renames(result: PatchResult) -> list[FileChange]:
    """The file changes, with each renamed file's old path deleted."""
    out: list[FileChange] = []
    for change in result.changes:
        if change.old_path:
            out.append(FileChange(change.old_path, None))
        out.append(change)
    return out
