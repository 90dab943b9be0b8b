"""Names that become one path segment: target names, set names, patch ids, ``import --into``,
tool names and versions. A name is one segment of a sane charset (letters, digits, ``._+-``),
starts with a letter, digit or ``_``, holds no ``..``, no ``/``, no NUL and is not too long;
anything else is refused with the file, the key and the way out."""

from __future__ import annotations

import re

from patchkit.errors import ConfigError, PatchkitError, shown

NAME_MAX = 128
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
RULE = (
    "a name is one path segment: letters, digits and `._+-`, starting with a letter, digit or "
    f"`_`, no `..`, at most {NAME_MAX} characters"
)


def name_problem(value: object) -> str | None:
    """Why ``value`` is not a safe name; None when it is one."""
    if not isinstance(value, str) or not value:
        return "it is empty" if value == "" else "it is not text"
    if len(value) > NAME_MAX:
        return f"it is {len(value)} characters long, more than {NAME_MAX}"
    if "/" in value or "\\" in value:
        return "it holds a path separator"
    if ".." in value:
        return "it holds `..`"
    if value.startswith("-"):
        return "it starts with `-` (it would be read as an option)"
    if not _NAME.fullmatch(value):
        return "it holds characters other than letters, digits and `._+-`"
    return None


def is_name(value: object) -> bool:
    return name_problem(value) is None


def check_name(
    value: object,
    *,
    what: str,
    where: str,
    error: type[PatchkitError] = ConfigError,
    hint: str | None = None,
) -> str:
    """``value`` when it is a safe name, else ``error`` naming ``where`` (the file and key, or
    the argument) and ``what`` the name is for."""
    problem = name_problem(value)
    if problem is None:
        assert isinstance(value, str)
        return value
    raise error(
        f"{where}: {what} {shown(value)} is refused: {problem}",
        hint=hint or f"rename it: {RULE}",
    )


# [ \t] rather than \s, and no control characters: an identity never spans lines
_CTL = "\x00-\x1f\x7f"
IDENTITY = re.compile(
    rf"[ \t]*(?P<name>[^<>{_CTL}]*?)[ \t]*<(?P<email>[^<>\s@{_CTL}]+@[^<>\s@{_CTL}]+)>[ \t]*"
)


def one_line_identity(text: object) -> re.Match[str] | None:
    """The match of ``text`` as one ``Name <email>`` line with a name (an author, a committer,
    a sign-off); None otherwise: a line break in it would forge trailers in a commit."""
    if not isinstance(text, str):
        return None
    match = IDENTITY.fullmatch(text)
    return match if match and match.group("name") else None


def author_line(text: object) -> str:
    """``text`` as one ``Name <email>`` line, or "" when it is not one."""
    match = one_line_identity(text)
    return f"{match['name']} <{match['email']}>" if match else ""
