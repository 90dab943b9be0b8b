"""Ray, for work spread over many machines: connecting, what the cluster has, and gathering
task results with a worker's death as a value. Ray is an optional extra (``patchkit[ray]``) and
is imported only here, only when a command was given ``--ray`` (or ``RAY_ADDRESS``).

The driver ships its own ``patchkit`` package to the workers (a Ray ``py_modules`` runtime
environment), so every node runs the same code as the machine that asked.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError

KIND_PREFIX = "accelerator_type:"  # Ray's resource naming a node's GPU kind
RETRIES = 1  # a task whose worker dies is run once more, then reported


def address_from(option: str | None) -> str | None:
    """``--ray ADDRESS``, else ``RAY_ADDRESS``, else None (no Ray)."""
    return option or os.environ.get("RAY_ADDRESS") or None


def connect(address: str) -> Any:
    """The ``ray`` module, connected to the cluster at ``address`` ("auto", "ray://host:10001",
    "host:6379"); reused when this process is already connected."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--ray needs Ray, which is not installed",
            hint="`pip install 'patchkit[ray]'` (the same Ray version as the cluster)",
        ) from None
    if not ray.is_initialized():
        package = Path(__file__).resolve().parent
        ray.init(
            address=address,
            runtime_env={"py_modules": [str(package)]},
            log_to_driver=False,
        )
    return ray


@dataclass(frozen=True)
class Died:
    """A task that did not return: its worker died (after the retry) or Ray failed it."""

    reason: str


def kinds_in_cluster(ray: Any) -> set[str]:
    """GPU kinds some live node offers (``accelerator_type:H100`` -> "H100")."""
    kinds = set()
    for node in ray.nodes():
        if node.get("Alive"):
            kinds |= {k[len(KIND_PREFIX) :] for k in node["Resources"] if k.startswith(KIND_PREFIX)}
    return kinds


def gather(ray: Any, refs: Sequence[Any]) -> list[Any]:
    """Each task's result, in order; a task that failed is a :class:`Died` value."""
    out: list[Any] = []
    for ref in refs:
        try:
            out.append(ray.get(ref))
        except ray.exceptions.RayError as exc:
            out.append(Died(_first_line(str(exc)) or type(exc).__name__))
    return out


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
