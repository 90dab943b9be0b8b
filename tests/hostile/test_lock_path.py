"""A lock's ``source = { kind = "path", path = ... }`` names the tree ``fetch`` hands back and
``apply`` writes into; a lock is shared data. ``/``, the project itself, a directory above it
or above the home directory, a git directory, a directory that is no checkout's top, or a link
to any of these, is refused naming the lock file and the key (exit 2), before anything runs.
A real checkout is taken, found from the lock's directory (not the current one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario


def _lock(s: Scenario, path: str) -> None:
    text = s.lock_path.read_text()
    start = text.index('path = "') + len('path = "')
    s.lock_path.write_text(text[:start] + path + text[text.index('"', start) :])


def _fetch(s: Scenario) -> int:
    return main(["fetch", "--target", "demo", "--project", str(s.project.path)])


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    (tmp_path / "home").mkdir()
    (tmp_path / "plain").mkdir()
    (tmp_path / "work" / "link-to-root").parent.mkdir()
    (tmp_path / "work" / "link-to-root").symlink_to("/")
    made = Scenario(tmp_path / "work", {"a.txt": "one\n"})
    (made.project.path / ".git").mkdir()
    (tmp_path / "work" / "link-to-project").symlink_to(made.project.path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # (after git made its commits)
    return made


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/", "the file system's root"),
        ("../link-to-root", "root (through a link:"),
        (".", "is the project"),
        ("..", "a directory above it"),
        ("{project}", "is the project"),
        ("../link-to-project", "is the project"),
        ("patchsets", "the top of no checkout"),
        (".git", "inside a git directory"),
        ("~", "the home directory"),
        ("../../plain", "the top of no checkout"),
        ("../upstream/.git", "inside a git directory"),
        ("bad\x1b]0;x", "control characters"),
    ],
)
def test_a_path_source_that_is_no_tree_of_the_target_is_refused(
    s: Scenario, capsys: pytest.CaptureFixture[str], path: str, why: str
) -> None:
    _lock(s, path.replace("{project}", str(s.project.path)).replace("\x1b", "\\u001b"))

    assert _fetch(s) == 2
    said = capsys.readouterr().err
    assert f"{s.lock_path}: targets.demo.source.path" in said and "is refused" in said
    assert why in said


def test_a_checkout_beside_the_project_is_found_from_the_lock_not_the_current_directory(
    s: Scenario,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _lock(s, "../upstream")
    monkeypatch.chdir(tmp_path / "plain")

    assert _fetch(s) == 0
    assert f"at {s.root}" in capsys.readouterr().out


def test_a_link_to_a_checkout_is_taken(s: Scenario, tmp_path: Path) -> None:
    (tmp_path / "to-upstream").symlink_to(s.root)
    _lock(s, str(tmp_path / "to-upstream"))

    assert _fetch(s) == 0
