"""``python -m patchkit`` and the ``patchkit`` console script.

A command line the warm path understands (``apply`` or ``status`` with plain options, output
to a pipe or a file) is first replayed from the run recorded for it (``ops/warm.py``) before
anything else is imported: no parser of options, no CLI, no data model. Any other command line,
and a replay that misses, goes to the full command line (``patchkit.cli.main``), which parses
it, checks it and records the run for the next time.

The command lines read here are a strict subset of what the full parser accepts, each read as
it reads it (``tests/cli/test_warm.py`` checks the two agree): anything else, an abbreviated
option or an unknown one included, is left to the full parser.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

# option -> the name it is kept under; the values these take (one word each)
_VALUED = {
    "--target": "target",
    "-t": "target",
    "--project": "project",
    "--checkout": "checkout",
    "--python": "python",
    "--set": "sets",
    "--include": "include",
    "--exclude": "exclude",
}
_LISTS = ("sets", "include", "exclude")
_FLAGS = {"--json": "json", "-q": "quiet", "--quiet": "quiet"}
_APPLY_FLAGS = ("--allow-dirty", "--allow-other-commit", "--explain", "--keep-going")


def warm_request(argv: Sequence[str]) -> tuple[str, dict[str, object]] | None:
    """The command and its options, as the full parser reads them, when ``argv`` is an
    ``apply`` or ``status`` the warm path may replay; None for anything else."""
    words = list(argv)
    while words and words[0] in ("-q", "--quiet"):
        words.pop(0)
    if not words or words[0] not in ("apply", "status"):
        return None
    command, found = words[0], _defaults(words[0])
    seen: set[str] = set()
    rest = iter(words[1:])
    for word in rest:
        name, value = _option(command, word, rest)
        if name is None or (name in seen and name not in _LISTS and value is not True):
            return None  # unknown, abbreviated, malformed, or a one-value option given twice
        seen.add(name)
        listed = found[name] or [] if name in _LISTS else None
        found[name] = [*listed, value] if isinstance(listed, list) else value
    return (command, found) if found["target"] is not None else None


def _defaults(command: str) -> dict[str, object]:
    found: dict[str, object] = {
        "target": None,
        "project": os.getcwd(),
        "checkout": None,
        "python": sys.executable,
        "sets": None,  # (the full parser's default for a repeatable option: None, not [])
        "include": [],
        "json": False,
        "quiet": False,
    }
    if command == "apply":
        found["exclude"] = []
        found.update(
            dict.fromkeys(("allow_dirty", "allow_other_commit", "explain", "keep_going"), False)
        )
    return found


def _option(command: str, word: str, rest: Iterator[str]) -> tuple[str | None, str | bool]:
    """The option ``word`` names and its value (the next word of ``rest``, or after ``=``);
    None for one the warm path leaves to the full parser."""
    if word in _FLAGS:
        return _FLAGS[word], True
    if command == "apply" and word in _APPLY_FLAGS:
        return word[2:].replace("-", "_"), True
    option, equals, value = word.partition("=")
    name = _VALUED.get(option)
    if name is None or (command == "status" and name == "exclude"):
        return None, False
    if not equals:
        value = next(rest, "-")  # (none: refused below)
    if value.startswith("-") or (option == "-t" and equals):
        return None, False  # the full parser may read it as an option, or refuse it
    return name, value


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line: replayed when the warm path can, else in full."""
    argv = list(sys.argv[1:] if argv is None else argv)
    request = warm_request(argv)
    if request is not None:
        from patchkit.ops import warm  # (the warm path alone: no CLI yet)

        done = None if warm.to_terminal() else warm.replay_request(*request)
        if done is not None:
            sys.stdout.write(done.stdout)
            sys.stderr.write(done.stderr)
            return 0
    from patchkit.cli import main as full  # (the CLI, its parser and its tables)

    return full(argv)


if __name__ == "__main__":
    raise SystemExit(main())
