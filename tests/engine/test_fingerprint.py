"""The engine's fingerprint keys matrix cells and cached rewrite runs: every module under
patchkit/engine/ (structure/ included) and the parser libraries' versions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import patchkit.engine
from patchkit.engine import fingerprint
from patchkit.engine.rewrite import cache
from patchkit.matrix import cells
from patchkit.model import LockEntry, SourceKind, SourceSpec
from patchkit.upstream.history import Point

ENGINE = Path(patchkit.engine.__file__).parent


def test_the_fingerprint_covers_every_engine_module_structure_included(tmp_path: Path) -> None:
    copy = tmp_path / "engine"
    shutil.copytree(ENGINE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert fingerprint.compute(copy) == fingerprint.engine_fingerprint()

    scopes = copy / "structure" / "scopes.py"
    scopes.write_bytes(scopes.read_bytes() + b"# a changed scope rule\n")

    assert fingerprint.compute(copy) != fingerprint.engine_fingerprint()


def test_a_parser_library_version_is_part_of_the_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = fingerprint.compute(ENGINE)
    real = fingerprint.version

    def newer(distribution: str, module: str) -> str:
        return "99.0" if distribution == "tree-sitter-cpp" else real(distribution, module)

    monkeypatch.setattr(fingerprint, "version", newer)

    assert fingerprint.compute(ENGINE) != before


def test_versions_are_read_as_installed() -> None:
    from importlib import metadata

    for distribution, module in fingerprint.LIBRARIES:
        assert fingerprint.version(distribution, module) == metadata.version(distribution)
    assert fingerprint.version("no-such-dist", "no_such_module_here") == "absent"


def test_cell_and_rewrite_cache_keys_change_with_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entry = LockEntry(
        "demo", "https://example.com/demo", "1.0", "c" * 40, SourceSpec(SourceKind.GIT)
    )
    base, point = Point("1.0", "a" * 40), Point("1.1", "b" * 40)

    def keys(engine: str) -> tuple[str, tuple[Path, Path]]:
        monkeypatch.setattr(cells, "engine_fingerprint", lambda: engine)
        monkeypatch.setattr(cache, "engine_fingerprint", lambda: engine)
        cell = cells.cell_key(entry, base, point, ())
        inputs = cache._inputs("m" * 64, "a.py", ("R",), b"x = 1\n")
        return cell, cache._cache_files(inputs)

    assert keys("1" * 64) == keys("1" * 64)
    assert keys("1" * 64)[0] != keys("2" * 64)[0]
    assert keys("1" * 64)[1] != keys("2" * 64)[1]
