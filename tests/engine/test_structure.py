"""The structure layer: every line of a Python, C++, CUDA, C or CMake file gets its scope path."""

from __future__ import annotations

import pytest

from patchkit.engine.structure import language_of, parse_scopes, scopes_for
from tests.conftest import dedent

PY = dedent(
    """
    import os


    @register
    class Mxfp4Config(QuantizationConfig):
        def get_quant_method(self, layer):
            if isinstance(layer, FusedMoE):
                return Mxfp4MoEMethod()
            return None

        async def refresh(self):
            pass


    X = 1
    """
)

CPP = dedent(
    """
    namespace flashinfer {
    template <typename T>
    struct Foo {
      void operator()(int x) const {
        return;
      }
    };
    int Foo::bar() { return 1; }
    #if defined(SM90)
    void kernel() {}
    #else
    void kernel() {}
    #endif
    }  // namespace flashinfer
    """
)


def lines_of(text: str) -> dict[str, int]:
    """0-based index of each line's stripped text (last one wins)."""
    return {line.strip(): i for i, line in enumerate(text.splitlines())}


def test_python_lines_get_class_and_function() -> None:
    tree = parse_scopes("python", PY.encode())
    at = lines_of(PY)
    assert tree.scope_path(at["return Mxfp4MoEMethod()"]) == (
        "class Mxfp4Config",
        "def get_quant_method",
    )
    assert tree.scope_path(at["@register"]) == ("class Mxfp4Config",)  # decorators belong
    assert tree.scope_path(at["pass"]) == ("class Mxfp4Config", "def refresh")
    assert tree.scope_path(at["import os"]) == tree.scope_path(at["X = 1"]) == ()


def test_cpp_namespaces_templates_operators_and_preprocessor() -> None:
    tree = parse_scopes("cpp", CPP.encode())
    at = lines_of(CPP)
    assert tree.scope_path(at["return;"]) == ("namespace flashinfer", "struct Foo", "operator()")
    assert tree.scope_path(at["template <typename T>"]) == ("namespace flashinfer", "struct Foo")
    assert tree.scope_path(at["int Foo::bar() { return 1; }"])[-1] == "Foo::bar"
    first = CPP.splitlines().index("void kernel() {}")
    assert tree.scope_path(first) == ("namespace flashinfer", "#if defined(SM90)", "kernel")
    assert tree.scope_path(at["void kernel() {}"])[-2:] == ("#else", "kernel")
    assert len(tree.find(("namespace flashinfer", "struct Foo", "operator()"))) == 1


def test_cuda_and_c_read_their_own_grammar() -> None:
    cu = b"__global__ void k(float* x) {\n  x[0] = 1;\n}\n"
    assert scopes_for("csrc/k.cu", cu).scope_path(1) == ("k",)  # type: ignore[union-attr]
    assert scopes_for("src/k.c", b"int main(void) {\n  return 0;\n}\n").scope_path(1) == ("main",)  # type: ignore[union-attr]


def test_cmake_blocks_and_branches() -> None:
    text = dedent(
        """
        if(CUDA_FOUND)
          set(A 1)
        else()
          set(A 0)
        endif()
        foreach(arch IN LISTS ARCHS)
          list(APPEND F ${arch})
        endforeach()
        function(add_kernel name)
          add_library(${name})
        endfunction()
        """
    )
    tree = parse_scopes("cmake", text.encode())
    assert tree.scope_path(1) == ("if(CUDA_FOUND)",)
    assert tree.scope_path(3) == ("if(CUDA_FOUND)", "else()")
    assert tree.scope_path(6) == ("foreach(arch IN LISTS ARCHS)",)
    assert tree.scope_path(9) == ("function(add_kernel)",)


@pytest.mark.parametrize(
    "path, language",
    [
        ("vllm/config.py", "python"),
        ("csrc/a.cu", "cuda"),
        ("include/a.cuh", "cuda"),
        ("csrc/a.cc", "cpp"),
        ("include/a.h", "cpp"),
        ("include/a.hpp", "cpp"),
        ("src/a.c", "c"),
        ("CMakeLists.txt", "cmake"),
        ("cmake/utils.cmake", "cmake"),
        ("README.md", None),
        ("setup.cfg", None),
    ],
)
def test_language_by_name(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_other_files_have_no_scopes_and_trees_are_cached() -> None:
    assert scopes_for("docs/notes.txt", b"anything\n") is None
    assert scopes_for("a.py", PY.encode()) is scopes_for("b/a.py", PY.encode())
    assert scopes_for("a.py", PY.encode()) is not scopes_for("a.py", PY.encode() + b"Y = 2\n")


def test_include_guards_are_no_scope_and_macros_are() -> None:
    text = dedent(
        """
        #ifndef FLASHINFER_UTILS_CUH_
        #define FLASHINFER_UTILS_CUH_
        #define DISPATCH_GQA_GROUP_SIZE(group_size, GROUP_SIZE, ...) \\
          if (group_size == 1) {                                     \\
            __VA_ARGS__                                              \\
          }
        #endif
        """
    )
    tree = parse_scopes("cuda", text.encode())
    assert tree.scope_path(4) == ("#define DISPATCH_GQA_GROUP_SIZE",)
    assert tree.scope_path(1) == ()


def test_a_test_macro_defining_a_function_is_named_by_its_arguments() -> None:
    """gtest's TEST_F(Suite, Name) { ... } (and a project's own UCS_TEST_P): named by its
    suite and test name, so the tests of one file are not look-alike twins (and a variant of
    the macro names the same test); another macro by all its arguments."""
    tree = parse_scopes(
        "cpp",
        dedent(
            """
            UCS_TEST_P(test_rc, stress_iface_ops) {
                send();
            }

            TEST_F(Suite,   Name)
            {
                check();
            }

            int MAX(int a) { return a; }
            """
        ).encode(),
    )

    assert [s.path for s in tree.scopes] == [
        ("TEST(test_rc, stress_iface_ops)",),
        ("TEST(Suite, Name)",),
        ("MAX",),
    ]
