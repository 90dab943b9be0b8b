"""Nothing dropped in silence: opt-in patches applied to a checkout stay applied on a plain apply
(and it says so), until ``--exclude``; a failed apply lists no patch as applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario

FILES = {"a.txt": "a one\na two\n", "b.txt": "b one\nb two\n"}


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    s.add("extra", {"b.txt": "b one\nb TWO\n"})
    meta = s.set_root / "patches" / "extra.toml"
    meta.write_text(meta.read_text() + "optional = true\n")
    return s


def run(s: Scenario, *args: str) -> int:
    base = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    return main([args[0], *base, *args[1:]])


def test_a_plain_apply_keeps_an_opt_in_applied_before_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    assert run(s, "apply", "--include", "extra") == 0
    assert s.read("b.txt") == b"b one\nb TWO\n"
    capsys.readouterr()
    assert run(s, "apply") == 0
    assert s.read("b.txt") == b"b one\nb TWO\n"  # still applied
    assert "kept opt-in patch extra" in capsys.readouterr().err
    assert run(s, "apply", "--exclude", "extra") == 0
    assert s.read("b.txt") == b"b one\nb two\n"  # dropped when asked
    assert s.read("a.txt") == b"a one\na TWO\n"


def test_a_failed_apply_lists_no_patch_as_applied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    s.add("p3", {"a.txt": "a one\na two\nthree\n"})  # made on the base: conflicts with p1
    assert run(s, "apply", "--json") == 6
    data = json.loads(capsys.readouterr().out)
    assert data["written"] is False
    states = {p["id"]: p["state"] for p in data["patches"]}
    assert states["p1"] == "not-applied"
    assert s.read("a.txt") == b"a one\na two\n"
