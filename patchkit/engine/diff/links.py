"""A diff's part for a symbolic link (mode 120000): created, retargeted, renamed or deleted as a
whole, never placed or merged.

A link's content is its target, one line without a newline (as git keeps it), so there is
nothing to place: the target the tree has is the one the diff expects (the change is made),
the one it gives (already upstream), or another (a conflict naming both). Whether the target
may be written at all is :mod:`patchkit.workspace.links`' policy: its text is checked when the
diff is read (``check``), and on disk before anything is written (``workspace.places``).
"""

from __future__ import annotations

from patchkit.engine.diff.parse import FilePatch
from patchkit.engine.diff.result import FileResult, Reader, corrupt, stopped
from patchkit.errors import shown
from patchkit.gitrepo import blob_id
from patchkit.outcome import FileChange, Outcome, Step
from patchkit.workspace.links import LINK


def apply_link(fp: FilePatch, read: Reader) -> FileResult:
    """The link part ``fp`` on the tree as ``read`` gives it (a link read as its target)."""
    if fp.binary:
        return stopped(Outcome.FAILED, fp.path, "binary", "binary changes are not applied")
    old = b"".join(line for hunk in fp.hunks for line in hunk.old)
    new = b"".join(line for hunk in fp.hunks for line in hunk.new)
    current = read(fp.old_path) if fp.old_path else read(fp.path)
    if fp.old_path is None:  # created
        if fp.new_blob and not blob_id(new).startswith(fp.new_blob):
            return corrupt(fp, f"its hunk does not make blob {fp.new_blob[:12]} as its index says")
        return _to(fp, None, current, new)
    if not fp.hunks:  # renamed, the target kept
        old = new = current if current is not None else b""
    if fp.new_path is None:  # deleted
        return _to(fp, old, current, None)
    if fp.new_path != fp.old_path and read(fp.new_path) is not None:
        why = f"the patch renames {fp.old_path} to {fp.new_path}, but {fp.new_path} already exists"
        return stopped(Outcome.CONFLICT, fp.path, "rename", why)
    return _to(fp, old, current, new)


def _to(fp: FilePatch, old: bytes | None, current: bytes | None, new: bytes | None) -> FileResult:
    """``current`` (the link as the tree has it; None: nothing there) made ``new`` (None: no
    link) where the diff expects ``old``."""
    renamed = fp.old_path if fp.old_path and fp.old_path != fp.path else None
    if current == old:
        change = FileChange(fp.path, new, mode=LINK if new is not None else None, old_path=renamed)
        return FileResult(Outcome.APPLIED, Step.EXACT, change)
    if current == new and not renamed:
        return FileResult(Outcome.UPSTREAMED, Step.PROBE)
    if current is None:
        why = f"{fp.old_path} does not exist in the tree"
        return stopped(Outcome.GONE, fp.path, "symbolic link", why)
    expected = "nothing there" if old is None else f"a link to {shown(old)}"
    why = f"the patch expects {expected}, but the tree has {shown(current[:100])} there"
    return stopped(Outcome.CONFLICT, fp.path, "symbolic link", why, current)
