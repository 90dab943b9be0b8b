"""Wrong TOML types in patch metadata, ``patchset.toml``, ``[export]`` and ``[[bench]]`` are
configuration errors naming the file and the key (exit 2), never a crash (exit 70)."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from patchkit.cli import main
from patchkit.errors import PatchkitError
from patchkit.project.sets import load_patchset
from testing.builders import Scenario

META_EXTRA = """
author = "A <a@example.com>"
optional = false
merged_in = ""
requires = []
issues = ["https://github.com/o/r/issues/1"]
[pr]
tags = ["Bugfix"]
scope = "fix"
hardware = ["9.0"]
since = "1.0"
[history]
absorbed_by = ""
broken_by = ""
[upstream]
state = "none"
[[tests]]
node = "tests/test_x.py"
gpu = false
gpu_kinds = ["H100"]
[[bench]]
callable = "tests/b.py::f"
cases = [{ a = 1 }]
gpu = true
graph = true
[export]
identity = "A <a@example.com>"
date = "2026-01-01T00:00:00Z"
"""
WRONG: list[Any] = [5, "x", [], {}, True, [1], [{}], {"a": 1}, 1.5]


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    s.add("p1", {"a.txt": "b\n"})
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(meta.read_text() + META_EXTRA)
    return s


def status(s: Scenario) -> int:
    project = str(s.project.path)
    return main(["status", "--target", "demo", "--project", project, "--checkout", str(s.root)])


@pytest.mark.parametrize(
    ("line", "key", "got"),
    [
        ("tests = 5", "tests", "an integer 5"),
        ('pr = "x"', "pr", "a string 'x'"),
        ('history = "x"', "history", "a string 'x'"),
        ("optional = 'no'", "optional", "a string 'no'"),
        ("merged_in = 5", "merged_in", "an integer 5"),
        ("requires = [1]", "requires", "an array"),
    ],
)
def test_a_wrong_type_names_the_file_and_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, key: str, got: str
) -> None:
    s = scenario(tmp_path)
    meta = s.set_root / "patches" / "p1.toml"
    data = tomlkit.parse(meta.read_text()).unwrap()
    data.update(tomlkit.parse(line).unwrap())
    meta.write_text(tomlkit.dumps(data))
    assert status(s) == 2
    err = capsys.readouterr().err
    assert f"p1.toml: key '{key}' must be" in err and f"(got {got}" in err


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    found = []
    for key, child in items:
        found.append((*prefix, key))
        if isinstance(child, (dict, list)):
            found += _paths(child, (*prefix, key))
    return found


def test_every_key_of_every_file_with_every_wrong_type_is_a_patchkit_error(
    tmp_path: Path,
) -> None:
    s = scenario(tmp_path)
    for path in (s.set_root / "patches" / "p1.toml", s.set_root / "patchset.toml"):
        text = path.read_text()
        data = tomlkit.parse(text).unwrap()
        for key_path in _paths(data):
            for value in WRONG:
                changed = copy.deepcopy(data)
                where = changed
                for key in key_path[:-1]:
                    where = where[key]
                where[key_path[-1]] = value
                path.write_text(tomlkit.dumps(changed))
                with contextlib.suppress(PatchkitError):  # anything else fails the test
                    load_patchset(s.set_root)
        path.write_text(text)
