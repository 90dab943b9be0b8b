"""``patchkit cache``: sizes per kind; ``cache prune`` removes what nothing refers to and keeps
the rest. A release archive is not kept once its release is committed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patchkit.cache import Cache
from patchkit.cli import main
from patchkit.gitrepo import GitRepo
from testing.builders import run_git
from testing.fake_index import FakeIndex
from testing.fake_index import fake_index as fake_index  # the fixture
from tests.upstream.test_sources import store_for


def _cache_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capsys.readouterr()
    assert main(["cache", *args, "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def _populate(root: Path, project: Path) -> None:
    repo = root / "repos" / "demo.git"
    GitRepo.init(repo, bare=True).close()
    work = root.parent / "demo-work"
    work.mkdir()
    run_git(work, "init", "-q")
    (work / "f").write_text("x\n")
    run_git(work, "add", "f")
    run_git(work, "commit", "-qm", "demo 1.0\n\nSource release demo-1.0.tar.gz sha256 abc")
    run_git(work, "push", "-q", str(repo), "HEAD:refs/tags/v1.0")
    downloads = root / "downloads"
    downloads.mkdir()
    (downloads / "demo-1.0.tar.gz").write_bytes(b"committed" * 100)
    (downloads / "demo-2.0.tar.gz").write_bytes(b"not yet")
    (downloads / "demo-3.0.tar.gz.part").write_bytes(b"half")
    for name, owner in (("demo-gone", "/no/such/project"), ("demo-here", str(project))):
        (root / "rebase" / name).mkdir(parents=True)
        (root / "rebase" / name / "state.json").write_text(json.dumps({"project": owner}))
    (root / "rebase" / "project-old").mkdir()
    (root / "locks").mkdir()
    (root / "locks" / "dead.holder.json").write_text(json.dumps({"pid": 2**22 + 12345}))
    (root / "locks" / "live.holder.json").write_text(json.dumps({"pid": os.getpid()}))


def test_cache_shows_kinds_and_prune_removes_only_what_nothing_refers_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Cache.current().root
    _populate(root, tmp_path)
    shown = _cache_json(capsys)
    kinds = shown["kinds"]
    assert isinstance(kinds, dict) and {"repos", "downloads", "rebase", "locks"} <= set(kinds)
    assert kinds["downloads"]["bytes"] == 900 + 7 + 4
    pruned = _cache_json(capsys, "prune")["pruned"]
    removed = " ".join(pruned["removed"])  # type: ignore[index]
    left = {p.relative_to(root).as_posix() for p in root.rglob("*") if "repos" not in p.parts}
    assert "demo-1.0.tar.gz" in removed and "downloads/demo-1.0.tar.gz" not in left
    assert "downloads/demo-2.0.tar.gz" in left  # not committed: still needed
    assert "downloads/demo-3.0.tar.gz.part" not in left
    assert "rebase/demo-gone" not in left and "rebase/demo-here/state.json" in left
    assert "rebase/project-old" not in left
    assert "locks/dead.holder.json" not in left and "locks/live.holder.json" in left
    assert pruned["freed_bytes"] >= 900  # type: ignore[index]
    assert _cache_json(capsys, "prune")["pruned"]["removed"] == []  # type: ignore[index]


def test_a_committed_release_keeps_no_archive(fake_index: FakeIndex) -> None:
    with store_for(fake_index) as store:
        store.ensure_release("0.2.0")
    downloads = Cache.current().root / "downloads"
    assert not [p for p in downloads.iterdir() if p.name.endswith(".tar.gz")]
