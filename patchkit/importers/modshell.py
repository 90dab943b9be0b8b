"""Steps of a mod that wrap other steps or install packages: ``bash -c 'SCRIPT'`` (read like
the script around it, its lines counted from the step's), ``sudo``/``exec CMD`` (the command
itself), and ``pip install`` (the patch's declared requirements: the packages named, never a
local path, a requirements file or an option's value)."""

from __future__ import annotations

import posixpath
import re

_SHELLS = ("bash", "sh", "dash", "zsh")
_PIP_VALUE = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root",
    "--python", "--platform", "--only-binary", "--no-binary", "--upgrade-strategy", "-C",
    "--config-settings", "--python-version", "--implementation", "--abi", "--src", "--cache-dir",
}  # fmt: skip  # options of pip install that take a value
MAX_INLINE = 8  # bash -c inside bash -c: levels read


def inline_script(name: str, words: tuple[str, ...]) -> str | None:
    """The script of ``bash -c SCRIPT`` (``-lc``, ``-ec``, ``-euxc``...); None for another
    command, or a shell running a file."""
    if name not in _SHELLS:
        return None
    for i, word in enumerate(words[1:-1], 1):
        if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", word):
            return words[i + 1]
        if not word.startswith("-"):
            return None
    return None


def wrapped(name: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The command ``sudo [-n -E -u USER] CMD`` or ``exec CMD`` runs (empty when none)."""
    rest = list(words[1:])
    if name == "sudo":
        while rest and rest[0].startswith("-"):
            rest = rest[2:] if rest[0] in ("-u", "-g") else rest[1:]
    return tuple(rest)


def is_pip(name: str, words: tuple[str, ...]) -> bool:
    """``pip``/``pip3``/``uv pip``/``python -m pip`` (any subcommand)."""
    if name in ("pip", "pip3") or (name == "uv" and words[1:2] == ("pip",)):
        return True
    return bool(re.fullmatch(r"python[\d.]*", name)) and words[1:3] == ("-m", "pip")


def requirements(words: tuple[str, ...]) -> list[str]:
    """The packages ``pip install`` names (empty for any other pip command)."""
    if "install" not in words:
        return []
    out, skip = [], False
    for word in words[words.index("install") + 1 :]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _PIP_VALUE
        elif not _local(word):
            out.append(word)
    return out


def _local(word: str) -> bool:
    """A path or a built file, not a package of the index: ``.``, ``./x``, ``/tmp/x.whl``."""
    return (
        word in (".", "..")
        or word.startswith(("/", "./", "../", "~"))
        or posixpath.splitext(word)[1] in (".whl", ".gz", ".zip", ".txt")
        or any(ch in word for ch in "*?")
    )
