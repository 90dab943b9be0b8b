"""Redoing what a mod did to one file on a release's copy of it: a replace script's
replacements (each text must be there), then its ``sed -i`` commands (each must match a line),
or an overlay's whole content."""

from __future__ import annotations

from patchkit.errors import shown
from patchkit.importers.model import FileEdits
from patchkit.importers.sed import run_sed


def redo(edits: FileEdits, content: bytes | None) -> tuple[bytes | None, list[str]]:
    """The file's new bytes, and what the edits did not find there (empty when all did)."""
    if edits.content is not None:
        return edits.content, []
    if content is None:
        return None, [f"{edits.path}: no such file"]
    text = content.decode("utf-8", "surrogateescape")
    missing = []
    for r in edits.replaces:
        if r.old not in text:
            missing.append(
                f"{edits.path}: script line {r.line}: text not found: {shown(r.old[:60])}"
            )
        text = text.replace(r.old, r.new, r.count)
    if edits.sed:
        text, unused = run_sed(edits.sed, text)
        missing += [
            f"{edits.path}: sed {c.verb} (script line {c.line}) matches no line" for c in unused
        ]
    return text.encode("utf-8", "surrogateescape"), missing
