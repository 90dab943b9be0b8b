"""Running git: one command at a time in a clean environment.

:func:`run` removes inherited ``GIT_*`` variables, sets the C locale, logs ``$ git ...`` (logger
``patchkit.git``) and raises :class:`GitError` with the command, exit code and stderr.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from patchkit.errors import GitError
from patchkit.gitrepo.safeconfig import SAFE_ENV, no_filters

log = logging.getLogger("patchkit.git")

FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "patchkit",
    "GIT_AUTHOR_EMAIL": "patchkit@localhost",
    "GIT_COMMITTER_NAME": "patchkit",
    "GIT_COMMITTER_EMAIL": "patchkit@localhost",
}


# Every value that comes from a file, an argument or upstream goes after this (git >= 2.24):
# git then never reads it as an option, whatever it starts with.
EOO = "--end-of-options"


def not_option(value: str) -> str:
    """``value`` for a git command that takes no ``--end-of-options`` in its place (``checkout
    --detach``, ``grep``'s revision, ``commit-tree``'s tree and parents): refused when git would
    read it as an option."""
    if value.startswith("-"):
        raise GitError(
            f"refuses to give git {value!r}: it starts with `-`, and git would read it as an "
            "option",
            hint="name a commit, tag or branch; nothing was run",
        )
    return value


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    # GIT_OPTIONAL_LOCKS=0: a read (``git status``) never takes the index lock, so a reader
    # running beside a writer (fetch, checkout) neither fails on nor blocks ``index.lock``.
    env.update(
        {"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    )
    env.update(SAFE_ENV)  # no fsmonitor, hooks or transport a configuration names
    if extra:
        env.update(extra)
    return env


def run(
    args: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    ok_codes: tuple[int, ...] = (0,),
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git <args>``; raise GitError unless the exit code is in ``ok_codes``."""
    cmd = ["git", *map(str, args)]
    log.debug("$ %s", " ".join(cmd))
    full_env = clean_env(env)
    try:
        proc = subprocess.run(
            ["git", *no_filters(cwd, full_env), *cmd[1:]],
            cwd=cwd,
            input=input,
            env=full_env,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise GitError(
            f"`{cmd[0]}` is not installed, and `{' '.join(cmd)}` needs it",
            hint="install git, or use --installed trees, which do not need it",
        ) from None
    if proc.returncode not in ok_codes:
        stderr = proc.stderr.decode(errors="replace").strip()
        raise GitError(
            f"`{' '.join(cmd)}` failed with exit code {proc.returncode} in {cwd}: {stderr}"
        )
    return proc
