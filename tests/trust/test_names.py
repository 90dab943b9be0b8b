"""trust.names: a name from config, arguments, upstream or an importer is one safe path
segment; an identity is one ``Name <email>`` line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchkit.errors import ConfigError, FormatterUnavailable
from patchkit.trust.names import author_line, check_name, is_name, one_line_identity

HOSTILE_NAMES = [
    "",
    ".",
    "..",
    "../../x",
    "a/b",
    "a\\b",
    "x\0y",
    "-rf",
    "--upload-pack=x",
    ".git",
    ".hidden",
    "a..b",
    "x\n",
    "na me",
    "é",
    "a" * 129,
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_are_refused_naming_where(name: str) -> None:
    assert not is_name(name)
    with pytest.raises(ConfigError, match=r"upstream\.lock: key `targets`: target") as info:
        check_name(name, what="target", where="upstream.lock: key `targets`")
    assert info.value.exit_code == 2


@pytest.mark.parametrize("name", ["vllm", "flashinfer", "fix-f", "v0.19.0", "a_b+c", "0.14.0"])
def test_plain_names_pass(name: str) -> None:
    assert check_name(name, what="name", where="x") == name


def test_the_error_class_is_the_callers() -> None:
    with pytest.raises(FormatterUnavailable):
        check_name("1/../..", what="version", where="rev", error=FormatterUnavailable)


@given(st.text(max_size=40))
def test_an_accepted_name_is_one_segment(value: str) -> None:
    if is_name(value):
        assert "/" not in value and ".." not in value and "\0" not in value
        assert not value.startswith(("-", ".")) and value.strip() == value


@pytest.mark.parametrize(
    "author",
    [
        "Evil <e@x.org>\nSigned-off-by: Linus Torvalds <torvalds@linux-foundation.org>",
        "Evil\nReviewed-by: Maintainer <m@x.org> <e@x.org>",
        "Evil <e@x.org>\rSigned-off-by: A <a@b.c>",
        "<e@x.org>",
        "Evil <e@x.org> <f@y.org>",
        "Evil <e\n@x.org>",
        "",
    ],
)
def test_multi_line_or_odd_authors_are_no_identity(author: str) -> None:
    assert one_line_identity(author) is None
    assert author_line(author) == ""


def test_one_line_author_is_kept() -> None:
    assert author_line("  Grace Hopper <grace@example.com> ") == "Grace Hopper <grace@example.com>"
