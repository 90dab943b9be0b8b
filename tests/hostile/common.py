"""What the hostile tests share: a small scenario and the CLI run in this process."""

from __future__ import annotations

from pathlib import Path

from patchkit.cli import main
from testing.builders import Scenario


def where(s: Scenario) -> list[str]:
    return ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]


def run(s: Scenario, verb: str, *more: str) -> int:
    return main([verb, *where(s), *more])


def scenario(tmp_path: Path, files: dict[str, str | bytes] | None = None) -> Scenario:
    """A checkout with ``a.txt`` and one diff patch ``p1`` changing it."""
    s = Scenario(tmp_path / "work", files or {"a.txt": "a one\na two\n"})
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    return s
