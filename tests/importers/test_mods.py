"""Container mods in the shapes they come in, and the path mapping under them."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from patchkit.errors import ImportRefused
from patchkit.importers.diffs import map_diff
from patchkit.importers.paths import repo_path
from testing.builders import git_status
from tests.conftest import dedent
from tests.importers.conftest import Releases3


@pytest.mark.parametrize(
    ("raw", "target", "directory", "expected"),
    [
        ("usr/local/lib/python3.12/dist-packages/vllm/a/b.py", "vllm", "", "vllm/a/b.py"),
        ("vllm/a/b.py", "vllm", "/usr/lib/python3/site-packages", "vllm/a/b.py"),
        ("/opt/venv/lib/python3.12/site-packages/vllm/x.py", "vllm", "", "vllm/x.py"),
        (
            "usr/lib/python3.12/site-packages/flashinfer/data/include/x.cuh",
            "flashinfer",
            "",
            "include/x.cuh",
        ),
        ("usr/lib/python3.12/site-packages/torch/x.py", "vllm", "", None),
        ("vllm/x.py", "vllm", "/workspace/vllm", "vllm/x.py"),
    ],
)
def test_installed_paths_map_onto_the_repository(
    raw: str, target: str, directory: str, expected: str | None
) -> None:
    assert repo_path(raw, target, directory=directory) == expected


def test_a_file_of_another_package_is_refused_by_name() -> None:
    diff = "--- a/usr/lib/python3/dist-packages/torch/x.py\n+++ b/usr/lib/python3/dist-packages/torch/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(ImportRefused, match=r"torch/x\.py.*is not a file of vllm"):
        map_diff(diff.encode(), "vllm", strip=1, source="x.patch")


def _diff(old: str, new: str, a: str, b: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), a, b))


def test_mod_shapes_cd_git_apply_loop_and_script(releases3: Releases3, tmp_path: Path) -> None:
    model = releases3.file_at("v1.2", "vllm/model.py")
    util = releases3.file_at("v1.2", "vllm/util.py")
    mod = tmp_path / "gb10"
    mod.mkdir()
    (mod / "01-model.patch").write_text(
        _diff(model, model.replace("return 2", "return 5"), "vllm/model.py", "vllm/model.py")
    )
    (mod / "02-util.diff").write_text(
        _diff(util, util.replace("x + 1", "x + 7"), "a/vllm/util.py", "b/vllm/util.py")
    )
    (mod / "fields.py").write_text(
        "P = '/site-packages/vllm/model.py'\n"
        "code = open(P).read()\n"
        "code = code.replace('self.a = None', 'self.a = 1')\n"
        "open(P, 'w').write(code)\n"
    )
    (mod / "torch.patch").write_text(
        _diff("a\n", "b\n", "a/usr/lib/python3/dist-packages/torch/x.py", "b/usr/lib/x")
    )
    (mod / "run.sh").write_text(
        dedent(
            """
            #!/bin/sh
            SITE=$(python3 -c 'import site; print(site.getsitepackages()[0])')
            cd $SITE
            for p in /mods/gb10/01-*.patch; do patch -p0 < "$p"; done
            # util off by one
            git apply -p1 /mods/gb10/02-util.diff || true
            python3 /mods/gb10/fields.py
            patch -p1 -d / < torch.patch
            sed -i 's/foo/bar/' vllm/other.py
            """
        )
    )
    before = git_status(releases3.upstream.path)
    report = releases3.import_(mod)
    names = [(p.name, p.outcome) for p in report.patches]
    assert names == [
        ("gb10-01-model", "applied"),
        ("gb10-02-util", "applied"),
        ("gb10-fields", "applied"),
        ("gb10-line9", "conflict"),  # sed -i is a patch too: its text is not in vllm/other.py
    ]
    assert [p.form for p in report.patches] == ["container-mod"] * 4
    assert "+        return 5\n" in report.patches[0].diff.decode()
    assert "+    return x + 7\n" in report.patches[1].diff.decode()
    assert "+        self.a = 1\n" in report.patches[2].diff.decode()
    untranslated = report.patches[0].untranslated
    assert untranslated[0].startswith("line 8: ") and "torch/x.py" in untranslated[0]
    assert untranslated[1:] == ()
    assert git_status(releases3.upstream.path) == before  # the target tree is never written


def test_run_sh_with_nothing_to_import_is_refused(releases3: Releases3, tmp_path: Path) -> None:
    mod = tmp_path / "pipmod"
    mod.mkdir()
    (mod / "torch.patch").write_text(
        _diff("a\n", "b\n", "a/usr/lib/python3/dist-packages/torch/x.py", "b/usr/lib/x")
    )
    (mod / "run.sh").write_text("pip install foo==1\n")
    [patch] = releases3.import_(mod).patches
    assert patch.refused and "pip install foo==1" in patch.message
