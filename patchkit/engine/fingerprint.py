"""The engine's fingerprint: what a cached result (a matrix cell, a rewrite run) was computed by.

Every module under ``patchkit/engine/`` (``structure/`` included), and the versions of the
parser libraries whose output placement and rewrites stand on (libcst, tree-sitter and its
grammars). A change to any of them is another fingerprint, so no cache serves a result an
older engine made. The source is read by path, never imported: a warm run that imports none
of the engine keys the same as a cold one.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

# The distributions whose behaviour is part of a result (tree-sitter grammars parse scopes),
# by the module each installs.
LIBRARIES = (
    ("libcst", "libcst"),
    ("tree-sitter", "tree_sitter"),
    ("tree-sitter-bash", "tree_sitter_bash"),  # shell scripts merged by statements
    ("tree-sitter-c", "tree_sitter_c"),
    ("tree-sitter-cmake", "tree_sitter_cmake"),
    ("tree-sitter-cpp", "tree_sitter_cpp"),
    ("tree-sitter-cuda", "tree_sitter_cuda"),
    ("tree-sitter-python", "tree_sitter_python"),
)


@functools.cache
def _infos(folder: str) -> tuple[str, ...]:
    """The ``.dist-info`` folder names in ``folder`` (listed once)."""
    try:
        return tuple(n for n in os.listdir(folder) if n.endswith(".dist-info"))
    except OSError:
        return ()


def version(distribution: str, module: str) -> str:
    """The installed version of ``distribution`` as importlib.metadata gives it, read from the
    ``.dist-info`` folder beside ``module`` (importing importlib.metadata would cost a warm
    apply a third of a second); importlib.metadata itself where there is no such folder."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        return "absent"
    places = spec.submodule_search_locations or ([spec.origin] if spec.origin else [])
    stem = distribution.replace("-", "_").lower()
    for place in places:
        for info in _infos(str(Path(place).parent)):
            name, _, rest = info[: -len(".dist-info")].partition("-")
            if name.replace(".", "_").lower() == stem and rest:
                return rest
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def compute(root: Path, libraries: tuple[tuple[str, str], ...] = LIBRARIES) -> str:
    """The fingerprint of the engine under ``root`` with these libraries (no cache)."""
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*.py")):
        if "__pycache__" in file.parts:
            continue
        name = file.relative_to(root).as_posix()
        digest.update(name.encode() + b"\0" + file.read_bytes() + b"\0")
    for distribution, module in libraries:
        digest.update(f"{distribution}=={version(distribution, module)}\0".encode())
    return digest.hexdigest()


@functools.cache
def engine_fingerprint() -> str:
    """The fingerprint of this process's engine (computed once)."""
    return compute(Path(__file__).parent)
