"""A dry-run import names each patch as the real import then writes it (issue 30): the id the
set will hold, made free in the project and lower-case, not the source's file name."""

from __future__ import annotations

from pathlib import Path

from patchkit.project.sets import load_patchset
from testing.builders import run_git
from tests.importers.conftest import Releases3


def test_dry_run_and_real_import_name_a_patch_the_same(
    releases3: Releases3, tmp_path: Path
) -> None:
    up = releases3.upstream.path
    util = releases3.file_at("v1.2", "vllm/util.py")
    (up / "vllm" / "util.py").write_text(util.replace("x + 1", "x + 9"))
    (tmp_path / "Fix_Util.patch").write_bytes(run_git(up, "diff"))
    run_git(up, "checkout", "-q", "--", ".")
    [dry] = releases3.import_(tmp_path / "Fix_Util.patch", dry_run=True).patches
    [real] = releases3.import_(tmp_path / "Fix_Util.patch").patches
    assert dry.name == real.name == "fix-util"
    assert [p.id for p in load_patchset(releases3.set_dir()).patches] == [real.name]
