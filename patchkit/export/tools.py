"""Upstream's formatters at the versions upstream pins: read from ``.pre-commit-config.yaml``
at the base, each installed once into an isolated virtual environment of its own in patchkit's
cache (``<cache>/tools/<tool>-<version>/``, keyed by tool and version) with pip from the
package index. A tool on ``PATH`` reporting exactly the pinned version is the same program and
is used as it is (no network needed). A pinned tool that can be neither found nor installed
raises :class:`FormatterUnavailable`: export stops rather than format differently.

``PATCHKIT_TOOLS_OFFLINE=1`` forbids the install (the error then says which tool to provide)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from patchkit.cache import Cache
from patchkit.errors import FormatterUnavailable
from patchkit.trust.names import check_name
from patchkit.trust.paths import under

# pre-commit hook repository -> (tool, the PyPI distribution that ships that exact version)
HOOK_REPOS = {
    "astral-sh/ruff-pre-commit": ("ruff", "ruff"),
    "pre-commit/mirrors-clang-format": ("clang-format", "clang-format"),
}
_REPO = re.compile(r"^\s*-?\s*repo:\s*['\"]?(?P<repo>[^'\"\s#]+)")
_REV = re.compile(r"^\s*rev:\s*['\"]?(?P<rev>[^'\"\s#]+)")


@dataclass(frozen=True)
class Tool:
    name: str  # "ruff"
    version: str  # "0.14.0"
    path: Path  # the executable
    source: str  # "cached venv", "PATH"


def pinned_versions(config: bytes | None) -> dict[str, str]:
    """Tool name -> version, from the text of a ``.pre-commit-config.yaml`` (the hooks patchkit
    can run: ruff, clang-format)."""
    if not config:
        return {}
    pins: dict[str, str] = {}
    tool = None  # the tool of the last ``repo:`` line, until its ``rev:``
    for line in config.decode(errors="replace").splitlines():
        repo, rev = _REPO.match(line), _REV.match(line)
        if repo:
            slug = "/".join(repo.group("repo").rstrip("/").removesuffix(".git").split("/")[-2:])
            tool = HOOK_REPOS[slug][0] if slug in HOOK_REPOS else None
        elif rev and tool:
            pins[tool] = rev.group("rev").removeprefix("v")
            tool = None
    return pins


def _version_of(executable: Path | str) -> str | None:
    try:
        out = subprocess.run(
            [str(executable), "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+\.\d+\.\d+)", out)
    return match.group(1) if match else None


def _venv_bin(venv: Path, name: str) -> Path:
    """The tool's executable in its venv, refused (FormatterUnavailable) when a link takes it
    out of the cache: only what patchkit installed there is run."""
    tools = Cache.current().tools()
    inner = os.path.join(venv.name, "Scripts" if os.name == "nt" else "bin", name)
    return under(tools, inner, what=f"the cached {name}", error=FormatterUnavailable)


def _install(name: str, version: str, venv: Path) -> str:
    """pip-install ``name==version`` into a fresh venv at ``venv`` (in place: entry-point
    scripts name their interpreter by absolute path); "" or why it failed."""
    package = dict(HOOK_REPOS.values())[name]
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--disable-pip-version-check", "--no-input", f"{package}=={version}"],
    ]  # fmt: skip
    for argv in steps:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=900)
        if proc.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            return lines[-1] if lines else f"exit code {proc.returncode}"
    return ""


def tool_venv(name: str, version: str) -> Path:
    """The cache directory of ``name`` at ``version``: the version (upstream's ``rev:``) must be
    a name, and the directory stays inside the cache's ``tools/`` (it is run, and removed)."""
    hint = (
        f"upstream's .pre-commit-config.yaml pins {name} at a rev that is no version; "
        f"put {name} on PATH at the version upstream means, or fix the rev; nothing was exported"
    )
    where = f".pre-commit-config.yaml: rev of {name}"
    check_name(version, what="version", where=where, error=FormatterUnavailable, hint=hint)
    tools = Cache.current().tools()
    return under(tools, f"{name}-{version}", what=where, error=FormatterUnavailable)


def pinned_tool(name: str, version: str) -> Tool:
    """``name`` at exactly ``version``: the cached venv, else the one on PATH if it is that
    version, else installed into the cache now."""
    from filelock import FileLock

    venv = tool_venv(name, version)
    with FileLock(str(venv) + ".lock"):
        if _version_of(_venv_bin(venv, name)) == version:
            return Tool(name, version, _venv_bin(venv, name), "cached venv")
        on_path = shutil.which(name)
        if on_path and _version_of(on_path) == version:
            return Tool(name, version, Path(on_path), "PATH")
        if os.environ.get("PATCHKIT_TOOLS_OFFLINE"):
            why = "PATCHKIT_TOOLS_OFFLINE is set"
        else:
            why = _install(name, version, venv)
        if not why and _version_of(_venv_bin(venv, name)) == version:
            return Tool(name, version, _venv_bin(venv, name), "cached venv")
    raise FormatterUnavailable(
        f"upstream pins {name} {version} in .pre-commit-config.yaml, and it could not be "
        f"installed into {venv}: {why or 'the installed tool reports another version'}",
        hint=f"check that pip can reach the package index (pip install {name}=={version}), or "
        f"put {name} {version} on PATH; nothing was exported",
    )
