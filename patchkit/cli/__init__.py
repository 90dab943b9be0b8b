"""The command line: a thin layer over the plain Python API. Parses arguments, builds the real
objects once (project, tree, blob sources), calls one function, renders its result. Expected
errors become a message and a documented exit code; never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit import __version__, progress
from patchkit.errors import EXIT_CODES, PatchkitError

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Command:
    """A CLI verb. Its module ``patchkit/cli/<name>.py`` (``-`` read as ``_``; ``import``:
    ``import_.py``) declares its arguments (``add_arguments(parser)``) and runs it
    (``run(args) -> int``)."""

    name: str
    help: str
    run: str = ""  # "module:function" that runs it instead (apply, status: through cli/warm.py)

    @property
    def module(self) -> str:
        return "patchkit.cli." + (
            "import_" if self.name == "import" else self.name.replace("-", "_")
        )

    @property
    def handler(self) -> str:
        return self.run or f"{self.module}:run"


COMMANDS = (
    Command("fetch", "materialise the locked upstream tree in the cache"),
    Command(
        "apply", "apply the patch sets to a tree, all or nothing", run="patchkit.cli.warm:apply_cmd"
    ),
    Command(
        "status",
        "per patch: applied / not applied / modified, and last verification",
        run="patchkit.cli.warm:status_cmd",
    ),
    Command("reset", "restore every patched file to its upstream bytes"),
    Command(
        "cache",
        "what patchkit keeps in its cache, by kind and size; `cache prune` removes the unused",
    ),
    Command("show", "print the unified diff a patch makes on the locked tree"),
    Command("record", "turn edits in a checkout into a diff patch, or refresh one"),
    Command("verify", "run each patch's own tests against the patched tree; record the result"),
    Command(
        "rebase", "move the lock to a new upstream commit or release and carry every patch along"
    ),
    Command(
        "retire",
        "retire a patch upstream merged: its metadata says merged, in which release (and PR)",
    ),
    Command(
        "port",
        "apply one diff made at a base commit to a checkout at any commit (rebase's plumbing)",
    ),
    Command(
        "import",
        "turn the patches people carry (run.sh mods, replace scripts, diffs, series) into a set",
    ),
    Command(
        "export-series",
        "write the sets as a quilt series or git format-patch mail at the locked commit",
    ),
    Command(
        "matrix",
        "every patch x every upstream release: the outcome in each, as HTML, Markdown or JSON",
    ),
    Command(
        "export-pr", "one upstream-ready branch per patch, with its commit message and PR text"
    ),
    Command(
        "upstream-check",
        "find upstream PRs making the same fix as each patch (GitHub CLI); record their state",
    ),
    Command(
        "watch", "rebase onto upstream versions newer than the lock on a branch, with a report (CI)"
    ),
)


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, at the width it would take, found without ``shutil``: argparse
    imports it (and with it the archive codecs) to ask the terminal's size for every argument
    added, on every run, though help is rarely printed."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_columns() - 2)  # (argparse keeps two columns free)


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` says it: $COLUMNS, else the width
    of the terminal on stdout, else 80."""
    with contextlib.suppress(ValueError):
        if int(os.environ.get("COLUMNS", "")) > 0:
            return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only``, that one command alone, so a run builds one
    parser and imports the modules its command needs and no others (rebase's index client...)."""
    parser = argparse.ArgumentParser(
        formatter_class=_Formatter,
        prog="patchkit",
        description="Keep downstream source patches for vLLM and FlashInfer alive.",
        epilog="exit codes: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()),
    )
    parser.add_argument("--version", action="version", version=f"patchkit {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log git commands")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress (bars on a terminal, timestamped lines on stderr otherwise)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        if only is not None and only != command.name:
            continue  # a parser per command costs: build the chosen one's alone
        parser_ = sub.add_parser(
            command.name, help=command.help, description=command.help, formatter_class=_Formatter
        )
        parser_.add_argument(  # also after the command: `patchkit rebase ... --quiet`
            "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        _resolve(f"{command.module}:add_arguments")(parser_)
        parser_.set_defaults(handler=command.handler)
    return parser


def _verb_parser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and verb in action.choices:
            found: argparse.ArgumentParser = action.choices[verb]
            return found
    return parser


def configure_logging(args: argparse.Namespace) -> None:
    """Log lines as "patchkit: ..." on stderr (git commands too with --verbose). ``logging``
    is imported here, not at the top: a warm run logs nothing and does not pay for it."""
    import logging

    from patchkit.cli.render import log_lines_visible  # (rendering: the full path alone)

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="patchkit: %(message)s"
    )
    log_lines_visible()


def _resolve(spec: str) -> Callable[..., Any]:
    module, function = spec.split(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), function)
    return found


def _crash_log() -> Path:
    import tempfile
    import traceback

    from patchkit.cache import Cache

    try:
        path = Cache.current().crash_log()
    except PatchkitError:  # a cache patchkit does not trust: the log goes elsewhere
        path = Path(tempfile.mkdtemp(prefix="patchkit-crash-")) / "crash.log"
    path.write_text(traceback.format_exc())
    return path


def _lenient_output() -> None:
    """Paths from a diff may hold bytes that are no UTF-8 (kept as surrogates): print them
    escaped rather than fail on them."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = {command.name for command in COMMANDS}
    chosen = next((word for word in argv if word in names), "")
    parser = build_parser(only=chosen or None)
    args, extra = parser.parse_known_args(argv)
    if extra:  # a typo in a verb's flags: that verb's usage, not the top level's
        _verb_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    _lenient_output()
    if not args.handler.startswith("patchkit.cli.warm:"):
        configure_logging(args)  # (a warm path configures it when it takes the full path)
    progress.configure(quiet=args.quiet)
    try:
        code: int = _resolve(args.handler)(args)
        return code
    except BaseException as exc:
        return _failed(exc)


def _failed(exc: BaseException) -> int:
    """The message and exit code of a command that raised. Rendering (rich on a terminal, and
    the data model the tables draw) is imported here, at the edge, and only here: a command
    that ends well without drawing a table (a warm ``apply``) never loads it."""
    from patchkit.cli.render import err_console, literal

    if isinstance(exc, PatchkitError):
        err_console.print(f"[red]error:[/] {literal(exc.message)}", markup=True, soft_wrap=True)
        if exc.hint:
            err_console.print(f"  [bold]what to do:[/] {literal(exc.hint)}", soft_wrap=True)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        err_console.print("interrupted")
        return 130
    if not isinstance(exc, Exception):
        raise exc  # SystemExit and the like go on
    log = _crash_log()  # (called while the exception is handled: its traceback is at hand)
    err_console.print(
        f"[red]internal error[/]: a bug in patchkit. Details in {log}; "
        "please report it with that file."
    )
    return 70
