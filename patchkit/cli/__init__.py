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

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    """A CLI verb: where its arguments are declared and which handler runs it."""

    name: str
    help: str
    arguments: str  # "module:function" adding the command's arguments to its parser
    handler: str  # "module:function" taking the parsed arguments, returning the exit code


COMMANDS = (
    Command(
        "fetch",
        "materialise the locked upstream tree in the cache",
        "patchkit.cli:target_args",
        "patchkit.cli.handlers:fetch_cmd",
    ),
    Command(
        "apply",
        "apply the patch sets to a tree, all or nothing",
        "patchkit.cli:apply_args",
        "patchkit.cli.warm:apply_cmd",
    ),
    Command(
        "status",
        "per patch: applied / not applied / modified, and last verification",
        "patchkit.cli:tree_args",
        "patchkit.cli.warm:status_cmd",
    ),
    Command(
        "reset",
        "restore every patched file to its upstream bytes",
        "patchkit.cli:reset_args",
        "patchkit.cli.handlers:reset_cmd",
    ),
    Command(
        "cache",
        "what patchkit keeps in its cache, by kind and size; `cache prune` removes the unused",
        "patchkit.cli.cache:add_cache_args",
        "patchkit.cli.cache:cache_cmd",
    ),
    Command(
        "show",
        "print the unified diff a patch makes on the locked tree",
        "patchkit.cli:show_args",
        "patchkit.cli.handlers:show_cmd",
    ),
    Command(
        "record",
        "turn edits in a checkout into a diff patch, or refresh one",
        "patchkit.cli:record_args",
        "patchkit.cli.handlers:record_cmd",
    ),
    Command(
        "verify",
        "run each patch's own tests against the patched tree; record the result",
        "patchkit.cli.verify:add_verify_args",
        "patchkit.cli.verify:verify_cmd",
    ),
    Command(
        "rebase",
        "move the lock to a new upstream commit or release and carry every patch along",
        "patchkit.cli.rebase:add_rebase_args",
        "patchkit.cli.rebase:rebase_cmd",
    ),
    Command(
        "retire",
        "retire a patch upstream merged: its metadata says merged, in which release (and PR)",
        "patchkit.cli.retire:add_retire_args",
        "patchkit.cli.retire:retire_cmd",
    ),
    Command(
        "port",
        "apply one diff made at a base commit to a checkout at any commit (rebase's plumbing)",
        "patchkit.cli.port:add_port_args",
        "patchkit.cli.port:port_cmd",
    ),
    Command(
        "import",
        "turn the patches people carry (run.sh mods, replace scripts, diffs, series) into a set",
        "patchkit.cli.import_:add_import_args",
        "patchkit.cli.import_:import_cmd",
    ),
    Command(
        "export-series",
        "write the sets as a quilt series or git format-patch mail at the locked commit",
        "patchkit.cli.import_:add_export_series_args",
        "patchkit.cli.import_:export_series_cmd",
    ),
    Command(
        "matrix",
        "every patch x every upstream release: the outcome in each, as HTML, Markdown or JSON",
        "patchkit.cli.matrix:add_matrix_args",
        "patchkit.cli.matrix:matrix_cmd",
    ),
    Command(
        "export-pr",
        "one upstream-ready branch per patch, with its commit message and PR text",
        "patchkit.cli.export:add_export_args",
        "patchkit.cli.export:export_cmd",
    ),
    Command(
        "upstream-check",
        "find upstream PRs making the same fix as each patch (GitHub CLI); record their state",
        "patchkit.cli.upstream_check:add_upstream_check_args",
        "patchkit.cli.upstream_check:upstream_check_cmd",
    ),
    Command(
        "watch",
        "rebase onto upstream versions newer than the lock on a branch, with a report (CI)",
        "patchkit.cli.watch:add_watch_args",
        "patchkit.cli.watch:watch_cmd",
    ),
)


def target_args(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--target", "-t", required=required, help="vllm, flashinfer, ...")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        metavar="NAME",
        help="patch set to use (repeatable; default: all under patchsets/)",
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=Path.cwd(),
        help="the patch repository (holds upstream.lock); default: current dir",
    )


def tree_args(parser: argparse.ArgumentParser, *, tests: bool = False) -> None:
    target_args(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--checkout", type=Path, help="a target checkout (default: the cache's)")
    where.add_argument(
        "--installed",
        action="store_true",
        help="the installed distribution of the target (in site-packages) instead",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        metavar="PATH",
        help="the interpreter whose installed package (--installed) "
        + ("or tests (--verify) to use" if tests else "to use"),
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="PATCH",
        help="also use this opt-in patch (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def apply_args(parser: argparse.ArgumentParser) -> None:
    tree_args(parser, tests=True)
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATCH",
        help="drop an opt-in patch applied before (a plain apply keeps them)",
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="patch files that have uncommitted changes (reset restores them)",
    )
    parser.add_argument(
        "--allow-other-commit",
        action="store_true",
        help="apply to a tree at another upstream commit (three-way merges)",
    )
    parser.add_argument(
        "--verify", action="store_true", help="then run each patch's tests and record the result"
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="a patch that fails is left out and the rest apply (exit 11 says so); never the "
        'default (a patch\'s own on_failure = "skip" does the same for it alone)',
    )
    explain_arg(parser)


def explain_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--explain",
        action="store_true",
        help="per hunk of each diff: where it went (file:line, scope path) and by which rule",
    )


def reset_args(parser: argparse.ArgumentParser) -> None:
    tree_args(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="reset files edited after apply too, saving the edits aside first",
    )


def show_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("patch", help="patch id")
    target_args(parser, required=False)
    parser.add_argument("--checkout", type=Path, help="show against this checkout instead")
    parser.add_argument(
        "--releases",
        nargs="?",
        const="",
        metavar="FROM..TO|all",
        help="instead of the diff: the releases the patch works with (its matrix row; cells "
        "already computed are reused); default range: the lock's release to the newest",
    )


def record_args(parser: argparse.ArgumentParser) -> None:
    tree_args(parser)
    parser.add_argument("--patch", required=True, help="id of the new patch, or one to refresh")
    parser.add_argument("--title", default="")
    parser.add_argument("--why", default="", help="the bug, in a sentence or two")
    parser.add_argument("--author", default="")
    parser.add_argument("--into", metavar="SET", help="patch set to add a new patch to")
    parser.add_argument("paths", nargs="*", help="only these files (default: every edited file)")


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
        _resolve(command.arguments)(parser_)
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

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="patchkit: %(message)s"
    )


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


def entry() -> None:
    sys.exit(main())
