"""Upstream pull requests carried until a release has them: ``pr:owner/name#N`` through the
GitHub CLI (a fake here), or offline a diff named by its PR; the patch records the PR."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
import tomlkit

from testing.fake_gh import fake_gh
from tests.importers.conftest import Releases3


def _diff(releases3: Releases3) -> str:
    util = releases3.file_at("v1.2", "vllm/util.py")
    new = util.replace("x + 1", "x + 5")
    lines = difflib.unified_diff(util.splitlines(True), new.splitlines(True), "a/vllm/util.py",
                                 "b/vllm/util.py")  # fmt: skip
    return "diff --git a/vllm/util.py b/vllm/util.py\n" + "".join(lines)


def test_a_pull_request_is_imported_with_its_state_and_merge_commit(
    releases3: Releases3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gh = fake_gh(tmp_path, monkeypatch)
    view = {"number": 59958, "title": "[Bugfix] Fix util on GB10", "body": "Why it breaks.\n\nMore.",
            "state": "MERGED", "mergeCommit": {"oid": "ab" * 20}, "author": {"login": "someone"},
            "url": "https://github.com/vllm-project/vllm/pull/59958"}  # fmt: skip
    gh.on("pr", "view", out=view)
    gh.on("pr", "diff", out=_diff(releases3))
    report = releases3.import_("pr:vllm-project/vllm#59958")
    [patch] = report.patches
    assert (patch.name, patch.form, patch.outcome) == ("pr59958", "upstream-pr", "applied")
    meta = tomlkit.parse((releases3.set_dir() / "patches" / "pr59958.toml").read_text()).unwrap()
    assert meta["title"] == "[Bugfix] Fix util on GB10" and meta["why"] == "Why it breaks."
    assert meta["upstream"] == {"pr": "https://github.com/vllm-project/vllm/pull/59958",
                                "state": "merged", "author": "someone",
                                "merge_commit": "ab" * 20}  # fmt: skip
    assert meta["imported"]["fields"]["Merge-Commit"] == "ab" * 20
    calls = gh.calls()
    assert ["pr", "diff", "59958", "--repo", "vllm-project/vllm"] in calls
    assert json.dumps(calls).count("pr") >= 2


def test_a_diff_named_by_its_pr_records_it_offline(releases3: Releases3, tmp_path: Path) -> None:
    patch_file = tmp_path / "01-pr59958.patch"
    patch_file.write_text(_diff(releases3))
    [patch] = releases3.import_(patch_file).patches
    assert patch.outcome == "applied"
    meta = tomlkit.parse((releases3.set_dir() / "patches" / f"{patch.name}.toml").read_text())
    assert meta.unwrap()["prs"] == ["https://github.com/vllm-project/vllm/pull/59958"]


def test_a_bad_pr_spec_is_refused_by_name(releases3: Releases3) -> None:
    [patch] = releases3.import_("pr:vllm-project/vllm#x1").patches
    assert patch.refused and "pr:owner/name#NUMBER" in patch.message
