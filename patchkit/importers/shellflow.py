"""What a failing command does to a mod's script, read from the text around it: a fallback
that lets the script go on (``|| echo ...``: the step is tolerated), one that ends it with an
error (``|| exit 1``: the step asserts), and whether ``set -e`` is in force."""

from __future__ import annotations

import re


def is_soft(text: str) -> bool:
    """A fallback that lets the script go on: ``echo ...``, ``true``, ``:``, ``printf``."""
    words = text.split()
    return bool(words) and words[0] in ("echo", "true", ":", "printf")


def stops(text: str) -> bool:
    """A fallback that ends the script with an error: ``exit 1``, ``false``, ``return 2``,
    ``{ echo ...; exit 1; }``."""
    return text.strip() == "false" or bool(re.search(r"\b(?:exit|return)\s+[1-9]", text))


def errexit(flags: tuple[str, ...], now: bool) -> bool:
    """Whether ``set FLAGS`` leaves errexit on: ``-e``, ``-eux``, ``-o errexit``; ``+e`` off."""
    for i, flag in enumerate(flags):
        if flag.startswith(("-", "+")) and not flag.startswith(("--", "-o", "+o")) and "e" in flag:
            now = flag.startswith("-")
        elif flag in ("-o", "+o") and flags[i + 1 : i + 2] == ("errexit",):
            now = flag == "-o"
    return now
