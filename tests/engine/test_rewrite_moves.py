"""Rewrites follow their code: a function moved to another file, a file renamed, a check folded
into a helper; count ranges; the candidate files come from text alone."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchkit.engine.rewrite.run
from patchkit.engine.rewrite.outcome import placements
from patchkit.engine.rewrite.run import run_rewrite_patch, run_rewrites
from patchkit.engine.rewrite.select import Selector, candidates, from_counts
from patchkit.engine.series import Blobs
from patchkit.ops.apply_tree import apply
from patchkit.outcome import Outcome, Rule
from patchkit.project.load import load_project
from patchkit.workspace.tree import checkout_tree
from testing.builders import run_git
from tests.ops.test_rebase import MOD, REWRITE, Releases

# -- through rebase, on a small upstream -------------------------------------------------------

SEARCHING = REWRITE.replace(
    'anchors = {"compute": 1}', 'anchors = {"compute": 1}\n    search = ("pkg/**/*.py",)'
)
OPS = "def compute(a, b):\n    total = a + b\n    return total\n"


@pytest.fixture
def rel(tmp_path: Path) -> Releases:
    return Releases(tmp_path, {"pkg/mod.py": MOD, "pkg/other.py": "X = 1\n"})


def _moved_out(rel: Releases) -> None:
    """Release 1.1: ``compute`` leaves pkg/mod.py for pkg/math/ops.py."""
    rest = MOD.replace(MOD[MOD.index("def compute") : MOD.index("def tail")], "")
    rel.release("1.1", {"pkg/mod.py": rest, "pkg/math/ops.py": OPS})


def test_a_function_moved_to_another_file_is_followed(rel: Releases) -> None:
    rel.rewrite("bump", SEARCHING)
    _moved_out(rel)
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("carried", "rewrite")}
    assert report.lock_moved


def test_without_a_search_the_moved_function_is_gone(rel: Releases) -> None:
    rel.rewrite("bump")  # names pkg/mod.py only
    _moved_out(rel)
    assert rel.outcomes(rel.rebase("v1.1"))["bump"][0] == "gone"


def test_a_renamed_file_is_followed_and_the_change_lands_there(rel: Releases) -> None:
    rel.rewrite("bump", SEARCHING)
    run_git(rel.upstream.path, "mv", "pkg/mod.py", "pkg/core.py")
    rel.release("1.1", {"pkg/core.py": "import os\n" + MOD})
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("carried", "rewrite")}
    project = load_project(rel.root)  # the lock moved: apply at 1.1 writes the renamed file
    blobs = Blobs([rel.upstream.path])
    try:
        applied = apply(
            tree=checkout_tree(rel.upstream.path, "demo"),
            entry=project.entry("demo"),
            patches=project.patches("demo"),
            blobs=blobs,
        )
    finally:
        blobs.close()
    assert list(applied.written) == ["pkg/core.py"]
    assert "total = a + b + 1" in (rel.upstream.path / "pkg/core.py").read_text()


def test_upstream_taking_the_fix_in_the_moved_file_is_upstreamed(rel: Releases) -> None:
    rel.rewrite("bump", SEARCHING)
    rest = MOD.replace(MOD[MOD.index("def compute") : MOD.index("def tail")], "")
    fixed = OPS.replace("a + b\n", "a + b + 1\n")
    rel.release("1.1", {"pkg/mod.py": rest, "pkg/math/ops.py": fixed})
    report = rel.rebase("v1.1")
    assert rel.outcomes(report) == {"bump": ("upstreamed", "probe")}
    assert report.patches[0].absorbed_by == "1.1"


# -- a capability check folded into a helper ---------------------------------------------------

GATE = '''\
import libcst as cst
from patchkit.engine.rewrite import Rewrite


class Gate(Rewrite):
    """``(9, 0) <= cap < (11, 0)`` admits SM12x: the bound becomes ``(13, 0)``, wherever the
    check lives under pkg/ (a method, or a helper it was folded into)."""

    path = "pkg/experts.py"
    search = ("pkg/**/*.py",)
    needles = (r"\\(9,\\s*0\\)",)
    anchors = ANCHORS

    def leave_Tuple(self, original_node, updated_node):
        code = cst.Module([]).code_for_node(updated_node).replace(" ", "")
        if not self.in_anchor or code not in ("(11,0)", "(13,0)"):
            return updated_node
        if code == "(13,0)":
            return self.present(updated_node)
        return self.changed(cst.parse_expression("(13, 0)"))
'''
TWO_CLASSES = """\
class A:
    def supported(cap):
        return (9, 0) <= cap < (11, 0)


class B:
    def supported(cap):
        return (9, 0) <= cap < (11, 0)
"""
FOLDED = """\
def _supported(cap):
    return (9, 0) <= cap < (11, 0)


class A:
    def supported(cap):
        return _supported(cap)


class B:
    def supported(cap):
        return _supported(cap)
"""
BY_SHAPE = '{"**": (1, 2)}'
BY_NAME = '{"A.supported": 1, "B.supported": 1}'


def _gate(tmp_path: Path, anchors: str) -> Path:
    file = tmp_path / "gate.py"
    file.write_text(GATE.replace("ANCHORS", anchors))
    return file


class Files:
    """An in-memory tree that can list itself."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.read_paths: list[str] = []

    def read(self, path: str) -> bytes | None:
        self.read_paths.append(path)
        return self.files[path].encode() if path in self.files else None

    def listing(self, directory: str) -> list[str]:
        return sorted(p for p in self.files if p.startswith(directory + "/"))


def test_both_checks_change_before_the_fold(tmp_path: Path) -> None:
    tree = Files({"pkg/experts.py": TWO_CLASSES})
    run = run_rewrites(_gate(tmp_path, BY_SHAPE), tree.read, tree.listing)
    assert run.outcome is Outcome.APPLIED
    assert [(s.path, s.qualname) for s in run.anchors[0].sites] == [
        ("pkg/experts.py", "A.supported"),
        ("pkg/experts.py", "B.supported"),
    ]


def test_a_check_folded_into_a_helper_is_found_in_the_helper(tmp_path: Path) -> None:
    tree = Files({"pkg/experts.py": FOLDED})
    result = run_rewrite_patch("gate", _gate(tmp_path, BY_SHAPE), tree.read, tree.listing)
    assert result.outcome is Outcome.APPLIED
    (change,) = result.changes
    assert change.content == FOLDED.replace("(11, 0)", "(13, 0)").encode()
    assert "at pkg/experts.py: _supported" in result.message
    (mark,) = result.placements  # what --explain shows
    assert (mark.path, mark.scope, mark.rule, mark.moved_from) == (
        "pkg/experts.py", ("_supported",), Rule.ANCHOR, None,
    )  # fmt: skip


def test_anchored_by_name_the_folded_check_is_a_conflict(tmp_path: Path) -> None:
    tree = Files({"pkg/experts.py": FOLDED})
    result = run_rewrite_patch("gate", _gate(tmp_path, BY_NAME), tree.read, tree.listing)
    assert result.outcome is Outcome.CONFLICT


def test_the_helper_moved_to_another_module_and_relaxed_upstream(tmp_path: Path) -> None:
    helper = FOLDED[: FOLDED.index("class A")].replace("(11, 0)", "(13, 0)")
    tree = Files(
        {
            "pkg/experts.py": "from pkg.caps import _supported\n\n\n" + FOLDED[len(helper) :],
            "pkg/util/caps.py": helper,
            "pkg/unrelated.py": "X = (11, 0)\n",
        }
    )
    run = run_rewrites(_gate(tmp_path, BY_SHAPE), tree.read, tree.listing)
    assert run.outcome is Outcome.UPSTREAMED
    assert [str(s) for s in run.anchors[0].sites] == ["pkg/util/caps.py: _supported"]
    assert "moved from pkg/experts.py" in run.anchors[0].message
    (mark,) = placements(run)
    assert (mark.path, mark.rule, mark.moved_from) == (
        "pkg/util/caps.py", Rule.UPSTREAM, "pkg/experts.py",
    )  # fmt: skip
    assert [f.path for f in run.files] == ["pkg/util/caps.py"]  # the rest fail the prefilter


def test_more_sites_than_the_range_is_ambiguous_naming_each(tmp_path: Path) -> None:
    third = (
        TWO_CLASSES
        + "\n\nclass C:\n    def supported(cap):\n        return (9, 0) <= cap < (11, 0)\n"
    )
    tree = Files({"pkg/experts.py": third})
    result = run_rewrite_patch("gate", _gate(tmp_path, BY_SHAPE), tree.read, tree.listing)
    assert result.outcome is Outcome.AMBIGUOUS
    assert result.changes == ()
    for name in ("A.supported", "B.supported", "C.supported"):
        assert f"pkg/experts.py: {name}" in result.message


def test_a_partly_relaxed_check_is_partly_upstreamed(tmp_path: Path) -> None:
    half = TWO_CLASSES.replace("(11, 0)", "(13, 0)", 1)
    tree = Files({"pkg/experts.py": half})
    result = run_rewrite_patch("gate", _gate(tmp_path, BY_SHAPE), tree.read, tree.listing)
    assert result.outcome is Outcome.PARTLY_UPSTREAMED
    assert result.changes[0].content == TWO_CLASSES.replace("(11, 0)", "(13, 0)").encode()


# -- the selector: candidates from text, no parse ----------------------------------------------


def test_only_candidate_files_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"pkg/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(50)}
    files["pkg/deep/experts.py"] = TWO_CLASSES
    tree = Files(files)
    parsed: list[str] = []
    original = patchkit.engine.rewrite.run.rewrite_file

    def spy(rewrites: object, path: str, data: bytes) -> object:
        parsed.append(path)
        return original(rewrites, path, data)  # type: ignore[arg-type]

    monkeypatch.setattr(patchkit.engine.rewrite.run, "rewrite_file", spy)
    run = run_rewrites(_gate(tmp_path, BY_SHAPE), tree.read, tree.listing)
    assert run.outcome is Outcome.APPLIED
    assert parsed == ["pkg/deep/experts.py"]


def test_selector_is_plain_data_and_candidates_need_no_rewrite_code() -> None:
    selector = Selector(
        "Gate", "pkg/experts.py", ("pkg/**/*.py",), (r"\(9,\s*0\)",), from_counts({"**": (1, 2)})
    )
    assert selector.to_json() == {
        "rewrite": "Gate",
        "home": "pkg/experts.py",
        "search": ["pkg/**/*.py"],
        "needles": [r"\(9,\s*0\)"],
        "anchors": {"**": [1, 2]},
    }
    tree = Files({"pkg/a.py": "X = (9, 0)\n", "pkg/b.py": "Y = 1\n", "other/c.py": "Z = (9, 0)\n"})
    assert list(candidates([selector], tree.read, tree.listing)) == ["pkg/a.py"]
    assert list(candidates([selector], tree.read, None)) == []  # no listing: the home only


def test_declared_files_may_name_what_the_search_changes_at_the_lock(tmp_path: Path) -> None:
    tree = Files({"pkg/experts.py": TWO_CLASSES, "pkg/oracle.py": TWO_CLASSES})
    gate = _gate(tmp_path, BY_SHAPE.replace("(1, 2)", "(1, 4)"))
    declared = ["pkg/experts.py", "pkg/oracle.py"]
    result = run_rewrite_patch("gate", gate, tree.read, tree.listing, declared)
    assert result.outcome is Outcome.APPLIED
    assert sorted(c.path for c in result.changes) == declared
    outside = run_rewrite_patch("gate", gate, tree.read, tree.listing, [*declared, "other/x.py"])
    assert outside.outcome is Outcome.FAILED
    assert "and search ['pkg/**/*.py']" in outside.message
