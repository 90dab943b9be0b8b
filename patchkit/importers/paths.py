"""Where a file named by an imported patch lives in the target's repository.

Container mods name installed files: ``usr/local/lib/python3.12/dist-packages/vllm/x.py`` (after
``patch -p1 -d /``), ``/usr/lib/python3/site-packages/flashinfer/data/include/...``, or paths
relative to a ``-d`` directory. Everything after ``site-packages/`` or ``dist-packages/`` is the
installed layout, mapped back through the target's profile (``flashinfer/data/include/`` is the
repository's ``include/``). Paths with no such marker are taken as repository paths.
"""

from __future__ import annotations

import posixpath
import re

from patchkit.targets import profile

_PACKAGES_DIR = re.compile(r"(?:^|/)(?:site|dist)-packages/")


def strip_components(path: str, n: int) -> str | None:
    """``patch -pN``: ``path`` without its first ``n`` components (None when too short)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) <= n:
        return None
    rest = "/".join(parts[n:])
    return "/" + rest if path.startswith("/") and n == 0 else rest


def installed_to_repo(installed: str, target: str) -> str | None:
    """A path inside site-packages (``vllm/x.py``) as the repository's path, if the target
    ships it."""
    prof = profile(target)
    if prof is None or not prof.installed_map:
        return installed
    for repo_prefix, inst_prefix in sorted(prof.installed_map, key=lambda m: -len(m[1])):
        if installed.startswith(inst_prefix):
            return repo_prefix + installed[len(inst_prefix) :]
    return None


def repo_path(raw: str, target: str, *, directory: str = "") -> str | None:
    """The repository path of a file a patch names as ``raw`` (prefix components already
    stripped), applied with ``patch -d directory``; None when it is no file of the target."""
    full = posixpath.normpath(posixpath.join("/", directory, raw)) if directory else raw
    marker = _PACKAGES_DIR.search(full)
    if marker:
        return installed_to_repo(full[marker.end() :], target)
    if directory:  # a -d outside site-packages: a checkout of the target, paths as they are
        return posixpath.normpath(raw)
    return None if raw.startswith("/") else posixpath.normpath(raw)
