"""show: the diff a patch makes on the locked tree, which must apply again as a patch."""

from __future__ import annotations

import os
from pathlib import Path

from patchkit.ops.apply_tree import upstream_view
from patchkit.ops.show import show
from testing.builders import Scenario

A = "alpha\nbeta\ngamma\ndelta\neps\nzeta\n"
B = A.replace("gamma", "GAMMA")


def _rename_and_edit(root: Path) -> None:
    os.rename(root / "A.txt", root / "B.txt")
    (root / "B.txt").write_text(B)


def shown(s: Scenario, patch_id: str) -> bytes:
    patches = s.patches()
    meta = next(p for p in patches if p.id == patch_id)
    blobs = s.blobs()
    try:
        return show(meta, patches[: patches.index(meta)], upstream_view(s.tree()), blobs)
    finally:
        blobs.close()


def test_shown_rename_and_edit_moves_the_file_when_applied(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"A.txt": A, "other.txt": "o\n"})
    patch = s.add_edit("mv", _rename_and_edit)
    diff = shown(s, "mv")
    assert b"diff --git a/A.txt b/A.txt\ndeleted file mode 100644\n" in diff
    assert b"+++ b/B.txt\n" in diff and b"+GAMMA\n" in diff
    patch.write_bytes(diff)  # the shown diff, used as the patch, does what the patch did
    assert [r.outcome.value for r in s.apply().results] == ["applied"]
    assert not (s.root / "A.txt").exists()
    assert s.read("B.txt") == B.encode()


def test_shown_rename_keeps_the_executable_bit(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"run.sh": "#!/bin/sh\necho one\n"})
    (s.root / "run.sh").chmod(0o755)
    s.upstream.commit({}, "make it executable")
    s.lock_to_head()

    def move(root: Path) -> None:
        os.rename(root / "run.sh", root / "go.sh")

    s.add_edit("mv", move)
    diff = shown(s, "mv")
    assert b"deleted file mode 100755\n" in diff and b"new file mode 100755\n" in diff
