"""What no git configuration may make a git command patchkit runs do: run a program. A
checkout's own ``.git/config`` (or a global one) can name programs git runs on its own: the
file system monitor, hooks, filter drivers (``filter.<name>.clean``/``smudge``/``process``,
run on ``status``, ``add`` and checkouts for the paths ``.gitattributes`` gives them), and
transports (``ext::``). Every git command patchkit runs gets settings over them: no
fsmonitor, no hooks, every filter driver a repository's own configuration names emptied and
not required (git then runs none; the person's global drivers, git-lfs's say, still run), and
fetches over https, http, ssh and local files only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SAFE_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("protocol.allow", "never"),
    *((f"protocol.{scheme}.allow", "always") for scheme in ("https", "http", "ssh", "file")),
)

# git >= 2.31 reads these as `-c key=value` each, over every configuration file; a git
# command run with the environment of :func:`patchkit.gitrepo.command.clean_env` has them
SAFE_ENV = {
    "GIT_CONFIG_COUNT": str(len(SAFE_CONFIG)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, (key, _) in enumerate(SAFE_CONFIG)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, (_, value) in enumerate(SAFE_CONFIG)},
}

_FILTER = r"^filter\."
_TRUSTED = (b"global", b"system")  # the person's own configuration, outside any repository
_drivers: dict[str, list[str]] = {}  # a directory -> the `-c` options for its filter drivers


def no_filters(cwd: Path | str | None, env: dict[str, str]) -> list[str]:
    """``-c`` options that empty every filter driver the repository seen from ``cwd`` names
    in its own configuration (not the person's global or system one), and make none
    required; read once per directory (``git config`` runs nothing)."""
    key = os.path.abspath(cwd or ".")
    found = _drivers.get(key)
    if found is None:
        try:
            proc = subprocess.run(
                ["git", "config", "-z", "--show-scope", "--name-only", "--get-regexp", _FILTER],
                cwd=cwd,
                env=env,
                capture_output=True,
                check=False,
            )
        except OSError:  # no git, or no such directory: the command itself says so
            return []
        drivers = sorted(_repository_drivers(proc.stdout.split(b"\0")))
        found = _drivers[key] = [
            option
            for driver in drivers
            for setting in ("clean=", "smudge=", "process=", "required=false")
            for option in ("-c", f"{driver}.{setting}")
        ]
    return found


def _repository_drivers(fields: list[bytes]) -> set[str]:
    """The filter drivers named in (scope, name) pairs of ``git config --show-scope``, but for
    the person's global and system configuration."""
    pairs = zip(fields[0::2], fields[1::2], strict=False)
    names = {
        name.decode(errors="surrogateescape") for scope, name in pairs if scope not in _TRUSTED
    }
    return {name.rsplit(".", 1)[0] for name in names if name.count(".") >= 2}
