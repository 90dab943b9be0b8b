"""Rewrite patches (libcst), stage by stage: ``load`` imports and checks a rewrite module (its
classes on ``base.Rewrite``), ``select`` picks candidate files from their text, ``file`` rewrites
one file, ``outcome`` judges the anchors over every file (``report`` the values it reads),
``cache`` keeps each file's run, and ``run`` runs a whole patch.

A rewrite module imports its base class from here (``from patchkit.engine.rewrite import
Rewrite``, the name patch sets use), on first use: the warm path reads results through
``outcome`` and ``cache`` without importing libcst.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from patchkit.engine.rewrite.base import Rewrite

__all__ = ["Rewrite"]


def __getattr__(name: str) -> type[Rewrite]:
    if name != "Rewrite":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from patchkit.engine.rewrite.base import Rewrite  # libcst: only when a rewrite module runs

    return Rewrite
