"""``apply`` and ``status`` on the command line, the full path: the run's output is kept, with
what it depended on, for the next run (``ops/warm_record.py``), which the entry
(``patchkit/__main__.py``) replays before the command line is even parsed (``ops/warm.py``)
when nothing it depended on changed.

Only output to pipes and files is recorded and replayed: a terminal draws with rich, at its
own width and colours. ``--verify``, ``--installed`` and ``--verbose`` always take the full
path (they run tests, read another interpreter's packages, or log each git command).
"""

from __future__ import annotations

import argparse
import sys
import time

from patchkit.cli import configure_logging
from patchkit.ops.warm import request_key, to_terminal

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import IO


def _key(command: str, args: argparse.Namespace) -> str | None:
    """The record's name for this command line, or None when it takes the full path."""
    if args.installed or args.verbose or getattr(args, "verify", False):
        return None
    if to_terminal():
        return None
    return request_key(command, vars(args))


class _Tee:
    """A text stream that also keeps what was written to it."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> object:  # isatty, flush, encoding...: the stream's
        return getattr(self.stream, name)

    @property
    def text(self) -> str:
        return "".join(self.parts)


class _Captured:
    """stdout and stderr written through and kept, for the record."""

    def __enter__(self) -> _Captured:
        self.out, self.err = _Tee(sys.stdout), _Tee(sys.stderr)
        sys.stdout, sys.stderr = self.out, self.err
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self.out.stream, self.err.stream


def apply_cmd(args: argparse.Namespace) -> int:
    key = _key("apply", args)
    started = time.time_ns()
    configure_logging(args)
    from patchkit.cli.apply import run_apply, show_apply  # the full path: the engine, tables
    from patchkit.cli.options import project_of

    project = project_of(args)
    applied = run_apply(args, project)
    with _Captured() as said:
        code = show_apply(args, project, applied)
    if key is not None and code == 0:
        from patchkit.ops.warm_record import record_apply

        record_apply(
            key,
            started_ns=started,
            start=args.project,
            project=project,
            done=applied,
            said=(said.out.text, said.err.text),
        )
    return code


def status_cmd(args: argparse.Namespace) -> int:
    key = _key("status", args)
    started = time.time_ns()
    configure_logging(args)
    from patchkit.cli.options import project_of, where_of  # the full path
    from patchkit.cli.status import show_status
    from patchkit.ops.status import status_target

    project = project_of(args)
    report = status_target(project=project, target=args.target, where=where_of(args))
    with _Captured() as said:
        code = show_status(args, report)
    if key is not None and code == 0:
        from patchkit.ops.warm_record import record_status

        record_status(
            key,
            started_ns=started,
            start=args.project,
            project=project,
            report=report,
            said=(said.out.text, said.err.text),
        )
    return code
