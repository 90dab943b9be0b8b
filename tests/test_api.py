"""The Python API: ``import patchkit`` exports the verbs and result types, loads none of them until
used, and each name is what the verb module defines."""

from __future__ import annotations

import importlib
import subprocess
import sys

import patchkit


def test_every_exported_name_resolves_to_its_definition() -> None:
    assert sorted(patchkit.__all__) == sorted(["__version__", *patchkit._API])
    for name, spec in patchkit._API.items():
        module, attribute = spec.split(":")
        assert getattr(patchkit, name) is getattr(importlib.import_module(module), attribute)


def test_importing_patchkit_loads_no_verb() -> None:
    code = "import patchkit, sys; print(sorted(m for m in sys.modules if m.startswith('patchkit')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['patchkit']"


def test_verbs_take_keywords_only() -> None:
    import inspect

    for name in ("apply", "status", "reset", "show", "record", "verify", "rebase", "fetch"):
        params = inspect.signature(getattr(patchkit, name)).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), name
