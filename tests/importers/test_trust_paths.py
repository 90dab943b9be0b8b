"""import on hostile sources: what it writes carries no forged trailer and no local path, and
it never follows names or links out of the source or the project."""

from __future__ import annotations

from pathlib import Path

from patchkit.patchset import read_toml
from testing.builders import run_git
from tests.importers.conftest import MODEL_V12, Releases3


def _diff_at_lock(releases3: Releases3) -> bytes:
    up = releases3.upstream.path
    (up / "vllm" / "model.py").write_text(MODEL_V12.replace("return 2", "return 7"))
    diff = run_git(up, "diff", "--full-index")
    run_git(up, "checkout", "-q", "--", ".")
    return diff


def test_imported_author_is_one_line_and_no_local_path_is_written(
    releases3: Releases3, tmp_path: Path
) -> None:
    header = (
        b"Description: return 7\n"
        b"Author: Evil\n Signed-off-by: Linus Torvalds\n Reviewed-by: A Maintainer\n"
        b" <evil@example.com>\n---\n"
    )
    source = tmp_path / "secret-home" / "fix.patch"
    source.parent.mkdir()
    source.write_bytes(header + _diff_at_lock(releases3))
    [patch] = releases3.import_(source).patches
    assert patch.written, patch.message
    toml = releases3.set_dir() / "patches" / f"{patch.name}.toml"
    meta = read_toml(toml)
    assert "\n" not in meta["author"]
    assert "Signed-off-by" not in meta["author"]
    assert str(tmp_path) not in toml.read_text()  # why and source name no local path
    assert meta["imported"]["source"] == "fix.patch"
