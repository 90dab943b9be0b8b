"""Upstream sources as git trees in the cache: releases committed once, worktrees, lock checks."""

from __future__ import annotations

import os
import time
from pathlib import Path

import platformdirs
import pytest

from patchkit.cache import Cache
from patchkit.errors import ConfigError, SourceError, TreeError
from patchkit.gitrepo import GitRepo
from patchkit.model import LockEntry, SourceKind, SourceSpec
from patchkit.upstream.index import IndexConfig, PackageIndex
from patchkit.upstream.sources import ReleaseStore, available_releases, fetch
from testing.builders import Upstream
from testing.fake_index import COMMITS, PROJECT, FakeIndex
from testing.fake_index import fake_index as fake_index  # the fixture

# Taken before the hermetic fixture points PATCHKIT_CACHE and HOME elsewhere: the network test
# keeps the real release in the real cache, so repeated runs reuse it.
REAL_CACHE = os.environ.get("PATCHKIT_CACHE") or platformdirs.user_cache_dir("patchkit")


def entry_for(version: str = "0.2.0", commit: str | None = None, **source: object) -> LockEntry:
    spec = SourceSpec(**source) if source else SourceSpec(SourceKind.INDEX, package=PROJECT)  # type: ignore[arg-type]
    return LockEntry("vllm", "https://example/vllm", version, commit or COMMITS[version], spec)


def store_for(fake: FakeIndex) -> ReleaseStore:
    return ReleaseStore("vllm", PROJECT, index=PackageIndex(IndexConfig(fake.url, "test")))


def index_of(fake: FakeIndex) -> PackageIndex:
    return PackageIndex(IndexConfig(fake.url, "test"))


# -- releases as commits --------------------------------------------------------------------------
def test_one_commit_per_release_parents_in_version_order(fake_index: FakeIndex) -> None:
    store = store_for(fake_index)
    commits = {v: store.ensure_release(v) for v in ("0.1.0", "0.2.0", "0.3.0")}
    repo = store.repo
    assert repo.tags("v*") == ["v0.1.0", "v0.2.0", "v0.3.0"]
    assert repo.text("rev-list", "--first-parent", "v0.3.0").split() == [
        commits["0.3.0"],
        commits["0.2.0"],
        commits["0.1.0"],
    ]
    assert repo.read_file("v0.2.0", "vllm/core.py") == b"VERSION = '0.2.0'\n"
    assert repo.read_file("v0.2.0", "PKG-INFO") is None
    assert not [p for p in repo.ls_tree("v0.2.0") if "egg-info" in p]
    assert repo.ls_tree("v0.2.0")["README.md"][0] == "100755"


def test_commit_message_names_release_and_upstream_commit(fake_index: FakeIndex) -> None:
    store = store_for(fake_index)
    store.ensure_release("0.1.0")
    message = store.repo.commit_message("v0.1.0")
    assert message.splitlines()[0] == f"vllm 0.1.0 (upstream commit {COMMITS['0.1.0']})"
    assert "Source release fake_vllm-0.1.0.tar.gz sha256 " in message
    assert message.splitlines()[-1] == f"Upstream-Commit: {COMMITS['0.1.0']}"
    assert store.upstream_commit("0.1.0") == COMMITS["0.1.0"]


def test_a_fetched_release_needs_no_network(fake_index: FakeIndex) -> None:
    store = store_for(fake_index)
    first = store.ensure_release("0.2.0")
    fake_index.stop()
    served = len(fake_index.requests)
    assert store_for(fake_index).ensure_release("0.2") == first
    assert fetch(entry_for("0.2.0"), index=index_of(fake_index)).local_commit == first
    assert len(fake_index.requests) == served


def test_two_fetches_at_once_commit_a_release_once(fake_index: FakeIndex) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def ensure(_: int) -> str:
        with store_for(fake_index) as store:
            return store.ensure_release("0.2.0")

    with ThreadPoolExecutor(4) as pool:
        commits = set(pool.map(ensure, range(4)))
    assert len(commits) == 1
    downloads = [r for r in fake_index.requests if r.endswith(".tar.gz")]
    assert len(downloads) == 1  # the others waited, then found the tag


def test_older_release_fetched_later(fake_index: FakeIndex) -> None:
    store = store_for(fake_index)
    newest = store.ensure_release("0.3.0")
    oldest = store.ensure_release("0.1.0")
    middle = store.ensure_release("0.2.0")
    assert store.repo.text("rev-list", "--parents", "-1", oldest).split() == [oldest]
    assert store.repo.text("rev-list", "--parents", "-1", middle).split() == [middle, oldest]
    assert store.repo.resolve("v0.3.0") == newest  # tags never move


def test_same_release_same_commit_anywhere(
    fake_index: FakeIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_index.json_pages = True
    fake_index.files[0].upload_time = "2026-03-11T01:36:21Z"
    ids = []
    for name in ("a", "b"):
        monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / name))
        ids.append(store_for(fake_index).ensure_release("0.1.0"))
        assert Cache.current().root == tmp_path / name
    assert ids[0] == ids[1]
    store = store_for(fake_index)
    assert store.repo.text("log", "-1", "--format=%at %an", "v0.1.0") == "1773192981 patchkit"


def test_missing_release_is_a_source_error(fake_index: FakeIndex) -> None:
    with pytest.raises(SourceError, match=f"{PROJECT} 0.9.0 has no source release"):
        store_for(fake_index).ensure_release("0.9.0")
    assert store_for(fake_index).repo.tags() == []


def test_available_releases(fake_index: FakeIndex) -> None:
    index = index_of(fake_index)
    assert available_releases(entry_for(), index=index) == ["0.1.0", "0.2.0", "0.3.0"]
    with_pre = available_releases(entry_for(), True, index=index)
    assert with_pre == ["0.1.0", "0.2.0", "0.3.0rc1", "0.3.0"]


# -- fetch and worktrees ------------------------------------------------------------------------
def test_fetch_makes_the_shared_tree_at_the_release(fake_index: FakeIndex) -> None:
    tree = fetch(entry_for("0.2.0"), index=index_of(fake_index))
    assert tree.path == Cache.current().root / "trees" / "vllm"
    assert (tree.path / "vllm/core.py").read_text() == "VERSION = '0.2.0'\n"
    assert (tree.target, tree.version, tree.upstream_commit) == ("vllm", "0.2.0", COMMITS["0.2.0"])
    with GitRepo(tree.path) as repo:
        assert repo.head() == tree.local_commit
        assert repo.dirty_paths() == []


def test_fetch_refuses_a_commit_mismatch(fake_index: FakeIndex) -> None:
    entry = entry_for("0.2.0", commit="abcdef0123")
    with pytest.raises(ConfigError, match=r"upstream commit 2222222bbbbbbb, but upstream\.lock"):
        fetch(entry, index=index_of(fake_index))
    assert not (Cache.current().root / "trees" / "vllm").exists()


def test_fetch_accepts_abbreviated_and_g_prefixed_commits(fake_index: FakeIndex) -> None:
    entry = entry_for("0.2.0", commit="g2222222b")
    assert fetch(entry, index=index_of(fake_index)).upstream_commit == COMMITS["0.2.0"]


def test_fetch_another_version_moves_a_clean_tree(fake_index: FakeIndex) -> None:
    index = index_of(fake_index)
    first = fetch(entry_for("0.1.0"), index=index)
    moved = fetch(entry_for("0.1.0"), version="0.3.0rc1", index=index)
    assert moved.path == first.path
    assert (moved.path / "vllm/core.py").read_text() == "VERSION = '0.3.0rc1'\n"
    assert moved.upstream_commit == COMMITS["0.3.0rc1"]  # not checked against the lock


def test_a_tree_with_local_changes_is_not_moved(fake_index: FakeIndex) -> None:
    index = index_of(fake_index)
    tree = fetch(entry_for("0.1.0"), index=index)
    (tree.path / "vllm/core.py").write_text("patched\n")
    with pytest.raises(TreeError, match=rf"{tree.path} has local changes \(vllm/core.py\)"):
        fetch(entry_for("0.2.0"), index=index)
    assert (tree.path / "vllm/core.py").read_text() == "patched\n"
    assert fetch(entry_for("0.1.0"), index=index).path == tree.path  # same release: left as is


def test_a_foreign_directory_is_not_taken_over(fake_index: FakeIndex) -> None:
    shared = Cache.current().root / "trees" / "vllm"
    shared.mkdir(parents=True)
    (shared / "mine.txt").write_text("user data\n")
    with pytest.raises(TreeError, match="is not a worktree of"):
        fetch(entry_for("0.1.0"), index=index_of(fake_index))
    assert (shared / "mine.txt").read_text() == "user data\n"


def test_fresh_worktree_elsewhere(fake_index: FakeIndex, tmp_path: Path) -> None:
    store = store_for(fake_index)
    path = store.fresh_worktree("0.1.0", tmp_path / "scratch")
    assert (path / "vllm/core.py").read_text() == "VERSION = '0.1.0'\n"
    with pytest.raises(TreeError, match="already exists and is not empty"):
        store.fresh_worktree("0.2.0", path)
    store.remove_tree(path)
    assert not path.exists()


# -- git and path sources -------------------------------------------------------------------------
def upstream_repo(tmp_path: Path) -> tuple[Upstream, str]:
    up = Upstream(tmp_path / "vllm-src")
    return up, up.commit({"vllm/core.py": "VERSION = 'git'\n"}, "first")


def test_git_source_fetched_once(tmp_path: Path) -> None:
    up, commit = upstream_repo(tmp_path)
    entry = entry_for("0.2.0", commit=commit[:9], kind=SourceKind.GIT, url=str(up.path))
    tree = fetch(entry)
    assert tree.local_commit == tree.upstream_commit == commit
    assert (tree.path / "vllm/core.py").read_text() == "VERSION = 'git'\n"
    os.rename(up.path, tmp_path / "gone")  # the remote is gone: the cache suffices
    assert fetch(entry).local_commit == commit


def test_git_source_unknown_commit(tmp_path: Path) -> None:
    up, _ = upstream_repo(tmp_path)
    entry = entry_for("0.2.0", commit="deadbeef00", kind=SourceKind.GIT, url=str(up.path))
    with pytest.raises(SourceError, match=f"deadbeef00 is not in {up.path}"):
        fetch(entry)


def test_path_source_is_the_users_checkout(tmp_path: Path) -> None:
    up, commit = upstream_repo(tmp_path)
    entry = entry_for("0.2.0", commit=commit, kind=SourceKind.PATH, path=str(up.path))
    assert fetch(entry).path == up.path.resolve()
    wrong = entry_for("0.2.0", commit="1234567", kind=SourceKind.PATH, path=str(up.path))
    with pytest.raises(ConfigError, match=r"but upstream\.lock pins vllm 0\.2\.0 at 1234567"):
        fetch(wrong)
    with pytest.raises(SourceError, match="patchkit does not move it"):
        fetch(entry, version="0.3.0")


# -- the real thing -------------------------------------------------------------------------------
@pytest.mark.upstream
def test_real_flashinfer_release(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", REAL_CACHE)
    commit = "70b142b75b46aa56e7f675a8e6ec1a977352c91f"
    entry = LockEntry(
        "flashinfer",
        "https://github.com/flashinfer-ai/flashinfer",
        "0.6.6",
        commit,
        SourceSpec(SourceKind.INDEX, package="flashinfer-python"),
    )
    started = time.monotonic()
    tree = fetch(entry)  # the index pip is configured with, resolved only if needed
    print(f"flashinfer 0.6.6 fetched in {time.monotonic() - started:.1f}s into {tree.path}")
    assert (tree.path / "include/flashinfer/utils.cuh").is_file()
    assert tree.upstream_commit == commit
    assert not (tree.path / "PKG-INFO").exists()
