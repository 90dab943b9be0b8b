"""Progress people can see, for the long steps (downloads, fetch, rebase's releases, verify's
patches): a spinner or bar on a terminal, plain timestamped lines on stderr when the output is a
log (CI), nothing with ``--quiet``. Lower layers report here; the CLI says how it is shown
(:func:`configure`). Imports only the standard library; rich is loaded on a terminal alone."""

from __future__ import annotations

import contextlib
import enum
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any, TextIO, TypeVar

    T = TypeVar("T")


# What a terminal acts on instead of showing: C0 and C1 controls but line breaks and tabs (ESC
# starts colours, titles, cursor moves; CR writes over the line), and the invisible format
# characters that reorder or hide text (bidi overrides, zero-width ones).
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
)
_NAMES = {"\0": "NUL", "\r": "CR", "\x1b": "ESC", "\x7f": "DEL"}


def visible(text: str) -> str:
    """``text`` with every character a terminal would act on rather than show named instead
    (``<ESC>``, ``<CR>``, ``<U+202E>``): a file name, a title or a tool's answer from input
    never colours, moves or rewrites what patchkit prints. Every line patchkit prints passes
    here: progress lines below, and the CLI's tables and messages (``cli.render``)."""
    if not _HIDDEN.search(text):
        return text
    return _HIDDEN.sub(lambda m: f"<{_NAMES.get(m[0], f'U+{ord(m[0]):04X}')}>", text)


def _line(text: str) -> str:
    """``text`` as one line of progress: :func:`visible`, its line breaks named too (a name
    with a newline would forge a line of the log)."""
    return visible(text).replace("\n", "<LF>")


def _unmarked(text: str) -> str:
    """``text`` as one line rich draws as it is: no bracket in it read as markup (a release
    named ``[/x]`` would end a style rich never opened, and raise)."""
    from rich.markup import escape

    return escape(_line(text))


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
    out.write(f"{stamp}{_line(message)}\n")
    out.flush()


_bar: list[tuple[Any, Any, str]] = []  # the bar on screen (a terminal has one at a time)


@contextlib.contextmanager
def step(message: str) -> Iterator[None]:
    """A long step: a spinner on a terminal (inside a bar: the bar says it); a line when it
    starts and one with its time when it ends, otherwise."""
    current = mode()
    if current is Mode.QUIET:
        yield
        return
    if current is Mode.TERMINAL:
        if _bar:  # one live display at a time: the bar shows the step in its description
            bar, task, label = _bar[-1]
            bar.update(task, description=f"{label} · {_unmarked(message)}")
            try:
                yield
            finally:
                bar.update(task, description=label)
            return
        from rich.console import Console

        with Console(stderr=True).status(_unmarked(message)):
            yield
        return
    start = time.monotonic()
    note(f"{message} ...")
    yield
    note(f"{message}: done in {time.monotonic() - start:.1f} s")


def steps(items: Iterable[T], label: str, name: Callable[[T], str] = str) -> Iterator[T]:
    """Each of ``items`` in turn, with "label 2 of 5: name(item)" shown as it starts (a bar on
    a terminal)."""
    listed = list(items)
    count = len(listed)
    current = mode()
    if current is Mode.QUIET:
        yield from listed
        return
    if current is Mode.TERMINAL:
        with _terminal_bar(label, count) as advance:
            for i, item in enumerate(listed, 1):
                advance(f"{label} {i} of {count}: {name(item)}", 0)
                yield item
                advance(f"{label} {i} of {count}: {name(item)}", 1)
        return
    for i, item in enumerate(listed, 1):
        note(f"{label} {i} of {count}: {name(item)}")
        yield item


def counting(items: Iterable[T], total: int, label: str, every_s: float = 2.0) -> Iterator[T]:
    """``items`` as they are done (results of a pool), counted: "label 7 of 25" on a bar on a
    terminal; a line at most every ``every_s`` seconds, and the last, otherwise."""
    current = mode()
    if current is Mode.QUIET or total == 0:
        yield from items
        return
    if current is Mode.TERMINAL:
        with _terminal_bar(label, total) as advance:
            for i, item in enumerate(items, 1):
                advance(f"{label} {i} of {total}", 1)
                yield item
        return
    said = time.monotonic()
    note(f"{label} 0 of {total}")
    for i, item in enumerate(items, 1):
        if i == total or time.monotonic() - said >= every_s:
            note(f"{label} {i} of {total}")
            said = time.monotonic()
        yield item


@contextlib.contextmanager
def _terminal_bar(label: str, total: int) -> Iterator[Callable[[str, int], None]]:
    from rich.progress import Progress

    if _bar:  # inside another bar: count in its description
        outer, task, base = _bar[-1]

        def inner(text: str, done: int) -> None:
            outer.update(task, description=f"{base} · {_unmarked(text)}")

        yield inner
        outer.update(task, description=base)
        return
    with Progress(transient=True) as bar:
        task = bar.add_task(_unmarked(label), total=total)
        _bar.append((bar, task, _unmarked(label)))

        def advance(text: str, done: int) -> None:
            _bar[-1] = (bar, task, _unmarked(text))
            bar.update(task, description=_unmarked(text), advance=done)

        try:
            yield advance
        finally:
            _bar.pop()
