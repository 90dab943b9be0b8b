"""A paragraph appended at the end of the block that closes the file, whose leading context
upstream changed: it goes above the same closing lines, separated as at base, or not at all."""

from __future__ import annotations

from pathlib import Path

from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import ported

TCL = dedent(
    """
    start_server {tags {"hash"}} {
        test {HSET creates a hash} {
            r del smallhash
            assert_equal 1 [r hset smallhash f 1]
        }

        test {HGET reads a missing field} {
            r del bighash
            assert_equal {} [r hget bighash nofield]
        } {}

    }
    """
)
NEW_TEST = (
    "    test {HINCRBYFLOAT does not allow NaN or Infinity} {\n"
    '        assert_error "*value is NaN*" {r hincrbyfloat hfoo field +inf}\n'
    "        assert_equal 0 [r exists hfoo]\n"
    "    }\n"
)
GONE = TCL[TCL.index("\n    test {HGET") : TCL.rindex("\n}\n") + 1]  # the last test, its blank


def _patched(text: str) -> str:
    return text.replace("\n}\n", "\n" + NEW_TEST + "}\n")


def test_a_test_appended_in_the_closing_block_keeps_its_blank_line(tmp_path: Path) -> None:
    """The release lacks the test the new one followed (the hunk's leading context) and its
    blank line: the new test goes above the closing brace, a blank line above it as at base."""
    upstream = TCL.replace(GONE, "")
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", TCL, _patched(TCL), upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("\n}\n", "\n\n" + NEW_TEST + "}\n")
    (mark,) = report.result.placements
    assert mark.rule is Rule.ONE_SIDE
    assert "blank line" in mark.note


def test_a_blank_line_already_above_the_closing_lines_is_not_doubled(tmp_path: Path) -> None:
    upstream = TCL.replace(GONE, "\n")
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", TCL, _patched(TCL), upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("\n}\n", "\n" + NEW_TEST + "}\n")


def test_a_closing_block_of_another_holder_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream appended another server block: the file's closing brace now closes that one,
    so the test would move into another block."""
    other = 'start_server {tags {"hash" "external"}} {\n    test {HLEN} {\n        r ping\n    }\n'
    upstream = TCL.replace(GONE, "\n}\n\n" + other)  # ends with `}` too: only the holder tells
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", TCL, _patched(TCL), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert NEW_TEST not in text


def test_a_block_joined_to_the_test_above_it_at_base_stays_a_conflict(tmp_path: Path) -> None:
    """At base the new lines had no blank line above them (they ended the test before): not a
    paragraph of its own, so nothing says they end the closing block rather than that test."""
    base = TCL.replace("} {}\n\n}\n", "} {}\n}\n")
    patched = base.replace("} {}\n}\n", "} {}\n" + NEW_TEST + "}\n")
    upstream = base.replace(GONE.rstrip("\n"), "")
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert NEW_TEST not in text


def test_closing_lines_that_no_longer_end_the_file_stay_a_conflict(tmp_path: Path) -> None:
    """Upstream wrote a line after the closing brace: it no longer ends the file here, and
    nothing else anchors the place."""
    upstream = TCL.replace(GONE, "") + "# end of the hash tests\n"
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", TCL, _patched(TCL), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert NEW_TEST not in text


def test_a_twin_holder_of_the_same_header_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream appended a second server block with the same header line (another config):
    the holder's text is no proof it is the same block, so the test is not moved into it."""
    other = (
        'start_server {tags {"hash"}} {\n    r config set hash-max-listpack-entries 0\n'
        "    test {HLEN on hashtable} {\n        r ping\n    }\n"
    )
    upstream = TCL.replace(GONE, "\n}\n\n" + other)
    report, text = ported(tmp_path, "tests/unit/type/hash.tcl", TCL, _patched(TCL), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert NEW_TEST not in text
