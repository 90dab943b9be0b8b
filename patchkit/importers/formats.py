"""Series formats other tools read, both ways: what a DEP-3 header and a ``git format-patch``
message say is parsed by :mod:`.meta`; here a patch set's metadata is written as them, for
``patchkit export-series`` (quilt ``series`` + DEP-3 patches; numbered format-patch messages
that ``git am`` applies). Output is stable: the same set gives the same bytes."""

from __future__ import annotations

from pathlib import Path

from patchkit.model import PatchMeta, UpstreamStatus
from patchkit.tomlread import read_toml

EPOCH = "Thu, 1 Jan 1970 00:00:00 +0000"
ZERO = "0" * 40


def _imported(meta: PatchMeta) -> dict[str, object]:
    table = read_toml(meta.meta_file).get("imported", {})
    return table if isinstance(table, dict) else {}


def _folded(key: str, text: str) -> str:
    """A DEP-3 field: continuation lines indented, a blank line written as `` .``."""
    first, *rest = text.strip().splitlines() or [""]
    return f"{key}: {first}\n" + "".join(f" {line}\n" if line.strip() else " .\n" for line in rest)


def dep3_header(meta: PatchMeta) -> str:
    fields = _imported(meta).get("fields", {})
    origin = fields.get("Origin", "") if isinstance(fields, dict) else ""
    out = _folded("Description", f"{meta.title}\n{meta.why}")
    if meta.author:
        out += f"Author: {meta.author}\n"
    out += f"Origin: {origin or (meta.prs[0] if meta.prs else 'vendor')}\n"
    out += "".join(f"Bug: {issue}\n" for issue in meta.issues)
    forwarded = {UpstreamStatus.LOCAL: "no"}.get(meta.status, ", ".join(meta.prs) or "yes")
    out += f"Forwarded: {forwarded}\n"
    if meta.status is UpstreamStatus.MERGED and meta.merged_in:
        out += f"Applied-Upstream: {meta.merged_in}\n"
    out += f"Patchkit-Id: {meta.id}\n"
    return out + "---\n"


def quilt_patch(meta: PatchMeta, diff: bytes) -> bytes:
    return dep3_header(meta).encode() + diff


def _author(meta: PatchMeta) -> str:
    author = meta.author.strip()
    if "<" in author and author.endswith(">"):
        return author
    return f"{author or 'patchkit'} <patchkit@localhost>"


def mail(meta: PatchMeta, diff: bytes, number: int, total: int) -> bytes:
    """One ``git format-patch`` message (zero commit id, full index) for ``git am``."""
    date = str(_imported(meta).get("date") or EPOCH)
    body = meta.why.strip()
    links = [*meta.issues, *meta.prs]
    if links:
        body += "\n\n" + "\n".join(f"Link: {link}" for link in links)
    head = (
        f"From {ZERO} Mon Sep 17 00:00:00 2001\n"
        f"From: {_author(meta)}\n"
        f"Date: {date}\n"
        f"Subject: [PATCH {number}/{total}] {meta.title}\n\n"
        f"{body}\n\nPatchkit-Id: {meta.id}\n---\n"
    )
    return head.encode() + diff + b"-- \npatchkit\n\n"


def mail_name(number: int, meta: PatchMeta) -> str:
    return f"{number:04d}-{meta.id}.patch"


MARKER = ".patchkit-series"  # written into every exported directory


def is_export_dir(directory: Path) -> bool:
    """Absent, empty, or an earlier export (it holds the marker file)."""
    if not directory.exists():
        return True
    return directory.is_dir() and (not any(directory.iterdir()) or (directory / MARKER).is_file())
