"""Progress people can see, for the long steps (downloads, fetch, rebase's releases, verify's
patches): a spinner or bar on a terminal, plain timestamped lines on stderr when the output is a
log (CI), nothing with ``--quiet``. Lower layers report here; the CLI says how it is shown
(:func:`configure`). Imports only the standard library; rich is loaded on a terminal alone."""

from __future__ import annotations

import contextlib
import enum
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


class Mode(str, enum.Enum):
    TERMINAL = "terminal"  # spinners and bars (rich)
    LINES = "lines"  # "12:03:07 fetching vllm 0.20.0" lines, for logs
    QUIET = "quiet"  # nothing


_mode: Mode | None = None  # None: decided by whether stderr is a terminal
_stream: TextIO | None = None  # where lines go (tests set it); default sys.stderr


def configure(
    *, quiet: bool = False, mode: Mode | None = None, stream: TextIO | None = None
) -> None:
    """How progress is shown from now on: ``quiet`` silences it; ``mode`` forces one."""
    global _mode, _stream
    _mode = Mode.QUIET if quiet else mode
    _stream = stream


def mode() -> Mode:
    if _mode is not None:
        return _mode
    return Mode.TERMINAL if sys.stderr.isatty() else Mode.LINES


def note(message: str) -> None:
    """One line of progress ("fetching vllm 0.20.0"), timestamped when not on a terminal."""
    current = mode()
    if current is Mode.QUIET:
        return
    out = _stream or sys.stderr
    stamp = "" if current is Mode.TERMINAL else time.strftime("%H:%M:%S ")
    out.write(f"{stamp}{message}\n")
    out.flush()


@contextlib.contextmanager
def step(message: str) -> Iterator[None]:
    """A long step: a spinner on a terminal; a line when it starts and one with its time when
    it ends, otherwise."""
    current = mode()
    if current is Mode.QUIET:
        yield
        return
    if current is Mode.TERMINAL:
        from rich.console import Console
        from rich.markup import escape

        with Console(stderr=True).status(escape(message)):  # a file name is no markup
            yield
        return
    start = time.monotonic()
    note(f"{message} ...")
    yield
    note(f"{message}: done in {time.monotonic() - start:.1f} s")


def steps(items: Iterable[T], label: str, name: Callable[[T], str] = str) -> Iterator[T]:
    """Each of ``items`` in turn, with "label 2/5: name(item)" shown as it starts (a bar on a
    terminal)."""
    listed = list(items)
    count = len(listed)
    current = mode()
    if current is Mode.QUIET:
        yield from listed
        return
    if current is Mode.TERMINAL:
        from rich.markup import escape
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task(escape(label), total=count)
            for item in listed:
                bar.update(task, description=escape(f"{label}: {name(item)}"))
                yield item
                bar.advance(task)
        return
    for i, item in enumerate(listed, 1):
        note(f"{label} {i}/{count}: {name(item)}")
        yield item
