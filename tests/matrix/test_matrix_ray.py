"""matrix --ray on a local Ray cluster: the cells are Ray tasks and come out as a local run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.matrix.execute import OnRay, Serial
from patchkit.matrix.store import MemoryStore
from testing.matrix import Releases, rows

pytestmark = pytest.mark.ray


def test_cells_as_ray_tasks_equal_a_local_run(tmp_path: Path, ray_cluster: str) -> None:
    rel = Releases(tmp_path)
    here = rel.matrix(releases="v1.0..v1.4", executor=Serial(), store=MemoryStore())
    there = rel.matrix(
        releases="v1.0..v1.4", executor=OnRay(ray_cluster), store=MemoryStore(), prefetch=False
    )
    assert there.run.executor == f"ray at {ray_cluster}" and there.run.computed == 15
    assert rows(there) == rows(here)
    assert [c.detail for c in there.cells] == [c.detail for c in here.cells]
