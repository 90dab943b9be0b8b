"""A fake GitHub CLI for tests: a ``gh`` script put first on ``PATH`` that records each argv
(one JSON line per call) and prints canned answers, first matching rule wins. No network."""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SCRIPT = """#!{python}
import json, sys
spec = json.load(open({spec!r}))
argv = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(json.dumps(argv) + "\\n")
line = " ".join(argv)
for rule in spec:
    if argv[: len(rule["args"])] == rule["args"] and rule.get("contains", "") in line:
        sys.stdout.write(rule.get("stdout", ""))
        sys.stderr.write(rule.get("stderr", ""))
        sys.exit(rule.get("rc", 0))
sys.stderr.write("fake gh: no canned answer for: " + line + "\\n")
sys.exit(1)
"""


@dataclass
class FakeGh:
    root: Path
    rules: list[dict[str, Any]] = field(default_factory=list)

    @property
    def log(self) -> Path:
        return self.root / "gh-calls.jsonl"

    def on(self, *args: str, contains: str = "", out: Any = "", rc: int = 0, err: str = "") -> None:
        """Answer calls starting with ``args`` (and holding ``contains``) with ``out`` (JSON
        when not a string); earlier rules win."""
        stdout = out if isinstance(out, str) else json.dumps(out)
        rule = {"args": list(args), "contains": contains, "stdout": stdout, "rc": rc}
        self.rules.append({**rule, "stderr": err})
        (self.root / "gh-spec.json").write_text(json.dumps(self.rules))

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, logged_in: bool = True) -> FakeGh:
    """Install a fake ``gh`` first on ``PATH``; ``gh auth status`` answers as ``logged_in``."""
    root = tmp_path / "fake-gh"
    (root / "bin").mkdir(parents=True)
    gh = FakeGh(root)
    gh.on("auth", "status", rc=0 if logged_in else 1, err="" if logged_in else "not logged in")
    script = root / "bin" / "gh"
    spec, log = str(root / "gh-spec.json"), str(gh.log)
    script.write_text(SCRIPT.format(python=sys.executable, spec=spec, log=log))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return gh
