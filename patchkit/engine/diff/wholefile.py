"""A diff that creates or deletes a whole file: its content against the tree's, no placement."""

from __future__ import annotations

from patchkit.engine.diff.parse import FilePatch, split_lines
from patchkit.engine.diff.result import FileResult, corrupt, stopped
from patchkit.gitrepo import blob_id
from patchkit.outcome import FileChange, Outcome, Step


def new_file(fp: FilePatch, current: bytes | None) -> FileResult:
    content = b"".join(h for hunk in fp.hunks for h in hunk.new)
    if fp.new_blob and not blob_id(content).startswith(fp.new_blob):
        return corrupt(fp, f"its hunks do not make blob {fp.new_blob[:12]} as its index line says")
    if current is None:
        mode = fp.new_mode or 0o100644
        return FileResult(Outcome.APPLIED, Step.EXACT, FileChange(fp.path, content, mode=mode))
    if current == content:
        return FileResult(Outcome.UPSTREAMED, Step.PROBE)
    why = "the patch creates this file, but it already exists with other content"
    return stopped(Outcome.CONFLICT, fp.path, "new file", why, current)


def deleted_file(fp: FilePatch, current: bytes) -> FileResult:
    """A deletion removes the file only when its hunks remove every line of it: the content
    of the diff wins over its ``index`` line."""
    expected = b"".join(h for hunk in fp.hunks for h in hunk.old)
    if current == expected:
        return FileResult(Outcome.APPLIED, Step.EXACT, FileChange(fp.path, None))
    if fp.old_blob and blob_id(current).startswith(fp.old_blob):
        return corrupt(
            fp,
            f"it deletes {fp.path}, but its hunks remove {len(split_lines(expected))} of its "
            f"{len(split_lines(current))} lines; its index line and its hunks disagree",
        )
    why = "the patch deletes this file, but its content differs from what the patch expects"
    return stopped(Outcome.CONFLICT, fp.path, "deleted file", why)
