"""Hostile inputs run through the CLI in this process, each under a deadline: an input that
makes patchkit wait forever fails its test instead of hanging the suite (SIGALRM in the main
thread; where a worker thread is the one stuck, faulthandler ends the run, loudly, a little
later)."""

from __future__ import annotations

import faulthandler
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

DEADLINE_S = 20


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    def expired(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"no answer within {DEADLINE_S} s: patchkit waits forever")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(DEADLINE_S)
    faulthandler.dump_traceback_later(DEADLINE_S + 10, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
