"""The structural check of every result before its verdict counts: no second definition of a
name in one scope, no parse error the target did not have, each changed line in the scope it
had at base, added definitions in their order at base. A failure is a conflict with the
reason; nothing is written."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from patchkit.engine.diff.resultcheck import check
from patchkit.engine.rewrite import Rewrite
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream
from testing.rewrites import assert_rewrite, run_rewrite
from tests.conftest import dedent

LIB = dedent(
    """
    def parse(data):
        return data.split(",")


    def render(items):
        return ", ".join(items)
    """
)
TESTS = dedent(
    """
    from lib import parse, render


    def test_parse():
        assert parse("a,b") == ["a", "b"]


    def test_render():
        assert render(["a"]) == "a"
    """
)
FIXED = LIB.replace('return data.split(",")', 'return [x for x in data.split(",") if x]')
NEW_TEST = '\n\ndef test_parse_empty():\n    assert parse("a,,b") == ["a", "b"]\n'


def test_a_test_upstream_added_in_its_own_words_is_not_added_a_second_time(
    tmp_path: Path,
) -> None:
    """A security fix with its test; upstream took the fix and wrote the test its own way at
    the end of the file: the patch's test would be a second definition: a conflict."""
    up = Upstream(tmp_path / "up")
    base = up.commit({"lib.py": LIB, "test_lib.py": TESTS}, "base")
    with_test = TESTS.replace(
        '["a", "b"]\n', '["a", "b"]\n' + NEW_TEST, 1
    )  # the patch's test right after test_parse
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"lib.py": FIXED, "test_lib.py": with_test}))
    theirs = TESTS + '\n\ndef test_parse_empty():\n    assert parse(",") == []\n'
    up.commit({"lib.py": FIXED, "test_lib.py": theirs})

    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)

    assert report.outcome is Outcome.CONFLICT, report.result
    assert report.written == ()
    (detail,) = report.result.details
    assert "defines def test_parse_empty 2 times" in detail.reason
    assert (up.path / "test_lib.py").read_text() == theirs


def _b(text: str) -> bytes:
    return dedent(text).encode()


def test_a_second_definition_the_patched_base_has_too_is_allowed() -> None:
    """An overload (or a property setter) the patch itself adds is no duplicate."""
    before = _b("class A:\n    @property\n    def x(self):\n        return 1\n")
    after = before + b"\n    @x.setter\n    def x(self, v):\n        self.v = v\n"

    assert check("a.py", before, after, before, after) is None
    assert "defines def x 2 times in class A" in (
        check("a.py", before, after, before, before) or ""
    )


def test_a_result_that_does_not_parse_where_the_target_did_is_refused() -> None:
    before = _b("def f():\n    return 1\n")
    after = _b("def f():\n    return (1\n")

    assert check("a.py", before, after) == "the result does not parse, where the target did"
    assert check("a.py", after, after + b"x = 1\n") is None  # the target did not parse either


def test_a_changed_line_in_another_scope_than_at_base_is_refused() -> None:
    base = _b(
        """
        def f():
            x = 1
            return x


        def g():
            x = 1
            return x
        """
    )
    patched = base.replace(b"x = 1\n    return x\n\n\ndef g", b"x = 2\n    return x\n\n\ndef g")
    before = base.replace(b"def f():\n    x = 1", b"def f():\n    x = 0")  # upstream changed f
    in_g = before.replace(b"def g():\n    x = 1", b"def g():\n    x = 2")  # the change put in g
    in_f = before.replace(b"def f():\n    x = 0", b"def f():\n    x = 2")

    assert check("a.py", before, in_f, base, patched) is None
    why = check("a.py", before, in_g, base, patched) or ""
    assert "changes line 7 in def g, a scope the patch changes nothing in at base" in why


def test_an_added_definition_on_the_other_side_of_its_neighbour_is_refused() -> None:
    base = _b("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    patched = base.replace(b"def b", b"def new():\n    return 0\n\n\ndef b")
    before = _b("def b():\n    return 2\n\n\ndef a():\n    return 1\n")  # upstream swapped them
    wrong = b"def new():\n    return 0\n\n\n" + before
    right = before + b"\n\ndef new():\n    return 0\n"

    why = check("a.py", before, wrong, base, patched) or ""
    assert why.startswith("the result puts def new on the other side of def a")
    assert check("a.py", before, right, base, patched) is not None  # after a, but past b too
    between = _b(
        "def a():\n    return 1\n\n\ndef new():\n    return 0\n\n\ndef b():\n    return 2\n"
    )
    assert check("a.py", base, between, base, patched) is None


def test_a_file_without_a_grammar_is_not_checked() -> None:
    assert check("notes.txt", b"a\n", b"a\na\n") is None


class AddClose(Rewrite):
    """``Runner`` gains ``def close(self)`` that sets ``self._closed``."""

    path = "pkg/runner.py"
    anchors = {"Runner": 1}

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        if updated_node.name.value != "Runner":
            return updated_node
        body = list(updated_node.body.body)
        code = cst.Module(body=[]).code_for_node
        if any(isinstance(s, cst.FunctionDef) and "_closed" in code(s) for s in body):
            return self.present(updated_node)
        method = cst.parse_statement("def close(self):\n    self._closed = True\n")
        new_body = updated_node.body.with_changes(body=[*body, method])
        return self.changed(updated_node.with_changes(body=new_body))


def test_a_rewrite_adding_a_method_upstream_has_in_its_own_words_is_a_conflict() -> None:
    mine = "class Runner:\n    def run(self):\n        return 1\n"
    theirs = mine + "\n    def close(self):\n        self.stop()\n"

    assert_rewrite(AddClose, mine, mine + "    def close(self):\n        self._closed = True\n")
    report = run_rewrite(AddClose, theirs)

    assert report.outcome is Outcome.CONFLICT
    assert report.output is None
    assert "defines def close 2 times in class Runner" in report.message


def test_a_hunk_placed_by_its_verbatim_context_adding_no_definition_parses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check costs a parse only where it can find something: a plain context placement of
    a body edit is the patched base's own lines (placement stays ~10 ms a case)."""
    from patchkit.engine.diff import resultcheck

    parsed: list[str] = []
    real = resultcheck.Side.of
    monkeypatch.setattr(
        resultcheck.Side, "of", classmethod(lambda cls, p, c: parsed.append(p) or real(p, c))
    )
    up = Upstream(tmp_path / "up")
    base = up.commit({"lib.py": LIB}, "base")
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"lib.py": FIXED}))
    up.commit({"lib.py": "import os\n\n\n" + LIB})  # lines shifted: placed by context

    report = port(patch_file=patch, base_commit=base, checkout=up.path)

    assert report.outcome is Outcome.CARRIED
    assert parsed == []
