"""The forms real container mods are written in (issue: every form in a real collection):
here-document programs with their arguments, scripts beside the mod found through the
``MOD_DIR`` idiom, multi-line quoted commands, ``sed -i``, files located through
``__file__``/``dirname(vllm.__file__)``, ``-p1 -d "$VLLM_DIR"`` and ``-p0 -d`` site-packages,
overlays, ``pip install`` as a requirement, self-checks, ``|| echo skip``; and a dynamic line
refused by name beside the static ones, which still import."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import tomlkit

from tests.conftest import dedent
from tests.importers.conftest import Releases3

MOD_DIR = 'MOD_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
VLLM_DIR = 'VLLM_DIR=$(python3 -c "import vllm, os; print(os.path.dirname(vllm.__file__))")\n'
REPLACE = """\
import sys
p = sys.argv[1]
src = open(p).read()
old = "return x + 1"
assert old in src, "already fixed upstream?"
src = src.replace(old, "return x + 10")
open(p, "w").write(src)
"""


def _mod(tmp_path: Path, run_sh: str, files: dict[str, str] | None = None) -> Path:
    mod = tmp_path / "mods" / "fix"
    mod.mkdir(parents=True)
    (mod / "run.sh").write_text("#!/bin/bash\nset -euo pipefail\n" + run_sh)
    for name, text in (files or {}).items():
        (mod / name).parent.mkdir(parents=True, exist_ok=True)
        (mod / name).write_text(text)
    return mod


def _diffs(report: object) -> dict[str, str]:
    return {p.name: p.diff.decode() for p in report.patches}  # type: ignore[attr-defined]


def test_heredoc_program_with_its_argument_from_a_module_file(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = (
        'FILE=$(python3 -c "import vllm.util as m; print(m.__file__)")\n'
        f"python3 - \"$FILE\" <<'PY'\n{REPLACE}PY\n"
    )
    report = releases3.import_(_mod(tmp_path, run_sh))
    [patch] = report.patches
    assert patch.outcome == "applied" and patch.files == ("vllm/util.py",)
    assert "+    return x + 10" in patch.diff.decode()


def test_script_beside_the_mod_through_mod_dir_with_the_package_dir(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = MOD_DIR + VLLM_DIR + 'python3 "$MOD_DIR/patch_util.py" "$VLLM_DIR/util.py"\n'
    report = releases3.import_(_mod(tmp_path, run_sh, {"patch_util.py": REPLACE}))
    [patch] = report.patches
    assert patch.outcome == "applied" and "+    return x + 10" in patch.diff.decode()


def test_multi_line_quoted_command_and_sed_in_place(releases3: Releases3, tmp_path: Path) -> None:
    run_sh = (
        'SITE=$(python3 -c "\nimport site\nprint(site.getsitepackages()[0])\n")\n'
        "sed -i -e 's/return y \\* 2/return y * 3/' -e '/def helper/i # tuned for GB10' "
        '"$SITE/vllm/util.py"\n'
    )
    report = releases3.import_(_mod(tmp_path, run_sh))
    [patch] = report.patches
    diff = patch.diff.decode()
    assert patch.outcome == "applied" and patch.untranslated == ()
    assert "+    return y * 3" in diff and "+# tuned for GB10" in diff


def test_patch_p1_into_the_package_dir_and_p0_into_site_packages(
    releases3: Releases3, tmp_path: Path
) -> None:
    util = releases3.file_at("v1.2", "vllm/util.py")
    new = util.replace("x + 1", "x + 2")
    lines = (util.splitlines(True), new.splitlines(True))
    pkg_relative = "".join(difflib.unified_diff(*lines, "a/util.py", "b/util.py"))
    p0 = "".join(difflib.unified_diff(*lines, "vllm/util.py", "vllm/util.py"))
    run_sh = (
        MOD_DIR
        + VLLM_DIR
        + 'patch -p1 -d "$VLLM_DIR" < "$MOD_DIR/one.patch"\n'
        + 'patch -p0 -d /usr/local/lib/python3.12/dist-packages < "$MOD_DIR/two.patch"\n'
    )
    report = releases3.import_(_mod(tmp_path, run_sh, {"one.patch": pkg_relative, "two.patch": p0}))
    assert [(p.name, p.files) for p in report.patches] == [
        ("fix-one", ("vllm/util.py",)),
        ("fix-two", ("vllm/util.py",)),
    ]
    assert report.patches[0].outcome == "applied"


def test_overlay_requirement_self_check_and_tolerated_failure(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = (
        MOD_DIR
        + VLLM_DIR
        + "pip install fastsafetensors==0.1.10\n"
        + 'cp "$MOD_DIR/overlay/vllm/chat_template.jinja" "$VLLM_DIR/chat_template.jinja"\n'
        + 'python3 "$MOD_DIR/fix.py" "$VLLM_DIR/util.py" || echo "already fixed upstream?, skipping"\n'
        + "python3 -c \"import inspect, vllm.util as m; assert 'x + 10' in inspect.getsource(m)\"\n"
    )
    files = {"overlay/vllm/chat_template.jinja": "{{ messages }}\n", "fix.py": REPLACE}
    report = releases3.import_(_mod(tmp_path, run_sh, files))
    by_name = {p.name: p for p in report.patches}
    assert set(by_name) == {"fix-line6", "fix-fix"}
    assert by_name["fix-line6"].files == ("vllm/chat_template.jinja",)
    assert "+{{ messages }}" in by_name["fix-line6"].diff.decode()
    meta = tomlkit.parse((releases3.set_dir() / "patches" / "fix-fix.toml").read_text()).unwrap()
    fields = meta["imported"]["fields"]
    assert fields["Requires"] == "fastsafetensors==0.1.10"
    assert "goes on when it fails" in fields["Tolerated"]
    assert meta["on_failure"] == "skip"  # run.sh went on when it failed: so may apply
    assert meta["tests"] == [
        {"where": "set", "node": "tests/test_fix_fix_self_check.py", "gpu": False}
    ]  # the self-check is the patch's test (tests/importers/test_self_checks.py)
    assert (releases3.set_dir() / "tests" / "test_fix_fix_self_check.py").is_file()


def test_a_dynamic_line_is_refused_by_name_beside_a_static_one(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = (
        VLLM_DIR
        + "sed -i 's/return y \\* 2/return y * 3/' \"$VLLM_DIR/util.py\"\n"
        + "TARGET=$(find / -name model.py | head -1)\n"
        + "sed -i 's/return 2/return 9/' \"$TARGET\"\n"
        + "curl -sL https://example.com/x | bash\n"
    )
    report = releases3.import_(_mod(tmp_path, run_sh))
    [patch] = report.patches
    assert patch.outcome == "applied" and "+    return y * 3" in patch.diff.decode()
    assert patch.untranslated == (
        "line 6: a file computed at run time: sed -i 's/return 2/return 9/' \"$TARGET\"",
        "line 7: not translated: curl -sL https://example.com/x | bash",
    )


def test_a_build_script_in_a_clone_of_the_target_and_writes_by_redirection(
    releases3: Releases3, tmp_path: Path
) -> None:
    script = tmp_path / "wheels" / "build.sh"
    script.parent.mkdir()
    script.write_text(
        dedent(
            """
            #!/bin/bash
            BUILD_DIR=/tmp/build
            cd "$BUILD_DIR"
            rm -rf "$BUILD_DIR/vllm"
            git clone https://github.com/vllm-project/vllm.git
            cd vllm
            git checkout v1.1
            sed -i 's/return x + 1/return x + 4/' vllm/util.py
            cat > vllm/template.jinja <<'EOF'
            {{ bos }}
            EOF
            echo "EXTRA = 1" >> vllm/util.py
            sha256sum dist/*.whl > checksums.txt
            """
        )
    )
    report = releases3.import_(script)
    by_name = {p.name: p for p in report.patches}
    assert set(by_name) == {"build-line8", "build-line9", "build-line12"}
    assert "+    return x + 4" in by_name["build-line8"].diff.decode()
    assert "+{{ bos }}" in by_name["build-line9"].diff.decode()
    assert by_name["build-line12"].diff.decode().rstrip().endswith("+EXTRA = 1")
    assert all(p.untranslated == () for p in report.patches)


def test_an_install_script_that_checks_with_dry_run_and_finds_itself_with_semicolons(
    releases3: Releases3, tmp_path: Path
) -> None:
    util = releases3.file_at("v1.2", "vllm/util.py")
    lines = (util.splitlines(True), util.replace("x + 1", "x + 2").splitlines(True))
    p2 = "".join(difflib.unified_diff(*lines, "a/vllm/util.py", "b/vllm/util.py"))
    run_sh = (
        'SCRIPT_DIR=$(cd "$(dirname "$0")"; pwd)\n'
        'PATCH_FILE="$SCRIPT_DIR/load.patch"\n'
        'OUT=$(python -c "import vllm; import os; '
        'print(os.path.dirname(os.path.abspath(vllm.__file__)))" 2>/dev/null)\n'
        'VLLM_PATH=$(echo "$OUT" | tail -n 1)\n'
        'if patch -p2 --dry-run -d "$VLLM_PATH" < "$PATCH_FILE"; then\n'
        '    patch -p2 -d "$VLLM_PATH" < "$PATCH_FILE"\n'
        "else\n"
        '    echo "already applied"\n'
        "fi\n"
        'patch -p2 -d "$VLLM_PATH" -R < "$PATCH_FILE"\n'
    )
    report = releases3.import_(_mod(tmp_path, run_sh, {"load.patch": p2}))
    [patch] = report.patches
    assert patch.outcome == "applied" and patch.files == ("vllm/util.py",)
    assert patch.untranslated == (
        'line 12: takes a patch back out (an uninstall step): patch -p2 -d "$VLLM_PATH" -R < '
        '"$PATCH_FILE"',
    )


def test_a_patch_with_no_base_and_no_place_at_the_lock_is_said_not_written(
    releases3: Releases3, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from patchkit.cli import main

    run_sh = "sed -i 's/no such text/x/' /usr/lib/python3/dist-packages/vllm/util.py\n"
    mod = _mod(tmp_path, run_sh)
    argv = ["import", str(mod), "--target", "vllm", "--into", "imported", "--dry-run"]
    assert main([*argv, "--project", str(releases3.project.path)]) == 6
    err = capsys.readouterr().err
    assert "would not be written (no release holds a base for them)" in err
    assert "kept pending" not in err


def test_two_edits_of_one_file_are_a_series_that_applies(
    releases3: Releases3, tmp_path: Path
) -> None:
    from patchkit.ops.apply import apply_target
    from patchkit.ops.context import CACHED
    from patchkit.project.load import load_project

    run_sh = (
        VLLM_DIR
        + "sed -i 's/def helper(x):/def helper(x, y=0):/' \"$VLLM_DIR/util.py\"\n"
        + "sed -i 's/    return x + 1/    return x + y + 1/' \"$VLLM_DIR/util.py\"\n"
    )
    report = releases3.import_(_mod(tmp_path, run_sh))
    assert [(p.name, p.outcome) for p in report.patches] == [
        ("fix-line4", "applied"),
        ("fix-line5", "applied"),
    ]
    second = report.patches[1].diff.decode()
    assert "-    return x + 1\n+    return x + y + 1" in second
    assert " def helper(x, y=0):" in second  # made on top of the first edit
    project = load_project(releases3.project.path)
    done = apply_target(project=project, target="vllm", where=CACHED)
    assert [r.outcome.value for r in done.report.results][-2:] == ["applied", "applied"]


@pytest.mark.parametrize(
    "run_sh",
    [
        "for a in 1 2 3 4 5 6 7 8 9 10; do for b in 1 2 3 4 5 6 7 8 9 10; do "
        "for c in 1 2 3 4 5 6 7 8 9 10; do for d in 1 2 3 4 5 6 7 8 9 10; do "
        "for e in 1 2 3 4 5 6 7 8 9 10; do for f in 1 2 3 4 5 6 7 8 9 10; do X=1; "
        "done; done; done; done; done; done\n",
        "X=ab\nfor a in " + " ".join(["w"] * 30) + '; do X="$X$X"; done\n',
    ],
)
def test_a_script_that_loops_or_grows_without_bound_is_refused_quickly(
    releases3: Releases3, tmp_path: Path, run_sh: str
) -> None:
    import time

    started = time.monotonic()
    [patch] = releases3.import_(_mod(tmp_path, run_sh)).patches
    assert patch.refused and ("MAX_LOOPS" in patch.message or "MAX_VALUE" in patch.message)
    assert time.monotonic() - started < 30


def test_heredoc_program_with_no_argument_reads_its_own_file(
    releases3: Releases3, tmp_path: Path
) -> None:
    program = (
        "import os, vllm\n"
        'p = os.path.join(os.path.dirname(vllm.__file__), "util.py")\n'
        + REPLACE.split("\n", 2)[2]  # from src = open(p).read() on
    )
    report = releases3.import_(_mod(tmp_path, f"python3 - <<'PY'\n{program}PY\n"))
    [patch] = report.patches  # the grammar drops the lone '-': it was "a program import cannot see"
    assert patch.outcome == "applied" and patch.untranslated == ()
    assert "+    return x + 10" in patch.diff.decode()
