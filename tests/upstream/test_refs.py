"""``--base`` and ``--onto`` take what people have: a release version, its tag, the upstream
commit id the lock shows, or a prefix of it — for package-index sources too."""

from __future__ import annotations

import pytest

from patchkit.errors import SourceError
from patchkit.model import LockEntry, SourceKind, SourceSpec
from patchkit.upstream.history import IndexHistory
from patchkit.upstream.index import IndexConfig, PackageIndex
from patchkit.upstream.refs import resolve_release_ref
from patchkit.upstream.sources import ReleaseStore
from testing.fake_index import COMMITS, PROJECT, FakeIndex
from testing.fake_index import fake_index as fake_index  # the fixture


def store_for(fake: FakeIndex) -> ReleaseStore:
    return ReleaseStore("vllm", PROJECT, index=PackageIndex(IndexConfig(fake.url, "test")))


def test_a_release_is_found_by_version_tag_upstream_commit_and_prefix(
    fake_index: FakeIndex,
) -> None:
    store = store_for(fake_index)
    local = {v: store.ensure_release(v) for v in ("0.1.0", "0.2.0")}
    repo = store.repo
    assert resolve_release_ref(repo, "0.2.0") == local["0.2.0"]  # the version
    assert resolve_release_ref(repo, "v0.2.0") == local["0.2.0"]  # its tag
    assert resolve_release_ref(repo, local["0.1.0"]) == local["0.1.0"]  # the local commit
    assert resolve_release_ref(repo, COMMITS["0.2.0"]) == local["0.2.0"]  # the upstream commit
    assert resolve_release_ref(repo, COMMITS["0.1.0"][:8]) == local["0.1.0"]  # a prefix of it
    assert resolve_release_ref(repo, "0.9.0") is None
    assert resolve_release_ref(repo, "abcdef0123") is None


def test_rebase_onto_an_upstream_commit_of_an_index_source(fake_index: FakeIndex) -> None:
    store = store_for(fake_index)
    store.ensure_release("0.2.0")
    entry = LockEntry(
        name="vllm",
        repository="https://example.invalid/vllm",
        version="0.1.0",
        commit=COMMITS["0.1.0"],
        source=SourceSpec(SourceKind.INDEX, package=PROJECT),
    )
    history = IndexHistory(entry, store, ["0.1.0", "0.2.0", "0.3.0"])
    assert history.resolve("0.2.0").ref == "0.2.0"
    assert history.resolve("v0.2.0").ref == "0.2.0"
    assert history.resolve(COMMITS["0.2.0"][:9]).ref == "0.2.0"
    assert history.resolve(COMMITS["0.1.0"]).ref == "0.1.0"  # the locked one
    with pytest.raises(SourceError, match="no fetched release of fake-vllm is upstream commit"):
        history.resolve(COMMITS["0.3.0"])  # not fetched yet: say how to name it instead
