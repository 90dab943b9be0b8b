"""``git cat-file --batch`` answers ``<name> missing`` for an object it lacks; a name holding
one space made that three words, read as an object id, a type and a size (exit 70 in port,
rebase, matrix and import). The header is now read by its exact shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.gitrepo.catfile import CatFile, parse_header
from testing.builders import Scenario


@pytest.mark.parametrize(
    "line",
    [
        b"HEAD:x y.txt missing\n",
        b"HEAD:a b ambiguous\n",
        b"a b c d missing\n",
        b"0 blob 5 missing\n",
    ],
)
def test_answers_other_than_an_object_are_none(line: bytes) -> None:
    assert parse_header(line) is None


def test_an_object_header_is_read() -> None:
    oid = "a" * 40
    assert parse_header(f"{oid} blob 12\n".encode()) == (oid, "blob", 12)


def test_a_missing_name_with_one_space_is_missing_and_the_reader_goes_on(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    reader = CatFile(s.root)
    try:
        assert reader.lookup("HEAD:x y.txt") is None
        assert reader.read("HEAD:a.txt") == (b"blob", b"a\n")
    finally:
        reader.close()


def test_port_of_a_file_with_one_space_missing_at_the_base(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    s.upstream.commit({"x y.txt": "one\ntwo\n"}, "add a file the base lacks")
    patch = s.add("p1", {"x y.txt": "one\nTWO\n"})
    assert main(["port", str(patch), "--base", s.base, "--checkout", str(s.root)]) == 0
    assert s.read("x y.txt") == b"one\nTWO\n"
