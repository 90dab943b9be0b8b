"""Values that come from files, arguments or upstream and become git arguments: refs, commit
ids, ranges, repository URLs. Each is validated here (never starting with ``-``, no control
characters, URL schemes allow-listed) and ``gitrepo`` passes it after ``--end-of-options``
or ``--`` as well: two locks on one door. A refusal is a ConfigError (exit 2) naming the file
and the key, or the argument."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from patchkit.errors import ConfigError, shown

_COMMIT = re.compile(r"[0-9a-fA-F]{4,64}")
# a revision as a person writes one: a ref, a tag, a commit, ``HEAD~2``, ``v1^{commit}``
_REV = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+@{}~^-]*")
REV_MAX = 256
URL_SCHEMES = ("https", "http", "ssh", "git+ssh", "ssh+git", "file")
_SCP = re.compile(r"(?P<user>[^@/:]+@)?(?P<host>[^/:]+):(?P<path>.*)")


def _refuse(value: object, where: str, what: str, why: str, hint: str) -> ConfigError:
    return ConfigError(f"{where}: {what} {shown(value)} is refused: {why}", hint=hint)


def rev_problem(value: object) -> str | None:
    """Why ``value`` is not a single revision git may be given; None when it is one."""
    if not isinstance(value, str) or not value:
        return "it is empty" if value == "" else "it is not text"
    if value.startswith("-"):
        return "it starts with `-` (git would read it as an option)"
    if len(value) > REV_MAX:
        return f"it is longer than {REV_MAX} characters"
    if ".." in value or "//" in value or "@{-" in value:
        return "it is not one revision (`..`, `//` or `@{-`)"
    if value.endswith((".", "/", ".lock")) or "/." in value:
        return "it is not a ref name git accepts"
    if not _REV.fullmatch(value):
        return "it holds characters no ref or commit id has (spaces, `:`, `*`, controls)"
    return None


def check_rev(value: object, *, where: str, what: str = "revision") -> str:
    """A branch, tag or commit id (``~``/``^`` suffixes allowed) from ``where``."""
    problem = rev_problem(value)
    if problem:
        hint = "name a tag, a branch or a commit id (hex), with no leading `-`"
        raise _refuse(value, where, what, problem, hint)
    assert isinstance(value, str)
    return value


def check_commit(value: object, *, where: str, what: str = "commit") -> str:
    """A hexadecimal commit id (4 to 64 digits) from ``where``."""
    if not isinstance(value, str) or not _COMMIT.fullmatch(value):
        raise _refuse(
            value, where, what, "it is not a commit id", "give the commit as 4 to 64 hex digits"
        )
    return value


def check_range(value: str, *, where: str) -> tuple[str, str]:
    """``A..B`` split into two revisions, each checked."""
    old, sep, new = value.partition("..")
    if not sep or new.startswith("."):
        raise _refuse(value, where, "range", "it is not `A..B`", "write the range as OLD..NEW")
    return check_rev(old, where=where, what="range start"), check_rev(
        new, where=where, what="range end"
    )


def url_problem(value: object) -> str | None:
    """Why ``value`` is not a repository location git may fetch from; None when it is one."""
    if not isinstance(value, str) or not value:
        return "it is empty" if value == "" else "it is not text"
    if value.startswith("-"):
        return "it starts with `-` (git would read it as an option)"
    if any(not ch.isprintable() or ch.isspace() for ch in value):
        return "it holds spaces or control characters"
    if "::" in value.split("/", 1)[0]:
        return "it names a remote helper (`transport::`), which runs a program"
    if "://" in value:
        return _scheme_problem(value)
    scp = _SCP.fullmatch(value)
    if scp and "/" not in value.split(":", 1)[0]:
        host = scp.group("host")
        return "its host starts with `-`" if host.startswith("-") else None
    return None  # a local path


def _scheme_problem(value: str) -> str | None:
    parts = urlsplit(value)
    if parts.scheme.lower() not in URL_SCHEMES:
        return f"scheme `{parts.scheme}` is not one of {', '.join(URL_SCHEMES)}"
    host = parts.hostname or ""
    if host.startswith("-") or parts.netloc.startswith("-"):
        return "its host starts with `-`"
    if parts.scheme.lower() != "file" and not host:
        return "it names no host"
    return None


def check_url(value: object, *, where: str, what: str = "url") -> str:
    """A repository URL (https, http, ssh, scp-like ``host:path``, ``file://``) or a local
    path from ``where``."""
    problem = url_problem(value)
    if problem:
        hint = "use an https://, ssh:// or file:// URL, or a local path, with no leading `-`"
        raise _refuse(value, where, what, problem, hint)
    assert isinstance(value, str)
    return value
