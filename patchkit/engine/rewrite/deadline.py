"""A time limit on the code of a rewrite module: importing it, the regexes its ``needles``
name, rewriting one file. A rewrite comes from a patch set anyone may share; a loop that
never ends or a regex that backtracks for ever (``(a+)+$``) must end in a failed patch that
names it, never in a command that waits for ever.

The limit is ``PATCHKIT_REWRITE_TIMEOUT`` seconds (default 120; 0, a negative, a huge or no
number stops the command naming the variable, exit 2, never one patch: a rewrite always has a
limit) for each step, measured with ``SIGALRM`` in the main thread (the CLI, each worker
process of a pool); elsewhere (a thread) the step runs unbounded. Past the limit
the alarm repeats every ``REPEAT_S``, so code that loops again in a ``finally:`` is stopped
too (the gate refuses the handlers that would catch it). Nested limits keep the outer one's
remaining time."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

from patchkit.errors import ConfigError
from patchkit.trust.envvars import seconds

DEFAULT_S = 120.0
REPEAT_S = 0.5


class _Expired(BaseException):
    """Raised by the timer: a BaseException, so no ``except Exception`` in the rewrite or in
    libcst can swallow it and go on looping."""


def _expired(signum: int, frame: FrameType | None) -> None:
    raise _Expired


@contextlib.contextmanager
def bounded(what: str) -> Iterator[None]:
    """Run the block within the rewrite time limit; ConfigError naming ``what`` past it."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return
    limit = _limit()
    previous = signal.signal(signal.SIGALRM, _expired)
    outer, outer_every = signal.setitimer(signal.ITIMER_REAL, 0)
    started = time.monotonic()
    outer_first = bool(outer) and outer <= limit
    signal.setitimer(signal.ITIMER_REAL, outer if outer_first else limit, REPEAT_S)
    try:
        yield
    except _Expired:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if not outer_first:
            raise ConfigError(
                f"{what}: still running after {limit:g} s; stopped",
                hint="a rewrite must end: look for a loop without end or a regex that "
                "backtracks (PATCHKIT_REWRITE_TIMEOUT sets the limit in seconds)",
            ) from None
        outer = 0  # the outer limit's time is up: its handler says what that means
        signal.signal(signal.SIGALRM, previous)
        if callable(previous):
            previous(signal.SIGALRM, None)
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), outer_every)


def _limit() -> float:
    """PATCHKIT_REWRITE_TIMEOUT; SettingRefused (the command stops, exit 2) unless a number
    of seconds above 0 (a rewrite always has a limit) and at most a day."""
    return seconds("PATCHKIT_REWRITE_TIMEOUT", DEFAULT_S, above_zero=True)
