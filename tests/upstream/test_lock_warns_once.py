"""A message is said once: loading the lock again (a command does, several times) repeats no
warning about its pins."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from patchkit.project.lock import load_lock


def test_a_pin_warning_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lock = tmp_path / "upstream.lock"
    lock.write_text(
        '[targets.vllm]\nrepository = "r"\nversion = "1"\ncommit = "abcdef0123"\n'
        'source = { kind = "index", package = "vllm" }\npins = { flashinfer = "0.7.1" }\n\n'
        '[targets.flashinfer]\nrepository = "r"\nversion = "0.6.6"\ncommit = "1234567890"\n'
        'source = { kind = "index", package = "flashinfer-python" }\n'
    )
    with caplog.at_level(logging.WARNING):
        load_lock(lock)
        load_lock(lock)
    said = [
        r.getMessage() for r in caplog.records if "pins says flashinfer 0.7.1" in r.getMessage()
    ]
    assert len(said) == 1
