"""One side of a hunk's context changed by an unrelated upstream edit, the other intact: the
hunk is placed by its changed lines and the intact side, never into a look-alike."""

from __future__ import annotations

from pathlib import Path

from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import ported

TESTS = dedent(
    """
    class TestHistogram:
        def test_simple(self):
            res = histogram(self.low_values)
            assert_equal(res.count, 4)

        def test_weighting(self):
            weights = np.array([1.0, 3.0, 4.5])
            res = histogram(self.low_values, weights=weights)
            assert_almost_equal(res.count, 8.5)

        def test_reduced_bins(self):
            res = histogram(self.low_values, numbins=5)
            assert_equal(len(res.count), 5)
    """
)


def test_a_removed_method_after_an_edited_one_is_removed(tmp_path: Path) -> None:
    """Upstream rewrote the end of the method above the one the patch deletes: the merge
    conflicts on adjacent lines; the deleted lines and the trailing context are intact."""
    gone = TESTS[TESTS.index("    def test_weighting") : TESTS.index("    def test_reduced")]
    patched = TESTS.replace(gone, "")
    upstream = TESTS.replace(
        "        assert_equal(res.count, 4)\n\n",
        "        assert_equal(res.count, 4)\n        assert res.total == 4\n",
    )
    report, text = ported(tmp_path, "test_stats.py", TESTS, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace(gone, "")
    (mark,) = report.result.placements
    assert mark.rule is Rule.ONE_SIDE
    assert "leading" in mark.note


C_TESTS = dedent(
    """
    #include "clar.h"

    void test_config__open_global(void)
    {
    \tgit_config *cfg;
    \tcl_git_pass(git_config_open_default(&cfg));
    \tgit_config_free(cfg);
    }

    void test_config__open_symlinked(void)
    {
    \tgit_config *cfg;
    #ifdef GIT_WIN32
    \tcl_skip();
    #endif
    }

    void test_config__open_xdg(void)
    {
    \tgit_config *cfg, *xdg;
    \tcl_git_pass(git_config_open_default(&cfg));
    \tgit_config_free(cfg);
    }
    """
)
NEW_C = "void test_config__lock_missing(void)\n{\n\tcl_git_pass(lock());\n}\n\n"


def test_a_new_function_goes_before_the_intact_next_one(tmp_path: Path) -> None:
    """The function above the insertion is not on the release branch (its last lines were
    the hunk's leading context; the merge conflicts with its deletion); the next function is
    intact: the new one goes before it."""
    patched = C_TESTS.replace("void test_config__open_xdg", NEW_C + "void test_config__open_xdg")
    start = C_TESTS.index("void test_config__open_symlinked")
    upstream = C_TESTS[:start] + C_TESTS[C_TESTS.index("void test_config__open_xdg") :]
    report, text = ported(tmp_path, "tests/config/global.c", C_TESTS, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace(
        "void test_config__open_xdg", NEW_C + "void test_config__open_xdg"
    )
    (mark,) = report.result.placements
    assert mark.rule is Rule.ONE_SIDE


TCL = dedent(
    """
    start_server {tags {"hash"}} {
        test {HINCRBYFLOAT over hash-max-listpack-value} {
            r del smallhash
            assert_equal [r hincrbyfloat smallhash tmp 1] 1
        }

        test {HINCRBYFLOAT does not allow NaN or Infinity} {
            assert_error "*value is NaN*" {r hincrbyfloat hfoo field +inf}
            assert_equal 0 [r exists hfoo]
        }
    }
    """
)


def test_a_hunk_at_the_end_of_a_file_without_grammar_keeps_its_place(tmp_path: Path) -> None:
    """A Tcl file (no grammar): the test above the changed one was rewritten upstream; the
    changed lines occur once and the trailing context is the end of the file at base and here."""
    old = TCL[TCL.index("    test {HINCRBYFLOAT does not") : TCL.index("    }\n}\n")]
    new = "    if {!$::valgrind} {\n" + "".join("    " + line for line in old.splitlines(True))
    patched = TCL.replace(old, new).replace("    }\n}\n", "        }\n    }\n}\n")
    upstream = TCL.replace(
        "    }\n\n    test {HINCRBYFLOAT does", "    }\n    test {HINCRBYFLOAT does"
    )
    upstream = upstream.replace("r del smallhash", "r del smallhash bighash")
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", TCL, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace(old, new).replace("    }\n}\n", "        }\n    }\n}\n")
    (mark,) = report.result.placements
    assert mark.rule is Rule.ONE_SIDE


def test_without_grammar_or_file_end_a_changed_side_stays_a_conflict(tmp_path: Path) -> None:
    """A changed line in the middle of a Tcl file, the line above it edited upstream: nothing
    anchors the place but the lines themselves, so it is not placed by one side."""
    base = dedent(
        """
        start_server {tags {"hash"}} {
            test {A} {
                r del a
                r hset a f 1
                assert_equal 1 [r hget a f]
                assert_equal 1 [r hlen a]
                assert_equal 1 [r exists a]
            }

            test {B} {
                r ping
            }
        }
        """
    )
    patched = base.replace("1 [r hget a f]", "{1} [r hget a f]")
    upstream = base.replace("r hset a f 1\n", "r hset a f 1 g 2\n")
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


PY_TWINS = dedent(
    """
    def compute(a, b):
        total = a + b
        total = total * 2
        if total > 10:
            total = 10
        record(total)
        return total


    def compute_fast(a, b):
        total = a + b
        total = total * 4
        if total > 10:
            total = 10
        record(total)
        return total


    def tail():
        return 1
    """
)


def test_one_side_never_lands_in_a_look_alike(tmp_path: Path) -> None:
    """Upstream changed the real function's lines above and inside the change; a look-alike
    keeps the changed lines with the trailing context: not a place, the conflict stands."""
    patched = PY_TWINS.replace("total = 10\n", "total = 10  # clamp\n", 1)
    upstream = PY_TWINS.replace(
        "    total = total * 2\n    if total > 10:\n        total = 10\n",
        "    total = total * 3\n    if total >= 10:\n        total = 9\n",
    )
    report, text = ported(tmp_path, "m.py", PY_TWINS, patched, upstream)
    assert report.outcome in (Outcome.CONFLICT, Outcome.AMBIGUOUS), report.result.placements
    assert "# clamp" not in text


def test_hunks_a_partial_merge_took_are_kept_when_one_side_places_the_rest(
    tmp_path: Path,
) -> None:
    """The scope merge of ``f`` succeeds (taking the hunk placed there by context too), then
    ``g``'s merge conflicts: its change sits right beside the statement upstream rewrote, so
    one side leaves it to the merge of statements (two statements that read nothing of each
    other), which starts again from the hunks as placed: none of the three is lost."""
    filler = "".join(f"    v{i} = x + {i}\n" for i in range(8))
    base = (
        "def f(x):\n    a = 1\n" + filler + "    c = 3\n    t = c + v7\n    u = t * 5\n"
        "    return u\n\n\ndef g(y):\n    k = y + 1\n    m = k * 2\n    b = 2\n"
        "    n = m + b\n    w = n * 6\n    return w\n"
    )
    patched = base.replace("a = 1", "a = 10").replace("c = 3", "c = 30").replace("b = 2", "b = 20")
    upstream = base.replace("v6 = x + 6", "v6 = x + 60").replace("m = k * 2", "m = k * 3")
    report, text = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    expected = upstream.replace("a = 1", "a = 10").replace("c = 3", "c = 30")
    assert text == expected.replace("b = 2", "b = 20")
    assert [m.rule for m in report.result.placements] == [Rule.SCOPE_MERGE] * 3
    assert "merged by statements" in report.result.placements[2].note


ORDERED = dedent(
    """
    def first():
        values = load_values()
        return sorted(values, key=weight_of)


    def second():
        rows = fetch_rows(table_name)
        return [row for row in rows if row.visible]


    def third():
        c = 3
        return c
    """
)


def test_a_new_function_never_lands_on_the_other_side_of_a_neighbour_upstream_moved(
    tmp_path: Path,
) -> None:
    """The patch adds ``new`` between ``first`` and ``second``; upstream moved ``second`` to
    the top and changed the end of ``first``: ``second``'s start is intact, but placing
    ``new`` before it would put it before ``first`` too. The conflict stands."""
    patched = ORDERED.replace("def second():", "def new():\n    return 0\n\n\ndef second():")
    second = ORDERED[ORDERED.index("def second") : ORDERED.index("def third")]
    rest = ORDERED.replace(second, "").replace("key=weight_of)", "key=weight_of, reverse=True)")
    report, text = ported(tmp_path, "order.py", ORDERED, patched, second + rest)

    assert report.outcome is Outcome.CONFLICT
    assert text == second + rest
    assert all(m.rule is not Rule.ONE_SIDE for m in report.result.placements)


FIXTURES = dedent(
    """
    def test_scope_allowed(pytester):
        pytester.makepyfile("x = 1")
        result = pytester.runpytest()
        result.assert_outcomes(passed=1)
    """
)
NEW_TEST = '\n\ndef test_collect_positional_only(pytester):\n    pytester.makepyfile("def f(a, /): pass")\n    assert pytester.runpytest().ret == 0\n'  # fmt: skip


def test_a_test_appended_at_the_end_goes_after_what_the_release_appended(
    tmp_path: Path,
) -> None:
    """The patch appends a test at the end of the file; the release's file ends with another
    test, and the last lines of the one before differ: the new test is appended at the end
    (before: a conflict, both sides having added at the end)."""
    upstream = FIXTURES.replace("passed=1)\n", "passed=2)\n") + (
        "\n\ndef test_result(pytester):\n    assert pytester.runpytest().ret == 0\n"
    )
    report, text = ported(tmp_path, "test_fixtures.py", FIXTURES, FIXTURES + NEW_TEST, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream + NEW_TEST
    (mark,) = report.result.placements
    assert mark.rule is Rule.END_OF_FILE


def test_a_method_appended_at_the_end_never_goes_into_another_class(tmp_path: Path) -> None:
    """At base the file ends with class A, and the patch appends a method to it; the release
    ends with class B: appending there would make it B's method, so it stays a conflict."""
    base = "class A:\n    def one(self):\n        return 1\n"
    method = "\n    def two(self):\n        return 2\n"
    upstream = base.replace("return 1", "return 10") + "\n\nclass B:\n    def one(self):\n        return 3\n"  # fmt: skip
    report, text = ported(tmp_path, "mod.py", base, base + method, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_change_right_beside_a_statement_upstream_rewrote_is_not_placed_by_one_side(
    tmp_path: Path,
) -> None:
    """The last function of the file: upstream sorts the other way, the patch takes the last
    item where the first was read. One side (the file's end) is intact, but the line the
    hunk changes sits right beside the statement upstream rewrote, in its scope: placing it
    by the other side would merge two changes that read each other (items[-1] of a list now
    sorted the other way). A conflict, as git merge-file says."""
    base = "def first(items):\n    items.sort()\n    return items[0]\n"
    patched = base.replace("items[0]", "items[-1]")
    upstream = base.replace("items.sort()", "items.sort(reverse=True)")
    report, text = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)
