"""The rewrite engine: anchors and counts, outcomes as values, idempotency, cache, text skip."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

import patchkit.engine.rewrite.run
from patchkit.engine.rewrite import Rewrite
from patchkit.engine.rewrite.load import load_rewrites, rewrite_paths
from patchkit.engine.rewrite.run import run_rewrite_patch
from patchkit.engine.series import Blobs, Overlay, run_patch, run_series, touched_paths
from patchkit.errors import ConfigError
from patchkit.model import PatchKind, PatchMeta
from patchkit.outcome import Outcome, Step
from testing.rewrites import assert_rewrite, run_rewrite

# -- rewrites used below ----------------------------------------------------------------------


class AddFlag(Rewrite):
    """``self.step(x)`` inside ``Runner.run`` gains ``flag=True``."""

    path = "pkg/runner.py"
    anchors = {"Runner.run": 1}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.in_anchor or not m.matches(updated_node.func, m.Attribute(attr=m.Name("step"))):
            return updated_node
        if any(a.keyword and a.keyword.value == "flag" for a in updated_node.args):
            return self.present(updated_node)
        flag = cst.Arg(cst.Name("True"), keyword=cst.Name("flag"), equal=_EQUAL)
        args = [*updated_node.args[:-1], updated_node.args[-1].with_changes(comma=_COMMA), flag]
        return self.changed(updated_node.with_changes(args=args))


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


class RaiseBound(Rewrite):
    """``cap < (11, 0)`` becomes ``cap < (13, 0)`` inside ``B.supported`` only."""

    path = "pkg/caps.py"
    anchors = {"B.supported": 1}

    def leave_Integer(self, original_node: cst.Integer, updated_node: cst.Integer) -> cst.Integer:
        if not self.in_anchor or updated_node.value not in ("11", "13"):
            return updated_node
        if updated_node.value == "13":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="13"))


class Limit(Rewrite):
    """The module-level ``LIMIT = 1`` becomes ``LIMIT = 2``."""

    path = "pkg/limits.py"
    anchors = {"LIMIT": 1}

    def leave_Integer(self, original_node: cst.Integer, updated_node: cst.Integer) -> cst.Integer:
        if self.current_anchor != "LIMIT":
            return updated_node
        if updated_node.value == "2":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="2"))


RUNNER = """\
class Runner:
    def run(self, x):
        # keep this comment
        y  =  x+1   # and this odd spacing
        return self.step(y)
"""


# -- outcomes ---------------------------------------------------------------------------------


def test_applied_changes_only_the_site_and_keeps_formatting() -> None:
    after = RUNNER.replace("self.step(y)", "self.step(y, flag=True)")
    report = assert_rewrite(AddFlag, RUNNER, after)
    assert [(a.anchor, a.changed, a.present) for a in report.anchors] == [("Runner.run", 1, 0)]


def test_already_present_is_upstreamed_without_change() -> None:
    code = RUNNER.replace("self.step(y)", "self.step(y, flag=True)")
    assert_rewrite(AddFlag, code, code, outcome=Outcome.UPSTREAMED)


def test_partly_upstreamed_returns_the_remaining_change() -> None:
    class TwoSites(AddFlag):
        anchors = {"Runner.run": 2}

    before = (
        "class Runner:\n    def run(self):\n        self.step(1, flag=True)\n        self.step(2)\n"
    )
    after = before.replace("step(2)", "step(2, flag=True)")
    assert_rewrite(TwoSites, before, after, outcome=Outcome.PARTLY_UPSTREAMED)


def test_no_edit_site_is_a_conflict_naming_the_anchor() -> None:
    code = "class Runner:\n    def run(self):\n        return self.walk(1)\n"
    report = assert_rewrite(AddFlag, code, code, outcome=Outcome.CONFLICT)
    assert report.anchors[0].message == (
        "anchor Runner.run (AddFlag): expected 1 edit site(s), found none"
    )
    assert "self.walk(1)" in report.anchors[0].code


def test_fewer_sites_than_expected_is_a_conflict() -> None:
    class TwoSites(AddFlag):
        anchors = {"Runner.run": 2}

    code = "class Runner:\n    def run(self):\n        self.step(1)\n"
    report = assert_rewrite(TwoSites, code, code, outcome=Outcome.CONFLICT)
    assert "expected 2 edit site(s), found 1 (changed 1, already present 0)" in report.messages()[0]


def test_extra_sites_are_ambiguous() -> None:
    code = "class Runner:\n    def run(self):\n        self.step(1)\n        self.step(2)\n"
    report = assert_rewrite(AddFlag, code, code, outcome=Outcome.AMBIGUOUS)
    assert "expected 1 edit site(s), found 2" in report.messages()[0]


def test_anchor_defined_twice_is_ambiguous() -> None:
    code = RUNNER + RUNNER
    report = assert_rewrite(AddFlag, code, code, outcome=Outcome.AMBIGUOUS)
    assert report.messages() == ["anchor Runner.run (AddFlag) is defined 2 times"]


def test_anchor_moved_to_another_class_is_gone() -> None:
    code = RUNNER.replace("class Runner", "class Walker")
    report = assert_rewrite(AddFlag, code, code, outcome=Outcome.GONE)
    assert report.messages() == ["anchor Runner.run (AddFlag) is not defined in the file any more"]


def test_gone_by_text_check_never_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(cst, "parse_module", no_parse)
    code = RUNNER.replace("def run", "def sprint")
    report = run_rewrite(AddFlag, code)
    assert report.outcome is Outcome.GONE
    assert [a.anchor for a in report.anchors] == ["Runner.run"]


def test_nested_code_counts_for_the_enclosing_anchor() -> None:
    before = "class Runner:\n    def run(self):\n        def inner():\n            self.step(1)\n"
    assert_rewrite(AddFlag, before, before.replace("step(1)", "step(1, flag=True)"))


def test_module_level_assigned_name_is_an_anchor() -> None:
    before = "LIMIT = 1\nOTHER = 1\n\n\ndef f():\n    LIMIT = 1\n"
    assert_rewrite(Limit, before, before.replace("LIMIT = 1\nOTHER", "LIMIT = 2\nOTHER", 1))


# -- look-alike code --------------------------------------------------------------------------

CAPS = """\
class A:
    def supported(cap):
        return (9, 0) <= cap < (11, 0)


class B:
    def supported(cap):
        return (9, 0) <= cap < (11, 0)
"""
NAIVE_OLD = "return (9, 0) <= cap < (11, 0)"
NAIVE_NEW = "return (9, 0) <= cap < (13, 0)"


def test_identical_checks_only_the_anchored_one_changes() -> None:
    after = CAPS[: CAPS.index("class B")] + CAPS[CAPS.index("class B") :].replace("11", "13")
    assert_rewrite(RaiseBound, CAPS, after)


def test_naive_first_match_replace_changes_the_wrong_check() -> None:
    naive = CAPS.replace(NAIVE_OLD, NAIVE_NEW, 1)
    a_part, b_part = naive.split("class B")
    assert "(13, 0)" in a_part and "(11, 0)" in b_part  # A changed, B (the target) untouched


def test_look_alike_function_inserted_above_the_target() -> None:
    decoy = "class Decoy:\n    def run(self, x):\n        return self.step(x)\n\n\n"
    before = decoy + RUNNER
    after = decoy + RUNNER.replace("self.step(y)", "self.step(y, flag=True)")
    assert_rewrite(AddFlag, before, after)
    naive = before.replace("return self.step(", "return self.step(flag=True, ", 1)
    assert naive.index("flag=True") < naive.index("class Runner")  # a line patch hits the decoy


# -- broken rewrites are FAILED, naming rewrite, file and anchor ------------------------------


def test_a_rewrite_that_raises_fails() -> None:
    class Boom(AddFlag):
        def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
            raise KeyError("oops")

    report = run_rewrite(Boom, RUNNER)
    assert report.outcome is Outcome.FAILED
    assert report.message.startswith("rewrite Boom raised at anchor Runner.run: ")
    assert "KeyError: 'oops' (test_rewrite.py:" in report.message


def test_unparseable_output_fails() -> None:
    class Garbage(AddFlag):
        def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
            if not self.in_anchor:
                return updated_node
            bad = cst.Arg(cst.Integer("1"), keyword=cst.Name("True"), equal=_EQUAL)
            return self.changed(updated_node.with_changes(args=[bad]))

    report = run_rewrite(Garbage, RUNNER)
    assert report.outcome is Outcome.FAILED
    assert "the code rewritten at anchor(s) Runner.run does not parse: line 5" in report.message


def test_a_rewrite_that_is_not_idempotent_fails() -> None:
    class Always(AddFlag):
        def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
            if not self.in_anchor:
                return updated_node
            return self.changed(updated_node.with_changes(args=[*updated_node.args, _flag()]))

    report = run_rewrite(Always, RUNNER)
    assert report.outcome is Outcome.FAILED
    assert "not idempotent: on its own output, anchor Runner.run (Always)" in report.message


def _flag() -> cst.Arg:
    return cst.Arg(cst.Name("True"), keyword=cst.Name("flag"), equal=_EQUAL)


def test_a_site_outside_every_anchor_fails() -> None:
    class Stray(AddFlag):
        def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
            return self.present(updated_node)

    report = run_rewrite(Stray, RUNNER + "\nprint(1)\n")
    assert report.outcome is Outcome.FAILED
    assert "1 edit site(s) outside its anchors" in report.message


def test_an_unparseable_tree_file_fails() -> None:
    report = run_rewrite(AddFlag, "class Runner:\n    def run(self:\n")
    assert report.outcome is Outcome.FAILED
    assert report.message.startswith("libcst cannot parse it: ")


# -- patches as modules: loading, the whole patch, the cache ----------------------------------

MODULE = """\
import libcst as cst
from patchkit.engine.rewrite import Rewrite


class Bump(Rewrite):
    path = "{path}"
    anchors = {{"{anchor}": 1}}

    def leave_Integer(self, original_node, updated_node):
        if not self.in_anchor or updated_node.value not in ("1", "2"):
            return updated_node
        if updated_node.value == "2":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="2"))
"""


def _module(tmp_path: Path, *specs: tuple[str, str], name: str = "bump.py") -> Path:
    parts = [
        MODULE.format(path=p, anchor=a).replace("Bump", f"Bump{i}")
        for i, (p, a) in enumerate(specs)
    ]
    file = tmp_path / name
    file.write_text("\n\n".join(parts))
    return file


def _reader(files: dict[str, str]) -> Callable[[str], bytes | None]:
    return lambda path: files[path].encode() if path in files else None


def test_run_rewrite_patch_applies_every_file(tmp_path: Path) -> None:
    file = _module(tmp_path, ("a.py", "f"), ("b.py", "LIMIT"))
    tree = {"a.py": "def f():\n    return 1\n", "b.py": "LIMIT = 1\n"}
    result = run_rewrite_patch("bump", file, _reader(tree))
    assert (result.outcome, result.step) == (Outcome.APPLIED, Step.REWRITE)
    assert {c.path: c.content for c in result.changes} == {
        "a.py": b"def f():\n    return 2\n",
        "b.py": b"LIMIT = 2\n",
    }
    assert rewrite_paths(file) == ["a.py", "b.py"]


def test_applied_and_upstreamed_files_make_partly_upstreamed(tmp_path: Path) -> None:
    file = _module(tmp_path, ("a.py", "f"), ("b.py", "LIMIT"))
    tree = {"a.py": "def f():\n    return 2\n", "b.py": "LIMIT = 1\n"}
    result = run_rewrite_patch("bump", file, _reader(tree))
    assert result.outcome is Outcome.PARTLY_UPSTREAMED
    assert [c.path for c in result.changes] == ["b.py"]


def test_all_upstreamed_is_a_probe_with_no_change(tmp_path: Path) -> None:
    file = _module(tmp_path, ("a.py", "f"))
    result = run_rewrite_patch("bump", file, _reader({"a.py": "def f():\n    return 2\n"}))
    assert (result.outcome, result.step, result.changes) == (Outcome.UPSTREAMED, Step.PROBE, ())


def test_worst_outcome_wins_and_messages_name_patch_file_anchor(tmp_path: Path) -> None:
    file = _module(tmp_path, ("a.py", "f"), ("b.py", "LIMIT"))
    tree = {"a.py": "def f():\n    return 1\n"}  # b.py is missing
    result = run_rewrite_patch("bump", file, _reader(tree))
    assert result.outcome is Outcome.GONE
    assert result.changes == ()
    assert "bump: b.py: the file does not exist" in result.message
    assert [(d.path, d.hunk) for d in result.details] == [("b.py", "")]


def test_conflict_details_carry_the_anchor_code(tmp_path: Path) -> None:
    file = _module(tmp_path, ("a.py", "f"))
    result = run_rewrite_patch("bump", file, _reader({"a.py": "def f():\n    return 7\n"}))
    assert result.outcome is Outcome.CONFLICT
    (detail,) = result.details
    assert (detail.path, detail.hunk) == ("a.py", "f")
    assert detail.ours == "def f():\n    return 7\n"
    assert result.message == "bump: a.py: anchor f (Bump0): expected 1 edit site(s), found none"


def test_bad_modules_are_config_errors_and_failed_results(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("X = 1 // 0\n")  # passes the gate, fails on import
    with pytest.raises(ConfigError, match=r"broken\.py: importing the rewrite failed"):
        load_rewrites(broken)
    result = run_rewrite_patch("broken", broken, _reader({}))
    assert result.outcome is Outcome.FAILED and "broken.py" in result.message
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(ConfigError, match=r"empty\.py: defines no rewrite"):
        load_rewrites(empty)
    escape = _module(tmp_path, ("../outside.py", "f"), name="escape.py")
    with pytest.raises(ConfigError, match="must be a relative POSIX path"):
        load_rewrites(escape)


def test_second_run_is_a_cache_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = _module(tmp_path, ("big.py", "target"))
    filler = "".join(f"def f{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(3000))
    tree = {"big.py": filler + "def target():\n    return 1\n"}
    started = time.perf_counter()
    cold = run_rewrite_patch("bump", file, _reader(tree))
    cold_s = time.perf_counter() - started

    monkeypatch.setattr(patchkit.engine.rewrite.run, "_run_job", _must_not_run)
    started = time.perf_counter()
    warm = run_rewrite_patch("bump", file, _reader(tree))
    warm_s = time.perf_counter() - started
    print(f"12k-line file: cold {cold_s * 1000:.0f} ms, warm {warm_s * 1000:.1f} ms")
    assert warm == cold and cold.outcome is Outcome.APPLIED
    assert warm_s < cold_s / 10


def test_a_changed_module_or_input_misses_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = _module(tmp_path, ("a.py", "f"))
    tree = {"a.py": "def f():\n    return 1\n"}
    run_rewrite_patch("bump", file, _reader(tree))
    file.write_text(file.read_text() + "# edited\n")
    calls = []
    original = patchkit.engine.rewrite.run._run_job

    def spy(job: object) -> object:
        calls.append(job)
        return original(job)  # type: ignore[arg-type]

    monkeypatch.setattr(patchkit.engine.rewrite.run, "_run_job", spy)
    run_rewrite_patch("bump", file, _reader(tree))  # the module changed
    run_rewrite_patch("bump", file, _reader({"a.py": "def f():\n    return 1  # x\n"}))
    run_rewrite_patch("bump", file, _reader(tree))  # both seen: a hit
    assert len(calls) == 2


def _must_not_run(job: object) -> None:
    raise AssertionError("cache missed")


def test_dedent_helper_reads_inline_code() -> None:
    assert_rewrite(Limit, textwrap.indent("LIMIT = 1\n", "    "), "LIMIT = 2\n")


# -- declared files, the import-free cache hit, prewarm ---------------------------------------


def test_declared_files_must_be_the_rewrites_homes(tmp_path: Path) -> None:
    file = _module(tmp_path, ("a.py", "f"), ("b.py", "LIMIT"))
    tree = {"a.py": "def f():\n    return 1\n", "b.py": "LIMIT = 1\n"}
    result = run_rewrite_patch("bump", file, _reader(tree), files=["a.py"])
    assert result.outcome is Outcome.FAILED
    assert "declares files ['a.py'], but its rewrites are made on ['a.py', 'b.py']" in (
        result.message
    )
    ok = run_rewrite_patch("bump", file, _reader(tree), files=["b.py", "a.py"])
    assert ok.outcome is Outcome.APPLIED


def _meta(file: Path, files: tuple[str, ...], patch_id: str = "bump") -> PatchMeta:
    return PatchMeta(patch_id, "t", "w", "demo", PatchKind.REWRITE, file, file, "s", files=files)


@pytest.mark.parametrize("files", [("a.py", "b.py"), ()], ids=["declared", "undeclared"])
def test_a_warm_run_imports_neither_the_rewrite_nor_libcst_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: tuple[str, ...]
) -> None:
    file = _module(tmp_path, ("a.py", "f"), ("b.py", "LIMIT"))
    read = _reader({"a.py": "def f():\n    return 1\n", "b.py": "LIMIT = 1\n"})
    cold = run_patch(_meta(file, files), read, Blobs([]))

    def must_not_import(path: Path) -> None:
        raise AssertionError(f"imported {path}")

    monkeypatch.setattr(patchkit.engine.rewrite.run, "load_rewrites", must_not_import)
    warm = run_patch(_meta(file, files), read, Blobs([]))
    assert warm == cold and warm.outcome is Outcome.APPLIED
    assert touched_paths(_meta(file, ("a.py", "b.py"))) == ["a.py", "b.py"]
    # other declared files are another key: the rewrite runs, and is checked against them
    with pytest.raises(AssertionError, match="imported"):
        run_patch(_meta(file, ("a.py",)), read, Blobs([]))


def test_a_series_rewrites_independent_files_in_one_parallel_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _module(tmp_path, ("a.py", "f"), name="one.py")
    two = _module(tmp_path, ("b.py", "LIMIT"), name="two.py")
    three = _module(tmp_path, ("a.py", "f"), name="three.py")  # after one: a.py as one left it
    tree = {"a.py": "def f():\n    return 1\n", "b.py": "LIMIT = 1\n"}
    calls: list[list[str]] = []
    original = patchkit.engine.rewrite.run._run_jobs

    def spy(jobs: list) -> list:  # type: ignore[type-arg]
        calls.append([job.path for job in jobs])
        return original(jobs)

    monkeypatch.setattr(patchkit.engine.rewrite.run, "_run_jobs", spy)
    metas = [_meta(one, ("a.py",), "one"), _meta(two, ("b.py",), "two"), _meta(three, ("a.py",))]
    overlay = Overlay(_reader(tree))
    results = run_series(metas, overlay, Blobs([]))
    assert [r.outcome for r in results] == [Outcome.APPLIED, Outcome.APPLIED, Outcome.UPSTREAMED]
    assert calls[0] == ["a.py", "b.py"]  # one pass for the first two patches
    assert calls[1:] == [["a.py"]]  # the third waited for the first's output
    assert overlay.files == {"a.py": b"def f():\n    return 2\n", "b.py": b"LIMIT = 2\n"}


def test_the_cache_key_covers_every_engine_module() -> None:
    """An engine module left out of the key would let a changed engine reuse old runs: the
    key is the whole engine's fingerprint (tests/engine/test_fingerprint.py)."""
    from patchkit.engine import fingerprint
    from patchkit.engine.rewrite import cache

    assert cache.engine_sha() == fingerprint.engine_fingerprint()
