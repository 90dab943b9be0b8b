"""Where patchkit keeps what it fetches and computes: outside any project tree.

``PATCHKIT_CACHE`` overrides the default, the user's cache directory (platformdirs).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    env = os.environ.get("PATCHKIT_CACHE")
    if env:
        root = Path(env).expanduser()
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("patchkit"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_dir(*parts: str) -> Path:
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
