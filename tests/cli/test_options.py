"""One CLI convention: every verb is a module ``cli/<verb>.py`` with ``add_arguments`` and
``run``, and the options verbs share are declared once, in ``cli/options.py``, with one meaning
(``--project`` defaults to the current directory for every verb)."""

from __future__ import annotations

import argparse
import importlib
import os
from pathlib import Path

import pytest

from patchkit.cli import COMMANDS, build_parser

CLI = Path(__file__).resolve().parents[2] / "patchkit" / "cli"
SHARED = ("--target", "--set", "--project", "--json", "--include", "--explain")


def _verb(name: str) -> argparse.ArgumentParser:
    parser = build_parser(only=name)
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found: argparse.ArgumentParser = sub.choices[name]
    return found


@pytest.mark.parametrize("option", SHARED)
def test_a_shared_option_is_declared_once(option: str) -> None:
    declared = {f.name: f.read_text().count(f'"{option}"') for f in sorted(CLI.glob("*.py"))}
    assert {name: n for name, n in declared.items() if n} == {"options.py": 1}


def test_every_verb_is_its_own_module_with_add_arguments_and_run() -> None:
    for command in COMMANDS:
        module = importlib.import_module(command.module)
        assert callable(module.add_arguments), command.name
        assert command.run or callable(module.run), command.name
    assert not (CLI / "handlers.py").exists()


def test_project_defaults_to_the_current_directory_for_every_verb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    defaults = {}
    for command in COMMANDS:
        for action in _verb(command.name)._actions:
            if "--project" in action.option_strings:
                defaults[command.name] = action.default
    assert len(defaults) >= 14  # every verb but cache and port names a project
    assert set(defaults.values()) == {Path(os.getcwd())}
