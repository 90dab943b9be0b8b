"""``sed -i`` expressions redone as GNU sed does them, or refused by name."""

from __future__ import annotations

import pytest

from patchkit.errors import ImportRefused
from patchkit.importers.sed import parse_sed, run_sed

TEXT = "if major < 11:\n    x = foo(a) + foo(b)\nend\n"


@pytest.mark.parametrize(
    ("expression", "extended", "after"),
    [
        ("s/major < 11/major < 13/", False, "if major < 13:\n    x = foo(a) + foo(b)\nend\n"),
        ("s/foo/bar/", False, "if major < 11:\n    x = bar(a) + foo(b)\nend\n"),  # first per line
        ("s/foo/bar/g", False, "if major < 11:\n    x = bar(a) + bar(b)\nend\n"),
        ("s/foo/bar/2", False, "if major < 11:\n    x = foo(a) + bar(b)\nend\n"),
        (r"s/foo(\(.\))/[&|\1]/", False, "if major < 11:\n    x = [foo(a)|a] + foo(b)\nend\n"),
        (r"s/foo\((.)\)/\1/g", True, "if major < 11:\n    x = a + b\nend\n"),
        ("s|<|<=|", False, "if major <= 11:\n    x = foo(a) + foo(b)\nend\n"),
        ("/^end/i # before", False, "if major < 11:\n    x = foo(a) + foo(b)\n# before\nend\n"),
        ("/x = /a\\    y = 1", False, "if major < 11:\n    x = foo(a) + foo(b)\n    y = 1\nend\n"),
        ("2c\\    x = 0", False, "if major < 11:\n    x = 0\nend\n"),
        ("$d", False, "if major < 11:\n    x = foo(a) + foo(b)\n"),
        ("s/MAJOR/minor/I", False, "if minor < 11:\n    x = foo(a) + foo(b)\nend\n"),
    ],
)
def test_expressions_are_redone_as_sed_does(expression: str, extended: bool, after: str) -> None:
    command = parse_sed(expression, extended=extended, line=3)
    assert run_sed([command], TEXT) == (after, [])


def test_an_expression_that_matches_nothing_is_named() -> None:
    command = parse_sed("s/nothere/x/", extended=False, line=3)
    assert run_sed([command], TEXT) == (TEXT, [command])


@pytest.mark.parametrize("expression", ["h;G", "s/a/b/w out.txt", "1~2d", "s/a/b", "y/ab/cd/"])
def test_what_is_not_redone_is_refused_naming_the_line(expression: str) -> None:
    with pytest.raises(ImportRefused, match="line 3"):
        parse_sed(expression, extended=False, line=3)


def test_posix_classes_and_word_edges_are_gnu_s() -> None:
    strip = parse_sed("s/[[:space:]]*$//", extended=False, line=1)
    words = parse_sed(r"s/\<foo\>/bar/g", extended=False, line=1)
    assert run_sed([strip, words], "foo  \nfoox foo\n") == ("bar\nfoox bar\n", [])


@pytest.mark.parametrize(
    "expression",
    [r"s/a\(b/x/", r"s/a/\2/", "s/[/x/", r"s/\(\(a\|b\)*\)*c/x/", r"s/\(a*\)*b/x/"],
)
def test_a_pattern_python_cannot_run_or_that_may_not_end_is_refused(expression: str) -> None:
    with pytest.raises(ImportRefused, match="line 3"):
        parse_sed(expression, extended=False, line=3)
