"""A mod's ``grep`` self-check after patching (``grep -q MARKER FILE || exit 1``, or a plain
``grep -q`` under ``set -e``) becomes the test of the patch it checks, like a ``python3 -c
'assert ...'`` check; a ``grep`` that only guards (``if grep -q ...; then exit 0; fi``) is no
check; one import cannot redo exactly (a regular expression, a file of no module) is said by
name, never dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.importers.grepcheck import read_grep
from patchkit.importers.selfcheck import Probe
from tests.importers.conftest import Releases3
from tests.importers.test_mod_forms import MOD_DIR, REPLACE, VLLM_DIR, _mod

FIX = MOD_DIR + VLLM_DIR + 'python3 "$MOD_DIR/fix.py" "$VLLM_DIR/util.py"\n'
GUARD = 'if grep -q "x + 10" "$VLLM_DIR/util.py"; then\n  echo "already patched"\n  exit 0\nfi\n'


def test_grep_or_exit_is_the_patchs_test_and_verify_proves_it(
    releases3: Releases3, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_sh = FIX + 'grep -q "x + 10" "$VLLM_DIR/util.py" || { echo "patch failed"; exit 1; }\n'
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == ("tests/test_fix_self_check.py",) and patch.untranslated == ()
    test = (releases3.set_dir() / "tests" / "test_fix_self_check.py").read_text()
    assert "('vllm/util.py', '', ('x + 10',), ())" in test
    tree, project = str(releases3.upstream.path), str(releases3.project.path)
    where = ["--target", "vllm", "--project", project, "--checkout", tree]
    assert main(["apply", *where]) == 0
    capsys.readouterr()
    assert main(["verify", *where, "--no-record", "--json"]) == 0
    [verified] = json.loads(capsys.readouterr().out)["patches"]
    assert verified["proof"] == "proven", verified


def test_a_plain_grep_under_set_e_is_a_check_a_guard_is_not(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = MOD_DIR + VLLM_DIR + "set -e\n" + GUARD + FIX.split("\n", 2)[2]
    run_sh += 'grep -qF "x + 10" "$VLLM_DIR/util.py"\n'
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == ("tests/test_fix_self_check.py",) and patch.untranslated == ()


def test_a_guard_alone_makes_no_test(releases3: Releases3, tmp_path: Path) -> None:
    run_sh = MOD_DIR + VLLM_DIR + "set -e\n" + GUARD + FIX.split("\n", 2)[2]
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == () and patch.untranslated == ()


def test_a_regular_expression_is_said_by_name_not_dropped(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = FIX + 'grep -q "x + 1[0-9]" "$VLLM_DIR/util.py" || exit 1\n'
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == ()
    [said] = patch.untranslated
    assert "a self-check not made a test (a regular expression, not a marker)" in said


@pytest.mark.parametrize(
    ("words", "probe", "refused"),
    [
        (("grep", "-q", "m", "/site-packages/vllm/a/b.py"), Probe("vllm.a.b", ("m",)), ""),
        (
            ("grep", "-qF", "a.b[0]", "/site-packages/vllm/__init__.py"),
            Probe("vllm", ("a.b[0]",)),
            "",
        ),
        (("grep", "-q", "-e", "-x", "/site-packages/vllm/c.py"), Probe("vllm.c", ("-x",)), ""),
        (("grep", "-c", "m", "/site-packages/vllm/c.py"), None, "grep with options"),
        (("grep", "-q", "m"), None, "grep reading its input"),
        (("grep", "-q", "m", "/site-packages/vllm/csrc/x.cu"), None, "is no Python file"),
        (("grep", "-q", "m", "/etc/passwd"), None, "is no Python file"),
        (("grep", "-q", "^m$", "/site-packages/vllm/c.py"), None, "a regular expression"),
    ],
)
def test_read_grep(words: tuple[str, ...], probe: Probe | None, refused: str) -> None:
    check = read_grep(words, line=3, text=" ".join(words), target="vllm")
    assert check.probes == ((probe,) if probe else ())
    assert refused in check.refused and bool(refused) == bool(check.refused)
