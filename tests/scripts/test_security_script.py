"""scripts/security.py --fast: the quick hostile cases of every class of issue 24, each a real
``python3 -m patchkit`` process on a temporary repository, all held (exit 0, a table)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_fast_hostile_cases_all_hold() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PATCHKIT_CACHE"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "security.py"), "--fast"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["class", "inputs", "tried", "held", "failed"]
    for kind in ("run code via git", "write outside root", "untrusted cache", "bounded input"):
        row = next(line for line in lines if line.startswith(kind))
        tried, held, failed = map(int, row[len(kind) :].split())
        assert tried == held and failed == 0, row


def test_a_case_that_fails_fails_the_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import security
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    crash = security.Case("demo", "a crash", lambda tmp: [security.Run(["--version"], (2,))])
    assert security.run_case(crash) is not None  # exit 0 where only 2 is documented
