"""Where patchkit keeps what it fetches and computes: outside any project tree.

``PATCHKIT_CACHE`` overrides the default, the user's cache directory (platformdirs).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_root() -> Path:
    env = os.environ.get("PATCHKIT_CACHE")
    root = Path(env).expanduser() if env else _user_cache()
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_dir(*parts: str) -> Path:
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _user_cache() -> Path:
    """The user's cache directory, as platformdirs says; on Linux (the XDG rule) without
    importing it, on every command."""
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
        return base / "patchkit"
    import platformdirs

    return Path(platformdirs.user_cache_dir("patchkit"))
