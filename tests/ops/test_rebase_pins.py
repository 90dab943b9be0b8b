"""Targets that move together move together: ``rebase --with-pins`` moves vLLM and the FlashInfer
its new release pins as one transaction; when the pinned one stops, neither lock moves."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from patchkit.ops.rebase import rebase_with_pins
from patchkit.project.load import load_project
from patchkit.project.lock import pin_problems
from testing.builders import Project, Upstream, run_git

REQS = "requirements/cuda.txt"
FI_H = "".join(f"int v{i};\n" for i in range(8)) + "#define GROUP 8\nint b;\n"


def two_targets(tmp_path: Path, fi_next: str) -> tuple[Project, Path]:
    """vLLM 1.0 pins FlashInfer 0.6.6; vLLM 1.1 pins 0.7.1. FlashInfer 0.7.1's ``fi.h`` is
    ``fi_next``; the FlashInfer set changes ``fi.h``'s ``GROUP 8`` line."""
    vllm = Upstream(tmp_path / "vllm")
    base = vllm.commit({REQS: "flashinfer-python==0.6.6\n", "vllm/x.py": "x = 1\n"})
    run_git(vllm.path, "tag", "v1.0")
    fi = Upstream(tmp_path / "flashinfer")
    fi_base = fi.commit({"fi.h": FI_H})
    run_git(fi.path, "tag", "v0.6.6")
    project = Project(tmp_path / "project", vllm, base, target="vllm")
    project.add_diff("v", vllm.diff_of({"vllm/x.py": "x = 2\n"}))
    fi_diff = fi.diff_of({"fi.h": FI_H.replace("GROUP 8", "GROUP 16")})
    lock = project.path / "upstream.lock"
    lock.write_text(
        lock.read_text()
        + 'pins = { flashinfer = "0.6.6" }\n\n[targets.flashinfer]\n'
        + 'repository = "https://example.com/fi"\nversion = "0.6.6"\n'
        + f'commit = "{fi_base}"\nsource = {{ kind = "path", path = "{fi.path}" }}\n'
    )
    fi_set = project.path / "patchsets" / "fi" / "patches"
    fi_set.mkdir(parents=True)
    (fi_set / "g16.patch").write_bytes(fi_diff)
    (fi_set / "g16.toml").write_text('id = "g16"\ntarget = "flashinfer"\ntitle = "G"\nwhy = "w"\n')
    (fi_set.parent / "patchset.toml").write_text(
        '[patchset]\nname = "fi"\nversion = "1.0.0"\ndescription = "d"\n'
        'targets = ["flashinfer"]\nseries = ["g16"]\n'
    )
    vllm.commit({REQS: "flashinfer-python==0.7.1\n"}, "release 1.1")
    run_git(vllm.path, "tag", "v1.1")
    fi.commit({"fi.h": fi_next}, "release 0.7.1")
    run_git(fi.path, "tag", "v0.7.1")
    return project, lock


def test_with_pins_moves_both_locks(tmp_path: Path) -> None:
    project, _ = two_targets(tmp_path, "int first;\n" + FI_H)
    done = rebase_with_pins(project=load_project(project.path), target="vllm", onto="v1.1")
    assert [r.target for r in done.reports] == ["vllm", "flashinfer"]
    assert all(r.lock_moved for r in done.reports) and not done.rolled_back
    moved = load_project(project.path).lock
    assert (moved.targets["vllm"].version, moved.targets["flashinfer"].version) == ("1.1", "0.7.1")
    assert pin_problems(moved) == []


def test_a_pinned_target_that_stops_moves_no_lock(tmp_path: Path) -> None:
    project, lock = two_targets(tmp_path, FI_H.replace("GROUP 8", "GROUP 32"))  # conflicts
    before = lock.read_bytes()
    done = rebase_with_pins(project=load_project(project.path), target="vllm", onto="v1.1")
    assert done.rolled_back and done.reports[0].lock_moved and done.reports[1].stopped
    assert lock.read_bytes() == before  # vLLM did not move alone


def test_the_cli_says_no_lock_moved(tmp_path: Path) -> None:
    from patchkit.cli import main

    project, _ = two_targets(tmp_path, FI_H.replace("GROUP 8", "GROUP 32"))
    args = ["rebase", "--target", "vllm", "--project", str(project.path), "--onto", "v1.1"]
    assert main([*args, "--with-pins", "--no-verify"]) == 8


def test_the_pin_warning_names_the_command_that_fixes_it(tmp_path: Path) -> None:
    project, lock = two_targets(tmp_path, "int first;\n" + FI_H)
    lock.write_text(
        lock.read_text().replace(
            'pins = { flashinfer = "0.6.6" }', 'pins = { flashinfer = "0.7.1" }'
        )
    )
    (problem,) = pin_problems(load_project(project.path).lock)
    assert "`patchkit rebase --target flashinfer --onto 0.7.1`" in problem


def test_a_rebase_that_makes_a_pin_drift_says_so_once_and_apply_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Moving FlashInfer while vLLM pins 0.6.6: the rebase states the drift once, with the
    command that resolves it; afterwards `apply` warns once, in the same words."""
    from patchkit.cli import main
    from patchkit.project import lock as lock_module

    project, _ = two_targets(tmp_path, "int first;\n" + FI_H)
    root = str(project.path)
    lock_module._warned.clear()
    with caplog.at_level(logging.WARNING):
        rebase = ["rebase", "--target", "flashinfer", "--project", root, "--onto", "v0.7.1"]
        assert main([*rebase, "--no-verify"]) == 0
    drift = [
        r.getMessage() for r in caplog.records if "pins says flashinfer 0.6.6" in r.getMessage()
    ]
    assert len(drift) == 1
    assert "`patchkit rebase --target flashinfer --onto 0.6.6`" in drift[0]
    assert "--with-pins" in drift[0]
    caplog.clear()
    capsys.readouterr()
    lock_module._warned.clear()  # a new command: a new process
    vllm = str(project.upstream.path)
    run_git(project.upstream.path, "checkout", "-q", "v1.0")
    with caplog.at_level(logging.WARNING):
        assert main(["apply", "--target", "vllm", "--project", root, "--checkout", vllm]) == 0
    said = [r.getMessage() for r in caplog.records] + [
        line for line in capsys.readouterr().err.splitlines() if "flashinfer" in line
    ]
    assert len([m for m in said if "flashinfer" in m and "0.6.6" in m]) == 1
