"""A Dockerfile read as the build script it is: each instruction becomes the shell it stands
for, line for line (so a refusal names the Dockerfile's own line), then read like a ``run.sh``
(:mod:`patchkit.importers.shell`), never built or run.

- ``RUN [--mount=...] CMD`` is ``CMD`` (the exec form ``RUN ["a", "b"]`` is ``a b``), here-
  documents and continued lines kept;
- ``WORKDIR DIR`` is ``cd DIR`` (made if missing, as Docker does);
- ``ARG NAME=DEFAULT`` and ``ENV NAME=VALUE`` (or ``ENV NAME VALUE``) set the variable (an
  ``ARG`` without a default stays unknown: the build gives it);
- ``COPY``/``ADD SRC... DEST`` from the build context is ``cp SRC... DEST`` (a file of the
  context copied over the package: an overlay); ``COPY --from=STAGE`` copies from another image
  and is refused by name;
- every other instruction (``FROM``, ``CMD``, ``ENTRYPOINT``, ``LABEL``, ``EXPOSE``, ...) is a
  comment: it changes no file of the target.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)(?:\s+(.*))?$", re.DOTALL)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_FLAG = re.compile(r"^--[a-z-]+(=\S*)?\s+")
_NAME = re.compile(r"^(?:Dockerfile|Containerfile)(?:[._-].*)?$|.*\.(?:dockerfile|containerfile)$")


def is_dockerfile(path: Path) -> bool:
    return bool(_NAME.match(path.name))


def to_shell(source: bytes) -> bytes:
    """The Dockerfile's build steps as a shell script with the same lines."""
    lines = source.decode("utf-8", "replace").split("\n")
    out: list[str] = []
    at = 0
    while at < len(lines):
        end = _instruction_end(lines, at)
        out += _translate(lines[at:end])
        at = end
    return "\n".join(out).encode()


def _instruction_end(lines: list[str], start: int) -> int:
    """The line after the instruction that starts at ``start`` (continued lines and the bodies
    of its here-documents included)."""
    if not lines[start].strip() or lines[start].lstrip().startswith("#"):
        return start + 1
    at = start
    ends: list[str] = []
    while at < len(lines):
        line = lines[at]
        ends += [m.group(2) for m in _HEREDOC.finditer(line)]
        at += 1
        if line.rstrip().endswith("\\") or (line.lstrip().startswith("#") and at - 1 > start):
            continue
        while ends and at < len(lines):  # here-document bodies, in order
            if lines[at].strip() == ends[0]:
                ends.pop(0)
            at += 1
        return at
    return at


def _translate(block: list[str]) -> list[str]:
    first = block[0]
    if not first.strip() or first.lstrip().startswith("#"):
        return block
    match = _INSTRUCTION.match(first)
    keyword = match.group(1).upper() if match else ""
    rest = (match.group(2) or "") if match else ""
    # a comment line inside a continued instruction would end the shell's command: a bare
    # continuation keeps the line and the command together
    body = [rest, *("\\" if line.lstrip().startswith("#") else line for line in block[1:])]
    if keyword == "RUN":
        return _run(body)
    if keyword == "WORKDIR" and len(block) == 1:
        return [f"mkdir -p {rest.strip()} && cd {rest.strip()}"]
    if keyword in ("ARG", "ENV"):  # NAME=VALUE \ NAME2=VALUE2: shell words already
        return [_assign(keyword, rest.strip()), *body[1:]]
    if keyword in ("COPY", "ADD"):
        return [_copy(rest.strip()), *body[1:]]
    return [f"# {line}" for line in block]  # FROM, CMD, LABEL, ...: no file of the target


def _run(body: list[str]) -> list[str]:
    first = body[0].lstrip()
    while _FLAG.match(first):  # --mount=type=cache,target=/x --network=none
        first = _FLAG.sub("", first, count=1)
    if first.startswith("[") and len(body) == 1:
        try:
            words = json.loads(first)
        except ValueError:
            words = None
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return [shlex.join(words)]
    return [first, *body[1:]]


def _assign(keyword: str, rest: str) -> str:
    if "=" not in rest.split(" ", 1)[0]:  # ENV NAME VALUE (the old form); ARG NAME
        name, _, value = rest.partition(" ")
        if keyword == "ARG" or not value:
            return f"# ARG {name} (given by the build)"
        return f"export {name}={shlex.quote(value.strip())}"
    prefix = "export " if keyword == "ENV" else ""
    return prefix + rest  # NAME=VALUE NAME2="VALUE 2": already shell words


def _copy(rest: str) -> str:
    if re.search(r"(^|\s)--from=", rest):
        return f"COPY {rest}"  # from another image, not the build context: refused by name
    while _FLAG.match(rest):  # --chown=..., --chmod=..., --link
        rest = _FLAG.sub("", rest, count=1)
    if rest.startswith("["):
        try:
            words = json.loads(rest)
        except ValueError:
            words = None
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return "cp " + shlex.join(words)
    return f"cp {rest}"
