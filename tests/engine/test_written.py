"""What is written is what the diff says: partly upstreamed ports the rest, a diff's content
wins over its ``index`` line, lost hunks and modes patchkit never writes are refused."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from patchkit.cli import port as port_cli
from patchkit.errors import MalformedPatch, PatchFailed, UnsafePathError, UnsupportedChange
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream, run_git, snapshot

TEXT = "".join(f"line {i}\n" for i in range(1, 31))


@pytest.fixture
def up(tmp_path: Path) -> Upstream:
    upstream = Upstream(tmp_path / "up")
    upstream.commit({"a.txt": TEXT, "b.txt": "keep\n"}, "base")
    return upstream


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    port_cli.add_arguments(parser)
    return port_cli.run(parser.parse_args(list(argv)))


def test_partly_upstreamed_applies_the_rest_and_refreshes(up: Upstream, tmp_path: Path) -> None:
    patched = TEXT.replace("line 3\n", "line three\n").replace("line 25\n", "line 25b\n")
    patch = tmp_path / "two.patch"
    patch.write_bytes(up.diff_of({"a.txt": patched}))
    base = up.head()
    up.commit({"a.txt": "top\n" + TEXT.replace("line 3\n", "line three\n")})
    refreshed = tmp_path / "still.patch"
    assert (
        cli(str(patch), "--base", base, "--checkout", str(up.path), "--refreshed", str(refreshed))
        == 0
    )
    assert (up.path / "a.txt").read_text() == "top\n" + patched
    still = refreshed.read_text()
    assert "+line 25b" in still and "three" not in still


def test_lost_hunk_is_a_malformed_patch_and_nothing_is_written(
    up: Upstream, tmp_path: Path
) -> None:
    patched = TEXT.replace("line 3\n", "line three\n").replace("line 25\n", "line 25b\n")
    diff = up.diff_of({"a.txt": patched}).decode()
    second = diff.index("@@ -22")
    patch = tmp_path / "lost.patch"
    patch.write_text(diff[:second] + diff[second:].replace("@@ -22,7 +22,7 @@", "@ -22,7 +22,7", 1))
    before = snapshot(up.path)
    with pytest.raises(MalformedPatch, match=r"lost.patch.*a\.txt") as info:
        port(patch_file=patch, base_commit=up.head(), checkout=up.path)
    assert info.value.exit_code == 6
    assert snapshot(up.path) == before


def test_hunks_that_disagree_with_the_index_line_are_not_applied(
    up: Upstream, tmp_path: Path
) -> None:
    diff = up.diff_of({"a.txt": TEXT.replace("line 3\n", "line three\n")}).decode()
    patch = tmp_path / "edited.patch"
    patch.write_text(diff.replace("+line three", "+line THREE"))  # edited by hand
    before = snapshot(up.path)
    with pytest.raises(PatchFailed, match="failed"):
        cli(str(patch), "--base", up.head(), "--checkout", str(up.path))
    report = port(patch_file=patch, base_commit=up.head(), checkout=up.path)
    assert report.outcome is Outcome.FAILED and "index line" in report.result.details[0].reason
    assert snapshot(up.path) == before


def test_a_deletion_whose_hunks_cover_part_of_the_file_deletes_nothing(
    up: Upstream, tmp_path: Path
) -> None:
    (up.path / "a.txt").unlink()
    diff = run_git(up.path, "diff", "--full-index").decode()
    run_git(up.path, "checkout", "-q", "--", ".")
    assert "deleted file mode" in diff
    header, body = diff.split("@@ -1,30 +0,0 @@\n")
    kept = "".join(body.splitlines(keepends=True)[:5])  # the hunk now removes 5 lines
    patch = tmp_path / "delete.patch"
    patch.write_text(header + "@@ -1,5 +0,0 @@\n" + kept)
    report = port(patch_file=patch, base_commit=up.head(), checkout=up.path)
    assert report.outcome is Outcome.FAILED and "disagree" in report.result.details[0].reason
    assert (up.path / "a.txt").read_text() == TEXT


def test_setuid_mode_is_refused(up: Upstream, tmp_path: Path) -> None:
    patch = tmp_path / "suid.patch"
    patch.write_text("diff --git a/b.txt b/b.txt\nold mode 100644\nnew mode 104755\n")
    with pytest.raises(UnsupportedChange, match="mode 104755") as info:
        port(patch_file=patch, base_commit=up.head(), checkout=up.path)
    assert info.value.exit_code == 6
    assert not os.stat(up.path / "b.txt").st_mode & 0o4000


def test_a_symlink_out_of_the_tree_is_refused(up: Upstream, tmp_path: Path) -> None:
    patch = tmp_path / "link.patch"
    patch.write_text(
        "diff --git a/link b/link\nnew file mode 120000\nindex 0000000..1111111\n"
        "--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    before = snapshot(up.path)
    with pytest.raises(UnsafePathError, match=r"symbolic link link -> '/etc/passwd': .*absolute"):
        cli(str(patch), "--base", up.head(), "--checkout", str(up.path))
    assert snapshot(up.path) == before and not os.path.lexists(up.path / "link")
