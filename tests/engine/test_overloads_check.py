"""C++ overloads are definitions each: two functions of one name with parameter types of their
own, both added by the patch, are no name defined twice, even where upstream renamed the class
around them (NVIDIA/cccl 1aa9098637: two ``__create`` overloads refused as a duplicate). A
second definition with the same parameter types is still one, whatever its parameters' names."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.engine.diff.resultcheck import check
from patchkit.ops.port import port
from testing.builders import Upstream
from tests.conftest import dedent

HEADER = dedent(
    """
    #pragma once
    #include <cstddef>

    class Option
    {
    public:
      std::size_t size() const noexcept
      {
        return n_;
      }

    private:
      std::size_t n_ = 0;
      bool flag_     = false;
    };
    """
)
OVERLOADS = dedent(
    """
      static Option make(bool flag = false) noexcept
      {
        return Option{flag};
      }

      static Option make(std::size_t n, bool flag = false) noexcept
      {
        return Option{n, flag};
      }
    """
)
_AFTER_SIZE = "    return n_;\n  }\n"


def _with(text: str, added: str) -> str:
    return text.replace(_AFTER_SIZE, _AFTER_SIZE + "\n" + added, 1)


def test_two_overloads_the_patch_adds_where_upstream_renamed_the_class_are_written(
    tmp_path: Path,
) -> None:
    up = Upstream(tmp_path / "up")
    base = up.commit({"option.h": HEADER}, "base")
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"option.h": _with(HEADER, OVERLOADS)}))
    renamed = HEADER.replace("class Option", "class OptionBase")
    up.commit({"option.h": renamed})

    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)

    assert report.succeeded, report.result
    assert (up.path / "option.h").read_text() == _with(renamed, OVERLOADS)


def _b(text: str) -> bytes:
    return text.encode()


def test_a_second_definition_with_the_same_parameter_types_is_still_refused() -> None:
    before = _b(HEADER.replace("class Option", "class OptionBase"))
    theirs = "  static Option make(bool on) noexcept\n  {\n    return Option{on};\n  }\n"
    target = _b(_with(HEADER, theirs))
    mine = "  static Option make(bool flag = false) noexcept\n  {\n    return Option{flag};\n  }\n"
    after = _b(_with(_with(HEADER, theirs), mine))

    assert "defines make 2 times in class Option" in (check("option.h", target, after) or "")
    assert check("option.h", before, _b(_with(HEADER, OVERLOADS))) is None  # overloads
    same = OVERLOADS.replace("std::size_t n, bool flag", "bool flag")  # no overload: a copy
    assert "defines make 2 times" in (check("option.h", before, _b(_with(HEADER, same))) or "")


def test_c_and_python_have_no_overloads() -> None:
    before = b"int f(int a)\n{\n  return a;\n}\n"
    after = before + b"\nint f(long a, int b)\n{\n  return b;\n}\n"

    assert check("f.h", before, after) is None  # C++ (a header is read as C++)
    assert "defines f 2 times" in (check("f.c", before, after) or "")


def _defs(*parameters: str) -> bytes:
    return b"".join(f"int f({p})\n{{\n  return 0;\n}}\n\n".encode() for p in parameters)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("int a", "const int a"),
        ("int a", "int const b"),
        ("int a", "volatile int"),
        ("int* p", "int* const p"),
        ("const int* p", "int const* const q"),
        ("std::vector<int> v", "const std::vector<int> w"),
    ],
)
def test_const_on_a_parameter_passed_by_value_is_no_overload(first: str, second: str) -> None:
    """``f(const int)`` declares ``f(int)`` again: the ``const`` of a by-value parameter is no
    part of a C++ signature, so the second is a name defined twice, not an overload."""
    before = _defs(first)
    assert "defines f 2 times" in (check("f.h", before, _defs(first, second)) or "")


@pytest.mark.parametrize(
    ("first", "second"),
    [("int* p", "const int* p"), ("int& r", "const int& r"), ("int* p", "volatile int* p")],
)
def test_const_on_what_a_pointer_or_reference_leads_to_is_an_overload(
    first: str, second: str
) -> None:
    assert check("f.h", _defs(first), _defs(first, second)) is None
