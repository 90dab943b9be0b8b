"""Hermetic fixtures: a fresh HOME and cache, fixed git identity and dates, and small builders
for upstream histories and patch projects."""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from testing.builders import Upstream

# Taken before the hermetic fixture points PATCHKIT_CACHE and HOME elsewhere: tests on real
# source releases keep them in the real cache (outside the repository), so runs reuse them.
REAL_CACHE = os.environ.get("PATCHKIT_CACHE") or platformdirs.user_cache_dir("patchkit")
PROJECT_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in list(os.environ):
        if key.startswith("GIT_") and key != "GIT_CONFIG_NOSYSTEM":
            monkeypatch.delenv(key)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Person\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    if "PATCHKIT_REAL_CACHE" not in os.environ:
        monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[Upstream]:
    yield Upstream(tmp_path / "upstream")


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def real_cache(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Use the real cache, for tests on real upstream source releases (marked upstream)."""
    monkeypatch.setenv("PATCHKIT_CACHE", REAL_CACHE)
    return Path(REAL_CACHE)


@pytest.fixture
def real_tree(real_cache: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A throwaway worktree of a real target at its locked release: ``real_tree("vllm")``."""
    from patchkit.project.load import load_project
    from patchkit.upstream.sources import fetch

    def make(target: str) -> Path:
        entry = load_project(PROJECT_ROOT).entry(target)
        return fetch(entry, into=tmp_path / target).path

    return make


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite the inline expected text of golden tests instead of comparing (testing/golden.py)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on real upstream source releases is marked ``upstream`` (so ``-m "not upstream"``
    runs the fast tests alone), whether it says so or only asks for the real cache."""
    for item in items:
        if "real_cache" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.upstream)


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local Ray cluster for this test session (tests marked ``ray``): 2 CPUs, 2 logical GPUs
    and two fake GPU kinds, H100 and B200. Workers get this checkout's patchkit and a cache of
    their own (this checkout first on their path: quicker than shipping it as ``py_modules``, as
    ``cluster.connect`` does for a real cluster). Yields the address to pass as ``--ray``. Ray
    must be installed (CI installs it)."""
    import ray

    cache = tmp_path_factory.mktemp("ray-cache")
    ray.init(
        num_cpus=2,
        num_gpus=2,
        resources={"accelerator_type:H100": 1, "accelerator_type:B200": 1},
        runtime_env={"env_vars": {"PATCHKIT_CACHE": str(cache), "PYTHONPATH": str(PROJECT_ROOT)}},
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        yield "auto"
    finally:
        ray.shutdown()
