"""The cache is not trusted blindly: a cache directory (or a directory or key in it) that another
user owns or can write is refused with exit 2, naming it and the fix; names from config files
never leave it; sealed entries are believed only under this cache's own key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchkit.cache import Cache
from patchkit.errors import CacheUntrusted, ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _patchkit(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "patchkit", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PATCHKIT_CACHE": str(cache)},
    )


def test_a_cache_others_can_write_is_refused_naming_the_fix(tmp_path: Path) -> None:
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    cache.chmod(0o777)
    proc = _patchkit(cache, "cache")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert str(cache) in proc.stderr and "writable by other users" in proc.stderr
    assert f"chmod go-w {cache}" in proc.stderr and "PATCHKIT_CACHE" in proc.stderr
    cache.chmod(0o755)
    assert _patchkit(cache, "cache").returncode == 0


def test_a_directory_in_the_cache_others_can_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "c"))
    rewrites = tmp_path / "c" / "rewrites"
    rewrites.mkdir(parents=True)
    rewrites.chmod(0o775)
    with pytest.raises(CacheUntrusted, match="rewrites is writable by other users"):
        Cache.current().rewrites("x.json")


def test_a_cache_another_user_owns_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "theirs"))
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    with pytest.raises(CacheUntrusted, match="not to you") as refused:
        Cache.current()
    assert str(tmp_path / "theirs") in refused.value.message
    assert refused.value.exit_code == 2


def test_made_directories_are_never_group_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "fresh"))
    old = os.umask(0o002)
    try:
        made = Cache.current().export("vllm", "some-patch")
    finally:
        os.umask(old)
    for path in (tmp_path / "fresh", made.parent, made):
        assert path.stat().st_mode & 0o022 == 0


def test_names_from_config_stay_one_segment_of_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "c"))
    cache = Cache.current()
    for bad in ("../../x", "v1/../../..", "..", "", "a\0b"):
        with pytest.raises(ConfigError, match="cannot name a file in patchkit's cache"):
            cache.rebase(bad)
    assert cache.rebase("vllm-0a1b") == tmp_path / "c" / "rebase" / "vllm-0a1b"


def test_seals_hold_under_the_caches_own_key_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "c"))
    cache = Cache.current()
    seal = cache.seal(b"payload")
    assert cache.sealed(b"payload", seal) and not cache.sealed(b"payl0ad", seal)
    key = tmp_path / "c" / "key"
    assert key.stat().st_mode & 0o777 == 0o600
    other = Cache(tmp_path / "other")
    other.check()
    assert not other.sealed(b"payload", seal)  # another cache's key: not believed


def test_a_key_others_can_read_is_refused(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    cache.check()
    cache.seal(b"x")
    (tmp_path / "c" / "key").chmod(0o644)
    with pytest.raises(CacheUntrusted, match="is not yours alone"):
        Cache(tmp_path / "c").seal(b"x")
