"""What is planted where patchkit expects a file or a directory. A link in the cache that
leads out of it is refused (exit 2 naming it), never written through. A FIFO (or a device) planted where patchkit expects a file — patch metadata, the tree's
state, a file of the target tree, the cache's key or a sealed cache entry — is refused or
ignored at once, never waited on: opening a FIFO for reading blocks until a writer comes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.cache import Cache
from patchkit.errors import CacheUntrusted
from patchkit.fileio import read_file
from testing.builders import Scenario, run_git, snapshot
from tests.hostile.common import run, scenario


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path, 0o600)


def test_read_file_refuses_a_fifo_and_a_device_without_waiting(tmp_path: Path) -> None:
    fifo(tmp_path / "f")
    with pytest.raises(OSError, match="not a regular file"):
        read_file(tmp_path / "f")
    with pytest.raises(OSError, match="not a regular file"):
        read_file(Path("/dev/zero"))  # never ends: refused before reading


def test_patch_metadata_that_is_a_fifo_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    meta = s.set_root / "patches" / "p1.toml"
    fifo(meta)
    assert run(s, "status") == 2
    err = capsys.readouterr().err
    assert str(meta) in err and "not a regular file" in err


def test_a_state_file_that_is_a_fifo_is_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    state = s.root / ".git" / "patchkit" / "state.json"
    fifo(state)
    before = snapshot(s.root)
    assert run(s, "status") == 4
    assert run(s, "apply") == 4
    assert "state.json" in capsys.readouterr().err
    assert snapshot(s.root) == before


def test_a_tree_file_replaced_by_a_fifo_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    fifo(s.root / "a.txt")
    assert run(s, "apply", "--allow-dirty") in (4, 6)
    said = capsys.readouterr()
    assert "a.txt: cannot be read: not a regular file" in said.out + said.err
    assert (s.root / "a.txt").is_fifo()


def test_a_cache_key_or_sealed_entry_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    cache = Cache.current()
    entry = cache.toml("planted.json")
    cache.write_sealed(entry, b"{}")
    assert cache.read_sealed(entry) == b"{}"
    fifo(entry)
    assert cache.read_sealed(entry) is None  # no entry: recomputed
    assert run(s, "status") == 0
    fifo(cache.root / "key")
    cache._key = None
    with pytest.raises(CacheUntrusted, match="key"):
        cache.seal(b"x")


def test_a_cache_directory_replaced_by_a_link_out_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    cache = Cache.current()
    (cache.root / "toml").symlink_to(outside)
    (cache.root / "rewrites").symlink_to(outside)
    assert run(s, "status") == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert not list(outside.iterdir())


def test_a_link_in_the_tree_that_leads_out_is_named_as_the_tree_s_not_the_patch_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path / "work", {"a.txt": "one\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (s.root / "out").symlink_to(outside)
    run_git(s.root, "add", "out")
    run_git(s.root, "commit", "-q", "-m", "link")
    s.lock_to_head()
    diff = b"--- /dev/null\n+++ b/out/planted.txt\n@@ -0,0 +1 @@\n+x\n"
    s.project.add_diff("p1", diff)
    assert run(s, "apply") == 5
    err = capsys.readouterr().err
    assert "out/planted.txt" in err and "a symbolic link in the tree" in err
    assert not list(outside.iterdir())
