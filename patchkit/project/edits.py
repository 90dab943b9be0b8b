"""The project's TOML files edited as text with tomlkit, so a person's comments and layout stay:
new metadata, a set's series appended to. The writer (:mod:`patchkit.project.writer`) writes what
these return; nothing here touches a file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import tomlkit


def new_toml(fields: Mapping[str, Any]) -> bytes:
    """A new TOML file of ``fields`` in their order (a mapping inside becomes a table)."""
    doc = tomlkit.document()
    doc.update(fields)
    return tomlkit.dumps(doc).encode()


def appended_series(manifest: bytes, ids: Sequence[str]) -> bytes:
    """A set's ``patchset.toml`` with ``ids`` appended to its series."""
    doc = tomlkit.parse(manifest.decode())
    series = doc["patchset"]["series"]
    for patch_id in ids:
        series.append(patch_id)
    return tomlkit.dumps(doc).encode()
