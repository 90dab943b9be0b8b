"""Whether a file patchkit wrote was edited since: one rule for apply, record, status and reset."""

from __future__ import annotations

from patchkit.workspace.state import FileRecord
from patchkit.workspace.tree import sha256


def test_a_file_is_edited_when_it_is_not_what_patchkit_left() -> None:
    left = FileRecord("a.py", None, None, sha256(b"new\n"), 0o100644)
    assert not left.edited(b"new\n")
    assert left.edited(b"edited\n")
    assert left.edited(None)  # deleted since


def test_a_file_patchkit_deleted_is_edited_when_it_is_back() -> None:
    deleted = FileRecord("a.py", sha256(b"old\n"), 0o100644, None, None)
    assert not deleted.edited(None)
    assert deleted.edited(b"old\n")
