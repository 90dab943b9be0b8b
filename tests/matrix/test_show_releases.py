"""``patchkit show PATCH --releases``: which releases a patch works with, from its matrix row
(cells already computed are reused, not computed again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from testing.matrix import Releases


def test_show_releases_lists_each_release_and_where_it_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rel = Releases(tmp_path)
    full = rel.matrix(releases="1.0..1.4")  # computes and stores every cell
    assert full.run.computed > 0
    argv = ["show", "tail", "--project", str(rel.root), "--releases", "1.0..1.4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines()]
    assert ["1.3", "carried"] in lines and ["1.4", "conflict"] in lines
    assert "tail (locked at 1.0): works with: 1.0, 1.1, 1.2, 1.3; broke in 1.4" in out


def test_only_one_row_is_computed_and_its_cells_are_reused(tmp_path: Path) -> None:
    rel = Releases(tmp_path)
    first = rel.matrix(releases="1.0..1.4", only=["bump"])
    assert [r.patch for r in first.rows] == ["bump"] and first.run.computed == 5
    again = rel.matrix(releases="1.0..1.4", only=["bump"])
    assert again.run.computed == 0 and again.run.reused == 5


def test_a_changed_patch_metadata_computes_its_cells_again(tmp_path: Path) -> None:
    rel = Releases(tmp_path)
    rel.matrix(releases="1.0..1.2", only=["bump"])
    meta = rel.root / "patchsets" / "demo" / "patches" / "bump.toml"
    meta.write_text(meta.read_text() + 'notes = "a changed note"\n')
    again = rel.matrix(releases="1.0..1.2", only=["bump"])
    assert again.run.computed == 3 and again.run.reused == 0
