"""Placement by evidence, on small repositories through ``port``: each rule can fail alone.

A diff is made at a base commit, upstream then moves, and the diff is ported onto the new
commit; the tests check where each hunk went, by which rule, and that a look-alike is never
patched in place of the real thing."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.ops.port import PortReport, port
from patchkit.outcome import Outcome, Rule
from testing.builders import Upstream
from tests.conftest import dedent


def ported(
    tmp_path: Path, path: str, base: str, patched: str, upstream: str
) -> tuple[PortReport, str]:
    """Diff ``base`` → ``patched`` at a base commit, commit ``upstream`` on top, port it."""
    up = Upstream(tmp_path / "up")
    up.commit({path: base}, "base")
    patch = tmp_path / "change.patch"
    patch.write_bytes(up.diff_of({path: patched}))
    commit = up.head()
    up.commit({path: upstream})
    try:
        report = port(patch_file=patch, base_commit=commit, checkout=up.path, explain=True)
    except Exception as exc:  # PatchFailed carries nothing: return the tree as it is
        raise AssertionError(f"port raised {exc}") from exc
    return report, (up.path / path).read_text()


PY_F = dedent(
    """
    def setup():
        return 0


    def compute(a, b):
        total = a + b
        total = total * 2
        total = total - 1
        if total > 10:
            total = 10
        return total


    def tail():
        return 1
    """
)
PY_TWIN = dedent(
    """
    def compute_fast(a, b):
        total = a + b
        total = total * 2
        total = total - 1
        if total > 10:
            total = 10
        return total


    """
)


@pytest.mark.parametrize("where", ["above", "below"])
def test_python_look_alike_twin_does_not_take_the_change(tmp_path: Path, where: str) -> None:
    patched = PY_F.replace("total = 10\n", "total = 10  # clamp\n")
    if where == "above":
        upstream = PY_F.replace("def compute(", PY_TWIN + "def compute(")
    else:
        upstream = PY_F.replace("def tail(", PY_TWIN + "def tail(")
    upstream = upstream.replace("def setup():\n    return 0", "def setup():\n    return -1")
    report, text = ported(tmp_path, "m.py", PY_F, patched, upstream)
    assert report.outcome is Outcome.CARRIED
    fast, real = text.split("def compute(")
    assert "# clamp" not in fast and real.count("# clamp") == 1
    assert text.replace("  # clamp", "") == upstream
    (mark,) = report.result.placements
    assert (mark.rule, mark.scope) == (Rule.SCOPE, ("def compute",))


CPP = dedent(
    """
    namespace flashinfer {

    struct Decode {
      void operator()(int group) const {
        int heads = group;
        heads *= 2;
        heads -= 1;
        if (heads > 8) {
          heads = 8;
        }
        run(heads);
      }
    };

    }  // namespace flashinfer
    """
)
CPP_TWIN = dedent(
    """
    struct Prefill {
      void operator()(int group) const {
        int heads = group;
        heads *= 2;
        heads -= 1;
        if (heads > 8) {
          heads = 8;
        }
        run(heads);
      }
    };

    """
)


@pytest.mark.parametrize("where", ["above", "below"])
def test_cpp_look_alike_twin_does_not_take_the_change(tmp_path: Path, where: str) -> None:
    patched = CPP.replace("if (heads > 8) {", "if (heads > 16) {")
    anchor = "struct Decode" if where == "above" else "}  // namespace"
    upstream = CPP.replace(anchor, CPP_TWIN + anchor)
    report, text = ported(tmp_path, "csrc/decode.cuh", CPP, patched, upstream)
    assert report.outcome is Outcome.CARRIED
    assert text.count("heads > 16") == 1
    decode = text[text.index("struct Decode") :]
    assert "heads > 16" in decode.split("};")[0]
    (mark,) = report.result.placements
    assert mark.rule is Rule.SCOPE
    assert mark.scope == ("namespace flashinfer", "struct Decode", "operator()")


def test_twin_that_alone_keeps_the_context_is_not_patched(tmp_path: Path) -> None:
    """Upstream changed the real function's context and added a look-alike that still has
    it: the single match is in the wrong scope, so the change is merged into its own."""
    patched = PY_F.replace("total = 10\n", "total = 10  # clamp\n")
    upstream = PY_F.replace("def compute(", PY_TWIN + "def compute(")
    head, real = upstream.split("def compute(")
    upstream = head + "def compute(" + real.replace("total - 1\n", "total - 2\n")
    report, text = ported(tmp_path, "m.py", PY_F, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    fast, real = text.split("def compute(")
    assert "# clamp" not in fast and "# clamp" in real
    (mark,) = report.result.placements
    assert mark.rule is Rule.SCOPE_MERGE and mark.scope == ("def compute",)


def test_same_named_twins_are_ambiguous_naming_both(tmp_path: Path) -> None:
    patched = PY_F.replace("total = 10\n", "total = 10  # clamp\n")
    twin = PY_TWIN.replace("compute_fast", "compute")
    upstream = PY_F.replace("def compute(", twin + "def compute(")
    up = Upstream(tmp_path / "up")
    up.commit({"m.py": PY_F})
    patch = tmp_path / "c.patch"
    patch.write_bytes(up.diff_of({"m.py": patched}))
    base = up.head()
    up.commit({"m.py": upstream})
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert report.outcome is Outcome.AMBIGUOUS
    (mark,) = report.result.placements
    assert [c.scope for c in mark.candidates] == [("def compute",), ("def compute",)]
    assert [c.line for c in mark.candidates] == [7, 16]
    assert (up.path / "m.py").read_text() == upstream


BLOCK = "".join(f"  step {c}\n" for c in "abcdef")


def test_duplicated_context_is_settled_by_hunk_order(tmp_path: Path) -> None:
    """Two hunks in a file without a grammar; the second's context occurs twice, once
    before the first hunk's place: only one place keeps the hunks in order."""
    spacer = "".join(f"filler {i}\n" for i in range(8))
    base = "intro\n" + BLOCK + spacer + "first\n" + spacer + BLOCK + "outro\n" * 5
    patched = base.replace("first\n", "first!\n")
    at = patched.rindex("  step d\n")
    patched = patched[:at] + "  added\n" + patched[at:]
    upstream = "moved down\n" + base
    report, text = ported(tmp_path, "notes.txt", base, patched, upstream)
    assert report.outcome is Outcome.CARRIED
    assert text == "moved down\n" + patched
    rules = [m.rule for m in report.result.placements]
    assert rules == [Rule.CONTEXT, Rule.ORDER]
    assert "no grammar" in report.result.placements[1].note


def test_hunk_with_no_trailing_context_goes_at_the_end(tmp_path: Path) -> None:
    tail = "}\n\n}\n"
    base = "int a() {\n  return 0;\n" + tail + "int b() {\n  return 1;\n" + tail
    patched = base + "// end\n"
    upstream = "// license\n" + base
    report, text = ported(tmp_path, "a.c", base, patched, upstream)
    assert report.outcome is Outcome.CARRIED
    assert text == upstream + "// end\n"
    (mark,) = report.result.placements
    assert mark.rule is Rule.END_OF_FILE


def test_two_hunks_with_the_same_context_are_settled_by_their_order(tmp_path: Path) -> None:
    """Both copies of a block get the same change: each hunk matches both copies, and only
    first-to-first, second-to-second keeps the hunks in order."""
    block = "".join(f"  step {c}\n" for c in "abcdefg")
    base = "top\n" + block + "".join(f"mid {i}\n" for i in range(8)) + block + "end\n"
    patched = base.replace("  step d\n", "  step d!\n")
    upstream = "new first line\n" + base
    report, text = ported(tmp_path, "notes.txt", base, patched, upstream)
    assert report.outcome is Outcome.CARRIED
    assert text == "new first line\n" + patched
    assert [m.rule for m in report.result.placements] == [Rule.ORDER, Rule.ORDER]


GATES = dedent(
    """
    class TritonExperts:
        @staticmethod
        def supports(cap):
            # (9,0) <= cap < (11,0): Hopper and Blackwell
            return (9, 0) <= cap < (11, 0)

    class UnfusedExperts:
        @staticmethod
        def supports(cap):
            # (9,0) <= cap < (11,0): Hopper and Blackwell
            return (9, 0) <= cap < (11, 0)
    """
)


def test_lines_changed_next_to_an_upstream_edit_are_placed_in_their_scope(
    tmp_path: Path,
) -> None:
    """Upstream put a guard right above the changed line (a three-way merge conflicts on
    adjacent edits); the changed line occurs once in its own scope, so it is changed there and
    not in the look-alike class."""
    first = GATES.index("< (11, 0)")
    patched = GATES[:first] + GATES[first:].replace("< (11, 0)", "< (13, 0)", 1)
    guard = "        if not has_kernels():\n            return False\n"
    upstream = GATES.replace("        return (9, 0)", guard + "        return (9, 0)", 1)
    report, text = ported(tmp_path, "gates.py", GATES, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    triton, unfused = text.split("class UnfusedExperts")
    assert "< (13, 0)" in triton and "< (11, 0)" in unfused and guard in triton
    (mark,) = report.result.placements
    assert mark.rule is Rule.SCOPE_LINES


ARCHS = dedent(
    """
    # {what} kernels for Blackwell
    set(SRCS {what}.cu)
    if(CUDA_VERSION VERSION_GREATER_EQUAL 13.0)
      set(ARCHS "10.0f")
    else()
      set(ARCHS "10.0a")
    endif()
    list(APPEND ALL ${{ARCHS}})
    message(STATUS "archs")
    add_kernels(${{SRCS}})
    """
)


def test_cmake_blocks_alike_are_told_apart_by_what_is_around_them(tmp_path: Path) -> None:
    """Two identical ``if()/else()`` blocks (control blocks have no name, so they are no
    look-alike twins): the lines around the block at base settle which one."""
    base = "project(x)\n" + ARCHS.format(what="scaled_mm") + ARCHS.format(what="fp4")
    first = base.index('"10.0a"')
    patched = base[:first] + '"10.0a;12.1a"' + base[first + len('"10.0a"') :]
    upstream = base.replace("project(x)\n", "project(x)\nset(NEW 1)\n\n")
    report, text = ported(tmp_path, "CMakeLists.txt", base, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == patched.replace("project(x)\n", "project(x)\nset(NEW 1)\n\n")
    (mark,) = report.result.placements
    assert mark.rule is Rule.SURROUNDINGS
    assert mark.scope == ("if(CUDA_VERSION VERSION_GREATER_EQUAL 13.0)", "else()")


MACRO = dedent(
    """
    #include <errno.h>

    namespace fs = util::filesystem;

    // Call a libc-style function and return on error.
    #define CHECK_LIB_CALL(function, ...)        \\
      {                                          \\
        int _result = function(__VA_ARGS__);     \\
        if (_result != 0) {                      \\
          return fail(strerror(_result));        \\
        }                                        \\
      }                                          \\
      static_assert(true)

    int run() { return 0; }
    """
)


def test_a_merge_may_change_every_scope_its_hunk_touched(tmp_path: Path) -> None:
    """A hunk from a top-level comment into a macro body, merged three-way: the merge's
    changes inside the macro are the hunk's own, not a misplacement."""
    patched = MACRO.replace("libc-style function", "function that sets errno").replace(
        "strerror(_result)", "strerror(_result == -1 ? errno : _result)"
    )
    upstream = MACRO.replace("#include <errno.h>\n", "#include <cerrno>\n#include <string>\n")
    upstream = upstream.replace(
        "namespace fs = util::filesystem;", "namespace fs = std::filesystem;"
    )
    report, text = ported(tmp_path, "exec.cpp", MACRO, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == patched.replace(
        "#include <errno.h>\n", "#include <cerrno>\n#include <string>\n"
    ).replace("namespace fs = util::filesystem;", "namespace fs = std::filesystem;")


def test_a_moved_control_block_is_merged_where_it_went_not_into_its_look_alike(
    tmp_path: Path,
) -> None:
    """Upstream nested both blocks one level deeper and changed a line of the mm block's
    context: only the fp4 block still has the hunk's context. The lines around the mm block
    match the base better, so the change is merged there, never into the look-alike."""
    block = dedent(
        """
          # {what} kernels
          set(SRCS {what}.cu)
          if(V13)
            set(ARCHS "10.0f")
          else()
            set(ARCHS "10.0a")
          endif()
          add(SRCS)
        """
    )
    base = "if(CUDA)\n" + block.format(what="mm") + "endif()\n"
    base += "if(CUDA)\n" + block.format(what="fp4") + "endif()\n"
    patched = base.replace('"10.0a"', '"10.0a;12.1a"', 1)
    moved = block.format(what="mm").replace('"10.0f"', '"10.0f;11.0f"')
    upstream = "if(GPU)\nif(CUDA)\n" + moved + "endif()\n"
    upstream += "if(CUDA)\n" + block.format(what="fp4") + "endif()\nendif()\n"
    report, text = ported(tmp_path, "CMakeLists.txt", base, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    mm, fp4 = text.split("# fp4 kernels")
    assert "12.1a" in mm and "12.1a" not in fp4
    (mark,) = report.result.placements
    assert mark.rule is Rule.SCOPE_MERGE and mark.scope[-2:] == ("if(V13)", "else()")
