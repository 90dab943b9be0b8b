"""Which tree-sitter grammar reads which file, and which of its nodes open a scope.

A grammar is loaded (and its query compiled) once per process, on first use; a file of a
language not listed here has no scopes, and placement falls back to lines alone.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import PurePosixPath

import tree_sitter

_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".inl": "cpp",
    ".c": "c",
    ".cmake": "cmake",
}

_C_FAMILY = (
    "function_definition",
    "namespace_definition",
    "class_specifier",
    "struct_specifier",
    "union_specifier",
    "enum_specifier",
    "preproc_if",
    "preproc_ifdef",
    "preproc_elif",
    "preproc_else",
    "linkage_specification",
    "preproc_function_def",
)
# The node kinds that open a scope, per language (kinds a grammar lacks are left out).
SCOPE_KINDS = {
    "python": ("class_definition", "function_definition"),
    "cpp": _C_FAMILY,
    "cuda": _C_FAMILY,
    "c": _C_FAMILY,
    "cmake": (
        "if_condition",
        "foreach_loop",
        "while_loop",
        "function_def",
        "macro_def",
        "block_def",
    ),
}


def language_of(path: str) -> str | None:
    """The grammar for a repository path, by its name: ``None`` for a file without one."""
    pure = PurePosixPath(path)
    if pure.name == "CMakeLists.txt":
        return "cmake"
    return _BY_SUFFIX.get(pure.suffix.lower())


@dataclass(frozen=True)
class Grammar:
    name: str
    parser: tree_sitter.Parser
    query: tree_sitter.Query


_MODULES = {
    "python": "tree_sitter_python",
    "cpp": "tree_sitter_cpp",
    "cuda": "tree_sitter_cuda",
    "c": "tree_sitter_c",
    "cmake": "tree_sitter_cmake",
}


def _language(name: str) -> tree_sitter.Language:
    module = importlib.import_module(_MODULES[name])
    return tree_sitter.Language(module.language())


@functools.cache
def grammar(name: str) -> Grammar:
    language = _language(name)
    kinds = [k for k in SCOPE_KINDS[name] if language.id_for_node_kind(k, True) is not None]
    query = tree_sitter.Query(language, "[" + " ".join(f"({k})" for k in kinds) + "] @scope")
    return Grammar(name, tree_sitter.Parser(language), query)


def same_language_patterns(path: str) -> list[str]:
    """Pathspecs for the files read with the same grammar as ``path`` (code moves between
    ``.h`` and ``.cuh`` files); just ``path``'s own suffix for a language without one."""
    language = language_of(path)
    if language is None:
        suffix = PurePosixPath(path).suffix
        return [f"*{suffix}"] if suffix else []
    patterns = [f"*{s}" for s, lang in _BY_SUFFIX.items() if lang == language]
    if language in ("cuda", "cpp"):  # CUDA and C++ headers hold each other's code
        other = "cpp" if language == "cuda" else "cuda"
        patterns += [f"*{s}" for s, lang in _BY_SUFFIX.items() if lang == other]
    return patterns + (["CMakeLists.txt"] if language == "cmake" else [])
