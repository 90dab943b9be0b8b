"""The CI recipes in examples/ci: every ``patchkit`` command they run parses with the real
command line, and the workflow keeps patchkit's cache directory between runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from patchkit.cli import build_parser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ci"


def _commands(text: str) -> list[list[str]]:
    """Each ``patchkit ...`` command in ``text`` (``${{ ... }}`` and ``$VAR`` made words)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    plain = re.sub(r"\$\{\{[^}]*\}\}", "X", "\n".join(lines)).replace('"', "")
    out = []
    for part in re.split(r"&&|>>|\n", plain):
        words = shlex.split(part)
        if words and words[0] == "patchkit":
            out.append(words[1:])
    return out


def _workflow_runs(flow: dict[str, Any]) -> str:
    return "\n".join(s["run"] for job in flow["jobs"].values() for s in job["steps"] if "run" in s)


def test_the_workflow_runs_watch_nightly_with_a_cached_cache() -> None:
    flow = yaml.safe_load((EXAMPLES / "patchkit-watch.yml").read_text())
    assert flow[True]["schedule"][0]["cron"]  # PyYAML reads the key `on` as True
    job = flow["jobs"]["watch"]
    cache = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache"))
    assert cache["with"]["path"] == ".patchkit-cache" in job["env"]["PATCHKIT_CACHE"]
    commands = _commands(_workflow_runs(flow))
    assert [c[0] for c in commands] == ["watch"]
    assert {"--once", "--push", "--open-pr", "--report"} <= set(commands[0])


def test_every_patchkit_command_in_the_recipes_parses() -> None:
    found = []
    flow = yaml.safe_load((EXAMPLES / "patchkit-watch.yml").read_text())
    cron = (EXAMPLES / "patchkit-watch.cron").read_text()
    for text in (_workflow_runs(flow), cron):
        for argv in _commands(text):
            args = build_parser(only=argv[0]).parse_args(argv)
            assert args.once
            found.append(argv[0])
    assert found == ["watch"] * 3
