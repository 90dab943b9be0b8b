"""scripts/bench_moved.py on a small history built here: an edit to a function, then a commit
that moves the function to another file; the case ports the edit onto the moved code."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import PROJECT_ROOT, dedent
from tests.scripts.test_bench_port import _commit, git


def _load() -> ModuleType:
    sys.path.insert(0, str(PROJECT_ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(
        "bench_moved", PROJECT_ROOT / "scripts" / "bench_moved.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_moved"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()

UTIL = dedent(
    """
    import math


    def helper(values):
        return [v for v in values if v is not None]


    def compute(values, scale):
        kept = helper(values)
        total = math.fsum(kept)
        total = total * scale
        return total
    """
)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    work = tmp_path_factory.mktemp("moved") / "work"
    work.mkdir()
    git(work, "init", "-q")
    _commit(work, "start", **{"util.py": UTIL})
    edited = UTIL.replace("total * scale", "min(total * scale, 1e9)")
    edit = _commit(work, "clamp", **{"util.py": edited})
    function = edited[edited.index("def compute") :]
    moved = "import math\n\nfrom util import helper\n\n\n" + function
    move = _commit(
        work,
        "move compute",
        **{"util.py": edited.replace("\n\n" + function, ""), "stats.py": moved},
    )
    return {"repo": work / ".git", "edit": edit, "move": move, "moved": moved}


def test_a_move_and_the_earlier_edit_of_its_function_make_a_case(history: dict) -> None:
    (move,) = bench.moves(history["repo"], 50)
    assert (move.commit, move.name, move.old, move.new) == (
        history["move"],
        "compute",
        "util.py",
        "stats.py",
    )

    (case,) = bench.cases_of(history["repo"], move, 2)

    assert case.edit == history["edit"]
    assert case.truth == history["moved"].encode()
    assert (
        case.target == history["moved"].replace("min(total * scale, 1e9)", "total * scale").encode()
    )


def test_patchkit_follows_the_moved_function_where_line_tools_fail(
    history: dict, tmp_path: Path
) -> None:
    (move,) = bench.moves(history["repo"], 50)
    (case,) = bench.cases_of(history["repo"], move, 2)

    runs = bench.run(case, tmp_path, "api")

    assert runs["patchkit"][0] == "exact"
    assert runs["git apply"][0] == "failed"
