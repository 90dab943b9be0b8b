"""A mod's self-check after patching becomes the test of the patch it checks (issue 26): read
statically (never run), written as a set test that fails on the unpatched tree and passes on
the patched one (``verify`` proves it); a check that is no static test (it asks torch, a GPU)
or that passes without the patch is said by name, never dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit

from patchkit.cli import main
from patchkit.importers.selfcheck import read_check
from tests.importers.conftest import Releases3
from tests.importers.test_mod_forms import MOD_DIR, REPLACE, VLLM_DIR, _mod

FIX = MOD_DIR + VLLM_DIR + 'python3 "$MOD_DIR/fix.py" "$VLLM_DIR/util.py"\n'
HEREDOC_CHECK = """\
python3 - <<'PY'
import inspect
from vllm import util
src = inspect.getsource(util.helper)
assert "x + 10" in src, "patch missing"
assert "x + 1\\n" not in src
print("ok")
PY
"""


def _meta(releases3: Releases3, patch_id: str) -> dict[str, object]:
    path = releases3.set_dir() / "patches" / f"{patch_id}.toml"
    return tomlkit.parse(path.read_text()).unwrap()


def test_a_heredoc_self_check_is_written_as_the_patchs_test(
    releases3: Releases3, tmp_path: Path
) -> None:
    report = releases3.import_(_mod(tmp_path, FIX + HEREDOC_CHECK, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == ("tests/test_fix_self_check.py",) and patch.untranslated == ()
    assert _meta(releases3, "fix")["tests"] == [
        {"where": "set", "node": "tests/test_fix_self_check.py", "gpu": False}
    ]
    test = (releases3.set_dir() / "tests" / "test_fix_self_check.py").read_text()
    assert "('vllm/util.py', 'helper', ('x + 10',), ('x + 1\\n',))" in test
    compile(test, "test", "exec")  # a module, whatever the check's text held


def test_verify_proves_the_test_fails_unpatched_and_passes_patched(
    releases3: Releases3, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_sh = (
        FIX
        + "python3 -c \"import inspect, vllm.util as m; assert 'x + 10' in inspect.getsource(m)\"\n"
    )
    releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    tree, project = str(releases3.upstream.path), str(releases3.project.path)
    where = ["--target", "vllm", "--project", project, "--checkout", tree]
    assert main(["apply", *where]) == 0
    capsys.readouterr()
    assert main(["verify", *where, "--no-record", "--json"]) == 0
    [patch] = json.loads(capsys.readouterr().out)["patches"]
    assert (patch["patch"], patch["result"]) == ("fix", "passed")
    assert patch["proof"] == "proven", patch
    assert "tests/test_fix_self_check.py" in patch["proof_reason"]


def test_a_check_of_torch_or_the_gpu_is_said_by_name_not_dropped(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = FIX + "python3 -c \"import torch; assert torch.cuda.is_available(), 'no CUDA'\"\n"
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == ()
    [said] = patch.untranslated
    assert said.startswith(
        "line 6: a self-check not made a test (asserts torch.cuda.is_available())"
    )
    assert "tests" not in _meta(releases3, "fix")


def test_a_check_that_passes_without_the_patch_is_no_test(
    releases3: Releases3, tmp_path: Path
) -> None:
    run_sh = (
        FIX
        + "python3 -c \"import inspect, vllm.util as m; assert 'def other' in inspect.getsource(m)\"\n"
    )
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    [patch] = report.patches
    assert patch.tests == ()
    assert "(it passes without the patch too)" in patch.untranslated[0]


def test_a_check_of_a_file_no_patch_changes_is_said(releases3: Releases3, tmp_path: Path) -> None:
    run_sh = (
        FIX + "python3 -c \"import inspect, vllm.model as m; assert 'x' in inspect.getsource(m)\"\n"
    )
    report = releases3.import_(_mod(tmp_path, run_sh, {"fix.py": REPLACE}))
    assert (
        "it looks at vllm.model, which no patch of the mod made before it changes"
        in (report.patches[0].untranslated[0])
    )


@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("import os; assert 'x' in open('/etc/passwd').read()", "reads open('/etc/passwd').read()"),
        ("import vllm.util as m; exec('x'); assert 'x' in inspect.getsource(m)", "runs exec('x')"),
        ("import numpy as m, inspect; assert 'x' in inspect.getsource(m)", "not of vllm"),
        ("import inspect; assert 'x' in inspect.getsource(q)", "which it did not import"),
        ("assert (" * 5000, "cannot be parsed"),
    ],
)
def test_what_a_static_test_cannot_redo_is_refused_with_why(code: str, why: str) -> None:
    check = read_check(code, line=3, text="python3 -c ...", package="vllm")
    assert check.probes == () and why in check.refused


def test_every_patch_id_has_its_own_test_file() -> None:
    from patchkit.importers.writer import test_node

    ids = ["a-b", "a.b", "a_b", "a--b", "a-b-self-check"]
    nodes = [test_node(i) for i in ids]
    assert len(set(nodes)) == len(ids) and nodes[0] == "tests/test_a_b_self_check.py"
