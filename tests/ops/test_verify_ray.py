"""verify --ray on a local Ray cluster with two fake GPU kinds: tasks land only where their
resources exist, a kind no node has is not run (never a hang), a dying worker is retried once
and then reported, and the records equal a local run's."""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from patchkit.ops.verify import verify
from patchkit.ops.verify_bench import Unpatched
from patchkit.ops.verify_ray import TaskResult, VerifyTask, run_task, verify_on_ray
from patchkit.project.load import load_project
from patchkit.project.lock import load_lock
from patchkit.verification.env import LocalRunner
from patchkit.verification.records import Record, load_records
from testing.builders import Scenario

pytestmark = pytest.mark.ray

UPSTREAM: dict[str, str | bytes] = {
    "demo/__init__.py": "",
    "demo/calc.py": "def add(a, b):\n    return a - b\n",
}
TEST = "from demo.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, UPSTREAM)
    s.add("fix-add", {"demo/calc.py": "def add(a, b):\n    return a + b\n"})
    meta = s.set_root / "patches" / "fix-add.toml"
    meta.write_text(meta.read_text() + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_add.py"\n')
    (s.set_root / "tests").mkdir()
    (s.set_root / "tests" / "test_add.py").write_text(TEST)
    return s


def _gpu(s: Scenario) -> None:
    meta = s.set_root / "patches" / "fix-add.toml"
    meta.write_text(meta.read_text() + 'gpu = true\ngpu_kinds = ["H100", "B200", "A100"]\n')


def _same(record: Record) -> Record:
    return replace(record, time="", duration_s=0.0, unpatched_time="")


def test_records_equal_a_local_run(scenario: Scenario, ray_cluster: str) -> None:
    project = load_project(scenario.project.path)
    remote = verify_on_ray(project=project, target="demo", address=ray_cluster, record=False)
    scenario.apply()
    with contextlib.ExitStack() as stack:
        local = verify(
            tree_root=scenario.root,
            patches=project.patches("demo"),
            lock=load_lock(scenario.lock_path),
            runner=LocalRunner(),
            tree_commit=scenario.base,
            record=False,
            unpatched=Unpatched(stack, scenario.tree(), None),
        )
    assert [(r.result, r.proof) for r in remote.records] == [("passed", "proven")]
    assert [_same(r) for r in remote.records] == [_same(r) for r in local.records]


def test_tasks_land_where_their_kind_is_and_a_missing_kind_is_not_run(
    scenario: Scenario, ray_cluster: str
) -> None:
    _gpu(scenario)
    project = load_project(scenario.project.path)
    report = verify_on_ray(project=project, target="demo", address=ray_cluster)
    placed = {kind: result for _, kind, result in report.placed}
    assert placed.keys() == {"H100", "B200", "A100"}
    for kind in ("H100", "B200"):
        result = placed[kind]
        assert result is not None and result.resources.get("GPU") == 1
        assert set(k for k in result.resources if k.startswith("accelerator_type:")) == {
            f"accelerator_type:{kind}"
        }
    assert placed["A100"] is None
    missing = [r for r in report.records if r.environment.gpu == "A100"]
    assert [(r.result, r.reason.split(" (")[0]) for r in missing] == [
        ("not run", "no node with a GPU of kind A100 in the cluster")
    ]
    written = load_records(scenario.set_root)
    assert len(written) == 3  # as a local run writes them, the missing kind too


def test_a_dying_worker_is_retried_once_then_reported(
    scenario: Scenario, ray_cluster: str, tmp_path: Path
) -> None:
    project = load_project(scenario.project.path)
    marker = tmp_path / "died-once"

    def die_once(task: VerifyTask) -> TaskResult:
        if not marker.exists():
            marker.touch()
            os._exit(1)
        return run_task(task)

    def always_die(task: VerifyTask) -> TaskResult:
        os._exit(1)

    once = verify_on_ray(
        project=project, target="demo", address=ray_cluster, record=False, task=die_once
    )
    assert marker.exists() and [r.result for r in once.records] == ["passed"]
    dead = verify_on_ray(
        project=project, target="demo", address=ray_cluster, record=False, task=always_die
    )
    (record,) = dead.records
    assert record.result == "not run"
    assert record.reason.startswith("the Ray task failed after 1 retry")
