"""verify --ray never waits forever: a GPU task is submitted only where a live node offers a GPU
of its kind (or any GPU when none is named), else its GPU tests are not run with the reason; an
address that does not answer is a clear error within the connect timeout; SIGTERM ends a wait.
The commands run as subprocesses: each starts (or fails to reach) a Ray of its own."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from patchkit.cluster import kinds_in_cluster, offers_gpu
from patchkit.ops.verify_ray import _gpu_for
from patchkit.project.sets import load_patchset
from testing.builders import Scenario

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM: dict[str, str | bytes] = {
    "demo/__init__.py": "",
    "demo/calc.py": "def add(a, b):\n    return a - b\n",
}
CPU_TEST = "from demo.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
GPU_TEST = (
    "def test_on_gpu():\n    raise AssertionError('a GPU test ran on a machine without one')\n"
)


class FakeRay:
    def __init__(self, *nodes: dict[str, Any]) -> None:
        self._nodes = list(nodes)

    def nodes(self) -> list[dict[str, Any]]:
        return self._nodes


CPU_NODE = {"Alive": True, "Resources": {"CPU": 8.0}}
H100_NODE = {"Alive": True, "Resources": {"CPU": 8.0, "GPU": 2.0, "accelerator_type:H100": 1.0}}
DEAD_GPU = {"Alive": False, "Resources": {"CPU": 8.0, "GPU": 1.0, "accelerator_type:B200": 1.0}}
KIND_NO_GPU = {"Alive": True, "Resources": {"CPU": 8.0, "accelerator_type:A100": 1.0}}


def test_a_gpu_is_offered_only_by_a_live_node_with_one() -> None:
    ray = FakeRay(CPU_NODE, DEAD_GPU, KIND_NO_GPU)
    assert not offers_gpu(ray, None)
    assert not offers_gpu(ray, "B200") and not offers_gpu(ray, "A100")
    assert kinds_in_cluster(ray) == set()
    both = FakeRay(CPU_NODE, H100_NODE)
    assert offers_gpu(both, None) and offers_gpu(both, "H100") and not offers_gpu(both, "B200")
    assert kinds_in_cluster(both) == {"H100"}


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, UPSTREAM)
    s.add("fix-add", {"demo/calc.py": "def add(a, b):\n    return a + b\n"})
    meta = s.set_root / "patches" / "fix-add.toml"
    meta.write_text(
        meta.read_text()
        + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_add.py"\n'
        + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_gpu.py"\ngpu = true\n'
    )
    (s.set_root / "tests").mkdir()
    (s.set_root / "tests" / "test_add.py").write_text(CPU_TEST)
    (s.set_root / "tests" / "test_gpu.py").write_text(GPU_TEST)
    return s


def test_a_gpu_task_with_no_gpu_anywhere_runs_its_cpu_tests_only(scenario: Scenario) -> None:
    (meta,) = load_patchset(scenario.set_root).patches
    assert _gpu_for(FakeRay(CPU_NODE), meta, None) is False  # on a CPU worker, not queued
    assert _gpu_for(FakeRay(CPU_NODE), meta, "H100") is None  # not submitted at all
    assert _gpu_for(FakeRay(H100_NODE), meta, "H100") is True


def _patchkit(*args: str, cwd: Path, **env: str) -> subprocess.Popen[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **env}
    environ.pop("RAY_ADDRESS", None)
    return subprocess.Popen(
        [sys.executable, "-m", "patchkit", *args],
        cwd=cwd,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _records(output: str) -> dict[str, Any]:
    return json.loads(output[output.index("{") :])


@pytest.mark.ray
def test_verify_ray_local_without_gpus_finishes_and_equals_a_local_run(
    scenario: Scenario,
) -> None:
    scenario.apply()
    project = str(scenario.project.path)
    base = ["verify", "--target", "demo", "--project", project, "--json", "--no-record"]
    start = time.monotonic()
    proc = _patchkit(*base, "--ray", "local", cwd=scenario.project.path)
    out, _ = proc.communicate(timeout=120)
    took = time.monotonic() - start
    assert proc.returncode == 0, out
    assert took < 120, f"verify --ray local took {took:.0f} s"  # < 60 s on an idle machine
    remote = _records(out)["patches"]
    local_proc = _patchkit(*base, "--checkout", str(scenario.root), cwd=scenario.project.path)
    local = _records(local_proc.communicate(timeout=120)[0])["patches"]
    (r,) = remote
    assert [(t["node"], t["result"], t["reason"]) for t in r["tests"]] == [
        ("tests/test_add.py", "passed", ""),
        ("tests/test_gpu.py", "not run", "no GPU"),
    ]
    keys = ("patch", "result", "reason", "tests", "proof", "proof_reason", "unpatched")
    assert {k: r.get(k) for k in keys} == {k: local[0].get(k) for k in keys}
    assert r["proof"] == "proven"


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (not Ray)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.ray
def test_an_unreachable_address_is_a_clear_error_within_the_timeout(scenario: Scenario) -> None:
    args = ["verify", "--target", "demo", "--project", str(scenario.project.path)]
    start = time.monotonic()
    proc = _patchkit(*args, "--ray", f"127.0.0.1:{_free_port()}", cwd=scenario.project.path)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    assert "cannot connect" in out and time.monotonic() - start < 30


@pytest.mark.ray
def test_a_silent_address_times_out_and_sigterm_ends_the_wait(
    scenario: Scenario, silent_server: int
) -> None:
    args = ["verify", "--target", "demo", "--project", str(scenario.project.path)]
    address = f"127.0.0.1:{silent_server}"
    start = time.monotonic()
    proc = _patchkit(
        *args, "--ray", address, cwd=scenario.project.path, PATCHKIT_RAY_CONNECT_TIMEOUT="5"
    )
    out, _ = proc.communicate(timeout=90)
    assert proc.returncode == 2, out
    # Ray's client either gives up by itself or is cut off at the timeout: a clear error
    # naming the address either way, well within the bound, never a wait
    assert f"Ray at {address}:" in out and time.monotonic() - start < 60
    waiting = _patchkit(
        *args, "--ray", address, cwd=scenario.project.path, PATCHKIT_RAY_CONNECT_TIMEOUT="600"
    )
    time.sleep(8)
    sent = time.monotonic()
    waiting.send_signal(signal.SIGTERM)
    out, _ = waiting.communicate(timeout=60)
    # 130: SIGTERM ended the wait; 2: this Ray's client refused the silent address by itself
    # before the signal came (Ray 2.60 asks for an auth token at once): either way it ended
    assert waiting.returncode in (130, 2), out
    assert time.monotonic() - sent < 20


def test_sigterm_ends_a_wait_for_ray_whatever_ray_does() -> None:
    """The wait itself: a connect that never returns is ended by SIGTERM as by ^C."""
    import threading

    from patchkit.cluster import _within

    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _within(600, lambda: time.sleep(60))
    timer.join()
    assert time.monotonic() - start < 10
