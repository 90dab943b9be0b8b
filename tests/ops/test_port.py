"""``port``: one diff made at a base commit, applied in place to a checkout at another commit,
through the rebase chain; the tree is untouched unless the change ends up in it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from patchkit.cli import port as port_cli
from patchkit.errors import PatchFailed, SourceError, TreeError
from patchkit.ops.port import port
from patchkit.outcome import Outcome, Step
from testing.builders import Upstream, run_git, snapshot
from tests.ops.test_rebase import BUMPED, MOD


@pytest.fixture
def up(tmp_path: Path) -> Upstream:
    upstream = Upstream(tmp_path / "upstream")
    upstream.commit({"pkg/mod.py": MOD, "pkg/other.py": "X = 1\n"}, "base")
    return upstream


def made(
    up: Upstream, tmp_path: Path, files: dict[str, str | bytes] | None = None
) -> tuple[Path, str]:
    """A diff of ``files`` (default: the bump) made at the current commit, and that commit."""
    patch = tmp_path / "bump.patch"
    patch.write_bytes(up.diff_of(files or {"pkg/mod.py": BUMPED}))
    return patch, up.head()


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    port_cli.add_arguments(parser)
    return port_cli.run(parser.parse_args(list(argv)))


def test_same_commit_is_applied_exactly(up: Upstream, tmp_path: Path) -> None:
    patch, base = made(up, tmp_path)
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert (report.outcome, report.result.step) == (Outcome.APPLIED, Step.EXACT)
    assert (up.path / "pkg/mod.py").read_text() == BUMPED
    assert report.written == ("pkg/mod.py",)


def test_moved_code_is_carried(up: Upstream, tmp_path: Path) -> None:
    patch, base = made(up, tmp_path)
    moved = "import sys\n\n" + MOD
    up.commit({"pkg/mod.py": moved})
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert report.outcome is Outcome.CARRIED
    assert (up.path / "pkg/mod.py").read_text() == "import sys\n\n" + BUMPED


def test_abbreviated_index_still_gets_a_three_way_base(up: Upstream, tmp_path: Path) -> None:
    (up.path / "pkg/mod.py").write_text(BUMPED)
    patch = tmp_path / "short.patch"
    patch.write_bytes(run_git(up.path, "diff"))  # abbreviated blob ids
    run_git(up.path, "checkout", "-q", "--", ".")
    base = up.head()
    up.commit({"pkg/mod.py": MOD.replace("\n\ndef compute", "\n# the sum\ndef compute")})
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert (report.outcome, report.result.step) == (Outcome.CARRIED, Step.THREE_WAY)
    assert "total = a + b + 1" in (up.path / "pkg/mod.py").read_text()


def test_already_there_is_upstreamed_and_nothing_is_written(
    up: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch, base = made(up, tmp_path)
    up.commit({"pkg/mod.py": "# moved\n" + BUMPED})
    before = snapshot(up.path)
    assert run_cli(str(patch), "--base", base, "--checkout", str(up.path), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["patches"][0]["outcome"] == "upstreamed" and data["written"] == []
    assert snapshot(up.path) == before


def test_twice_is_once(up: Upstream, tmp_path: Path) -> None:
    patch, base = made(up, tmp_path)
    port(patch_file=patch, base_commit=base, checkout=up.path)
    after = snapshot(up.path)
    again = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert again.outcome is Outcome.UPSTREAMED and snapshot(up.path) == after


@pytest.mark.parametrize(
    "upstream_text, outcome",
    [
        (MOD.replace("total = a + b\n", "total = b + a\n"), "conflict"),
        (
            MOD.replace(
                "def helper",
                "def compute_v2(a, b):\n    total = a + b\n    return total\n\n\ndef helper",
            ).replace("compute_v2", "compute"),
            "ambiguous",
        ),
    ],
)
def test_failure_exits_non_zero_and_leaves_the_tree(
    up: Upstream, tmp_path: Path, upstream_text: str, outcome: str
) -> None:
    patch, base = made(up, tmp_path)
    up.commit({"pkg/mod.py": upstream_text})
    before = snapshot(up.path), (up.path / ".git" / "patchkit").exists()
    with pytest.raises(PatchFailed, match=outcome) as failed:
        run_cli(str(patch), "--base", base, "--checkout", str(up.path))
    assert failed.value.exit_code != 0
    assert (snapshot(up.path), (up.path / ".git" / "patchkit").exists()) == before


def test_uncommitted_edits_in_its_files_are_refused(up: Upstream, tmp_path: Path) -> None:
    patch, base = made(up, tmp_path)
    (up.path / "pkg/mod.py").write_text("# mine\n" + MOD)
    with pytest.raises(TreeError, match="uncommitted"):
        port(patch_file=patch, base_commit=base, checkout=up.path)
    assert (up.path / "pkg/mod.py").read_text() == "# mine\n" + MOD
    report = port(patch_file=patch, base_commit=base, checkout=up.path, allow_dirty=True)
    assert report.outcome is Outcome.CARRIED
    assert (up.path / "pkg/mod.py").read_text() == "# mine\n" + BUMPED


def test_unknown_base_commit_is_a_source_error(up: Upstream, tmp_path: Path) -> None:
    patch, _ = made(up, tmp_path)
    with pytest.raises(SourceError, match="is not a commit"):
        port(patch_file=patch, base_commit="f" * 40, checkout=up.path)
