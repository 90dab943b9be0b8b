"""The project's TOML files edited as text with tomlkit, so a person's comments and layout stay:
new metadata, a set's series appended to, a patch's ``[upstream]``, PRs, retirement and rebase
history (the lock's own edit is :func:`patchkit.project.lock.moved_lock_text`). The writer
(:mod:`patchkit.project.writer`) writes what these return; nothing here touches a file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import tomlkit
from tomlkit.items import Table


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


def with_upstream(original: bytes, wanted: Mapping[str, Any]) -> bytes | None:
    """Patch metadata with its ``[upstream]`` table set to ``wanted`` (a value None or ``[]``
    drops its key; ``related`` is an array of inline tables, one a line); None when it already
    says so."""
    doc = tomlkit.parse(original.decode())
    table = doc.get("upstream")
    if table is None:
        doc["upstream"] = table = tomlkit.table()
    if all(_plain(table.get(key)) == value for key, value in wanted.items()):
        return None
    for key, value in wanted.items():
        if value is None or value == []:
            table.pop(key, None)
        elif key == "related":
            table[key] = _inline_tables(value)
        else:
            table[key] = value
    return tomlkit.dumps(doc).encode()


def _plain(value: Any) -> Any:
    """A tomlkit value as plain Python (to compare with what is wanted)."""
    return value.unwrap() if hasattr(value, "unwrap") else value


def _inline_tables(items: list[dict[str, str]]) -> Any:
    array = tomlkit.array()
    for item in items:
        inline = tomlkit.inline_table()
        inline.update(item)
        array.append(inline)
    return array.multiline(True)


def retired(original: str, version: str, url: str | None) -> str:
    """Patch metadata with the patch retired: ``status = "merged"``, ``merged_in``, no pending
    mark, and with a PR ``[upstream]`` ``pr`` = its URL, ``state = "merged"``."""
    doc = tomlkit.parse(original)
    doc["status"] = "merged"
    doc["merged_in"] = version
    history = doc.get("history")
    if isinstance(history, Table) and "pending" in history:
        del history["pending"]
    upstream = doc.get("upstream")
    if url is not None:
        if not isinstance(upstream, Table):
            upstream = tomlkit.table()
            doc["upstream"] = upstream
        upstream["pr"] = url
    if isinstance(upstream, Table) and upstream.get("pr"):
        upstream["state"] = "merged"  # a state other than none needs a PR: only with one
    return tomlkit.dumps(doc)


def with_pr(original: bytes, url: str) -> bytes:
    """Patch metadata with ``url`` among its ``prs`` and the patch marked forwarded."""
    doc = tomlkit.parse(original.decode())
    prs = doc.get("prs")
    if prs is None:
        doc["prs"] = prs = tomlkit.array()
    if url not in prs:
        prs.append(url)
    doc["status"] = "forwarded"
    return tomlkit.dumps(doc).encode()


def with_history(
    original: str, *, merged_in: str | None, history: Mapping[str, str], pending: str | None
) -> str | None:
    """Patch metadata after a rebase: retired as merged in ``merged_in`` (when given), its
    ``[history]`` keys set, its pending mark set or (None) dropped; None if nothing changes."""
    doc = tomlkit.parse(original)
    table = doc.get("history")
    if table is None:
        table = tomlkit.table()
        doc["history"] = table
    if merged_in is not None:
        doc["status"] = "merged"
        doc["merged_in"] = merged_in
    for key, value in history.items():
        table[key] = value
    if pending is not None:
        table["pending"] = pending
    elif "pending" in table:
        del table["pending"]
    text = tomlkit.dumps(doc)
    return text if text != original else None
