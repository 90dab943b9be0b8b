"""Values patchkit reads from its environment (``PATCHKIT_*``): a person or a CI file sets them,
so a value that is no value (``nan``, ``inf``, ``-1``, ``ten``) is refused with the variable's
name and what it takes, never turned into a wait that does not end or a crash."""

from __future__ import annotations

import math
import os

from patchkit.errors import SettingRefused, shown

SECONDS_MAX = 86_400.0  # a day: no wait patchkit makes is meant to be longer


def seconds(name: str, default: float, *, above_zero: bool = False) -> float:
    """The number of seconds the variable ``name`` holds (``default`` when unset or empty);
    SettingRefused unless it is a finite number from 0 (``above_zero``: more than 0, for a
    limit that must always hold) to a day."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= SECONDS_MAX or (above_zero and not value):
        least = "above 0" if above_zero else "from 0"
        raise SettingRefused(
            f"{name}={shown(raw[:40])} is refused: it must be a number of seconds {least}, at "
            f"most {SECONDS_MAX:.0f}",
            hint=f"set {name} to a number of seconds (default {default:g}), or unset it",
        )
    return value
