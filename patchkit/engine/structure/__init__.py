"""The structure layer: tree-sitter scope trees for Python, C, C++, CUDA and CMake files.

``scopes_for(path, content)`` gives a file's :class:`ScopeTree` (or ``None`` for a language
without a grammar here); ``tree.scope_path(line)`` names the scope a line sits in.
"""

from patchkit.engine.structure.languages import language_of, same_language_patterns
from patchkit.engine.structure.scopes import Scope, ScopePath, ScopeTree, parse_scopes, scopes_for

__all__ = [
    "Scope",
    "ScopePath",
    "ScopeTree",
    "language_of",
    "parse_scopes",
    "same_language_patterns",
    "scopes_for",
]
