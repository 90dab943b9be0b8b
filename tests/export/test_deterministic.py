"""The same patch on the same pinned commit gives the same branch and commit id on any machine:
identity and dates from the patch's ``[export]`` metadata, formatters at upstream's pins, no
reading of HOME, TZ, the user's git config, the working directory or the checkout's own files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.ops.export_pr import export_pr
from patchkit.project.load import load_project
from testing.builders import run_git
from tests.export.test_export import MOD, Case, only
from tests.export.test_format import pre_commit, version_on_path

FIXED = """title = "Fix f"
why = "f is off by one."

[export]
identity = "Ada Lovelace <ada@example.com>"
date = "2026-11-23T00:00:00Z"
"""


def export_from(case: Case, checkout: Path) -> str:
    project = load_project(case.project.path)
    report = export_pr(project=project, target="vllm", tree_root=checkout, patch_ids=["fix-f"])
    return only(report).commit


def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another HOME (another git identity), cache, time zone and working directory."""
    home = tmp_path / "other-home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Someone Else\n\temail = se@example.org\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "other-cache"))
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.chdir(home)


def test_two_environments_give_one_commit_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = version_on_path("ruff")
    files = {"pkg/mod.py": MOD, ".pre-commit-config.yaml": pre_commit(ruff=version)}
    case = Case(tmp_path, "vllm", files)
    case.add("fix-f", {"pkg/mod.py": MOD.replace("x + 1", "x+2")}, FIXED)
    first = export_from(case, case.upstream.path)

    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(case.upstream.path), str(clone))
    elsewhere(tmp_path, monkeypatch)
    (clone / "pyproject.toml").write_text("[tool.ruff]\nline-length = 20\n")  # not committed
    second = export_from(case, clone)

    assert second == first
    shown = run_git(clone, "log", "-1", "--format=%an <%ae>|%cn|%aI|%cI", second).decode()
    assert shown.strip() == (
        "Ada Lovelace <ada@example.com>|Ada Lovelace|2026-11-23T00:00:00Z|2026-11-23T00:00:00Z"
    ).replace("Z", "+00:00")
    assert "x + 2" in run_git(clone, "show", f"{second}:pkg/mod.py").decode()  # ruff ran


def test_without_metadata_identity_the_git_config_signs(tmp_path: Path) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    case.add("fix-f", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, 'title = "F"\nwhy = "f"\n')
    commit = export_from(case, case.upstream.path)
    author = run_git(case.upstream.path, "log", "-1", "--format=%an <%ae>", commit).decode()
    assert author.strip() == "Test Person <test@example.com>"  # the hermetic HOME's git config


def test_a_bad_export_table_names_the_file(tmp_path: Path) -> None:
    case = Case(tmp_path, "vllm", {"pkg/mod.py": MOD})
    bad = FIXED.replace('"2026-11-23T00:00:00Z"', '"yesterday"')
    case.add("fix-f", {"pkg/mod.py": MOD.replace("x + 1", "x + 2")}, bad)
    with pytest.raises(ConfigError, match=r"fix-f\.toml: \[export\] date 'yesterday'"):
        load_project(case.project.path)
    assert os.environ["HOME"]
