"""Ray, for work spread over many machines: connecting, what the cluster has, and gathering
task results with a worker's death as a value. Ray is an optional extra (``patchkit[ray]``) and
is imported only here, only when a command was given ``--ray`` (or ``RAY_ADDRESS``).

The driver ships its own ``patchkit`` package to the workers (a Ray ``py_modules`` runtime
environment), so every node runs the same code as the machine that asked.

Nothing here waits forever: connecting gives up after ``CONNECT_TIMEOUT_S`` (an address that does
not answer, or answers without being Ray), a task after its own timeout (cancelled, reported as
:class:`Died`), and SIGINT/SIGTERM end the wait (``KeyboardInterrupt``: exit 130). A GPU task is
submitted only where a live node offers a GPU of its kind (``offers_gpu``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from patchkit.errors import ClusterUnreachable, ConfigError
from patchkit.trust.envvars import seconds

KIND_PREFIX = "accelerator_type:"  # Ray's resource naming a node's GPU kind
RETRIES = 1  # a task whose worker dies is run once more, then reported
CONNECT_TIMEOUT_S = 60.0  # PATCHKIT_RAY_CONNECT_TIMEOUT overrides it, read when connecting
POLL_S = 0.5  # how often a wait wakes up, so that signals are handled


def address_from(option: str | None) -> str | None:
    """``--ray ADDRESS``, else ``RAY_ADDRESS``, else None (no Ray)."""
    return option or os.environ.get("RAY_ADDRESS") or None


def connect(address: str, *, timeout_s: float | None = None) -> Any:
    """The ``ray`` module, connected to the cluster at ``address`` ("auto", "local": a new
    cluster on this machine, "ray://host:10001", "host:6379"); reused when this process is
    already connected. ClusterUnreachable when nothing answers within ``timeout_s``."""
    if timeout_s is None:
        timeout_s = seconds("PATCHKIT_RAY_CONNECT_TIMEOUT", CONNECT_TIMEOUT_S)
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--ray needs Ray, which is not installed",
            hint="`pip install 'patchkit[ray]'` (the same Ray version as the cluster)",
        ) from None
    if ray.is_initialized():
        return ray
    _reachable(address, timeout_s)
    package = Path(__file__).resolve().parent
    options = {"runtime_env": {"py_modules": [str(package)]}, "log_to_driver": False}
    if address == "local":
        options["include_dashboard"] = False
    if address == "local":
        # starts its processes from this thread (they die with the thread that made them):
        # nothing remote to wait for
        ray.init(address=address, **options)  # type: ignore[arg-type]
        return ray
    failed = _within(
        timeout_s,
        lambda: ray.init(address=address, **options),  # type: ignore[arg-type]
    )
    if failed is not None:
        raise ClusterUnreachable(
            f"Ray at {address}: {failed}",
            hint="start the cluster (`ray start --head`), check the address and port, or run "
            "without --ray; PATCHKIT_RAY_CONNECT_TIMEOUT sets the wait in seconds",
        )
    return ray


def _reachable(address: str, timeout_s: float) -> None:
    """A host:port address (``ray://`` too) must accept a TCP connection within the timeout:
    Ray's own client retries an unreachable one for many minutes."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local": nothing to dial
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=min(timeout_s, 10)).close()
    except OSError as exc:
        raise ClusterUnreachable(
            f"Ray at {address}: cannot connect ({exc.strerror or exc})",
            hint="start the cluster (`ray start --head`), check the address and port, or run "
            "without --ray",
        ) from None


def _within(timeout_s: float, call: Any) -> str | None:
    """Run ``call`` in a daemon thread; None once it returned, else why not (its error, or
    the timeout: the thread is left behind, the process ends regardless)."""
    errors: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # reported to the caller, never lost in the thread
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name="ray-connect", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    with interruptible():
        while not done.wait(POLL_S):  # wakes up for SIGINT/SIGTERM
            if time.monotonic() > deadline:
                return f"no answer within {timeout_s:.0f} s"
    return _first_line(str(errors[0])) or type(errors[0]).__name__ if errors else None


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGTERM ends the wait as SIGINT does (KeyboardInterrupt, exit 130), whatever handler
    Ray set; the previous handler is put back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclass(frozen=True)
class Died:
    """A task that did not return: its worker died (after the retry) or Ray failed it."""

    reason: str


def kinds_in_cluster(ray: Any) -> set[str]:
    """GPU kinds some live node offers together with a GPU (``accelerator_type:H100`` ->
    "H100")."""
    kinds = set()
    for node in _live(ray):
        if node["Resources"].get("GPU", 0) >= 1:
            kinds |= {k[len(KIND_PREFIX) :] for k in node["Resources"] if k.startswith(KIND_PREFIX)}
    return kinds


def offers_gpu(ray: Any, kind: str | None) -> bool:
    """Whether some live node has a GPU (of ``kind``, when one is named): a task asking for one
    is submitted only then, since Ray queues an infeasible task forever."""
    return any(
        node["Resources"].get("GPU", 0) >= 1
        and (kind is None or f"{KIND_PREFIX}{kind}" in node["Resources"])
        for node in _live(ray)
    )


def _live(ray: Any) -> list[dict[str, Any]]:
    return [n for n in ray.nodes() if n.get("Alive")]


def gather(ray: Any, refs: Sequence[Any], *, timeout_s: float | None = None) -> list[Any]:
    """Each task's result, in order; a task that failed, or was still running ``timeout_s``
    after the wait began (it is cancelled), is a :class:`Died` value. The wait wakes up every
    ``POLL_S`` so that SIGINT/SIGTERM end it; then the tasks are cancelled."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    pending = list(refs)
    try:
        with interruptible():
            while pending and (deadline is None or time.monotonic() < deadline):
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL_S)
    except BaseException:
        _cancel(ray, pending)
        raise
    _cancel(ray, pending)
    late = {id(r) for r in pending}
    return [
        Died(f"timed out after {timeout_s:.0f} s") if id(ref) in late else _result(ray, ref)
        for ref in refs
    ]


def _result(ray: Any, ref: Any) -> Any:
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as exc:
        return Died(_first_line(str(exc)) or type(exc).__name__)


def _cancel(ray: Any, refs: Sequence[Any]) -> None:
    for ref in refs:
        with contextlib.suppress(Exception):  # already finished, or the cluster went away
            ray.cancel(ref, force=True)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
