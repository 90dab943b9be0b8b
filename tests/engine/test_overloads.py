"""Scopes that share a name told apart: C++ overloads by their signature, a test macro by its
suite and test name whatever its variant, and a hunk's own lines merged into its scope when
upstream changed the context on both sides of them."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.structure import parse_scopes
from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import PY_F, ported

SORT = dedent(
    """
    namespace Kokkos {

    template <class ViewType>
    void sort(ViewType const& view, bool const always = false) {
      if (!always) {
        if (Impl::try_std_sort(view)) return;
      }
      auto policy = RangePolicy(0, view.extent(0));
      parallel_reduce("FindExtent", policy, reducer);
      bin_sort.create_permute_vector();
      bin_sort.sort(view);
    }

    template <class ViewType>
    void sort(ViewType view, size_t const begin, size_t const end) {
      if (!always) {
        if (Impl::try_std_sort(view)) return;
      }
      auto policy = RangePolicy(0, view.extent(0));
      parallel_reduce("FindExtent", policy, reducer);
      bin_sort.create_permute_vector();
      bin_sort.sort(view, begin, end);
    }

    }  // namespace Kokkos
    """
)


def test_an_overload_is_told_from_its_sibling_by_its_signature(tmp_path: Path) -> None:
    """Two ``sort`` overloads with alike bodies: the hunk's context changed upstream, so it
    is merged scope against scope; the overload whose parameters are the base's takes it
    (before: ambiguous, the overloads taken for look-alike twins)."""
    old = '  parallel_reduce("FindExtent", policy, reducer);\n  bin_sort.create_permute_vector();\n  bin_sort.sort(view);\n'
    new = '  parallel_reduce("FindExtent", policy, reducer, exec);\n  bin_sort.create_permute_vector();\n  bin_sort.sort(view);\n'
    patched = SORT.replace(old, new)
    first = "    if (Impl::try_std_sort(view)) return;\n"
    upstream = SORT.replace(first, "    if (Impl::try_std_sort(view, exec)) return;\n", 1)
    report, text = ported(tmp_path, "Kokkos_Sort.hpp", SORT, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace(old, new)
    (mark,) = report.result.placements
    assert mark.rule is Rule.SCOPE_MERGE


def test_overloads_with_one_signature_stay_twins(tmp_path: Path) -> None:
    """A copy with the same parameters is a look-alike twin still: never a guess."""
    twin = SORT.replace("void sort(ViewType view, size_t const begin, size_t const end)",
                        "void sort(ViewType const& view, bool const always = false)")  # fmt: skip
    old = '  parallel_reduce("FindExtent", policy, reducer);\n  bin_sort.create_permute_vector();\n  bin_sort.sort(view);\n'
    patched = twin.replace(old, old.replace("reducer)", "reducer, exec)"))
    upstream = twin.replace("(Impl::try_std_sort(view))", "(Impl::try_std_sort(view, exec))")
    report, _ = ported(tmp_path, "Kokkos_Sort.hpp", twin, patched, upstream)
    assert report.outcome is Outcome.AMBIGUOUS


GTEST = dedent(
    """
    UCS_TEST_SKIP_COND_F(malloc_hook, bistro_patch, RUNNING_ON_VALGRIND) {
        ucs_status_t status;
        void *rp;

        /* set hook to mmap call */
        status = ucm_bistro_patch(symbol, (void*)munmap_hook<0>, &rp);
        ASSERT_UCS_OK(status);
        EXPECT_NE((intptr_t)rp, 0);
    }

    UCS_TEST_SKIP_COND_F(malloc_hook, test_event_failed, RUNNING_ON_VALGRIND) {
        ucs_status_t status;
        void *rp;

        /* set hook to mmap call */
        status = ucm_bistro_patch(symbol, (void*)munmap_hook<0>, &rp);
        ASSERT_UCS_OK(status);
        EXPECT_NE((intptr_t)rp, 0);
    }
    """
)


def test_a_test_macro_variant_is_the_same_test() -> None:
    """``UCS_TEST_SKIP_COND_F(s, t, COND)`` and ``UCS_TEST_F(s, t)`` name one test."""
    skip = parse_scopes("cpp", GTEST.encode())
    plain = parse_scopes("cpp", GTEST.replace("_SKIP_COND_F", "_F").replace(", RUNNING_ON_VALGRIND", "").encode())  # fmt: skip
    assert [s.path for s in skip.scopes] == [s.path for s in plain.scopes]
    assert skip.scopes[0].path == ("TEST(malloc_hook, bistro_patch)",)


def test_a_hunk_follows_its_test_when_the_release_names_the_macro_otherwise(
    tmp_path: Path,
) -> None:
    """The release has ``UCS_TEST_F`` and a skip of its own above the changed line; the line
    is in both tests: the scope of the same suite and name takes it (before: a conflict, the
    scope looked gone)."""
    line = "    status = ucm_bistro_patch(symbol, (void*)munmap_hook<0>, &rp);\n"
    first = GTEST.index(line)
    patched = GTEST[:first] + line.replace("munmap_hook<0>", "hook<0>::munmap") + GTEST[first + len(line):]  # fmt: skip
    head = "UCS_TEST_SKIP_COND_F(malloc_hook, bistro_patch, RUNNING_ON_VALGRIND) {\n"
    skip = '    if (RUNNING_ON_VALGRIND) {\n        UCS_TEST_SKIP_R("valgrind");\n    }\n\n'
    upstream = GTEST.replace(head, "UCS_TEST_F(malloc_hook, bistro_patch) {\n").replace(
        "    void *rp;\n\n    /* set", "    void *rp;\n" + skip + "    /* set", 1
    )
    report, text = ported(tmp_path, "malloc_hook.cc", GTEST, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    at = upstream.index(line)
    assert text == upstream[:at] + line.replace("munmap_hook<0>", "hook<0>::munmap") + upstream[at + len(line):]  # fmt: skip


COMPUTE = PY_F[: PY_F.index("\n\n\ndef tail")] + "\n"  # setup() and compute() alone


def test_own_lines_are_merged_when_upstream_inserted_a_block_next_to_them(
    tmp_path: Path,
) -> None:
    """Upstream inserted ten lines right above the line the patch changes: the merge of the
    scope conflicts and a merge by lines allows fewer; the patch's own line is untouched,
    once in the scope, its context beside it (before: a conflict)."""
    block = "".join(f"    total = total + {i}\n" for i in range(10))
    patched = COMPUTE.replace("total = total - 1", "total = total - 2")
    upstream = COMPUTE.replace("    total = total - 1\n", block + "    total = total - 1\n")
    report, text = ported(tmp_path, "calc.py", COMPUTE, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("total = total - 1", "total = total - 2")
    (mark,) = report.result.placements
    assert mark.rule is Rule.SCOPE_LINES


def test_a_context_line_changed_right_next_to_own_lines_stays_a_conflict(tmp_path: Path) -> None:
    """The line right above the one the patch changes was changed upstream (a tolerance the
    backport would have to take along): in place, that is a conflict, as git says."""
    patched = COMPUTE.replace("total = total - 1", "total = total - 2")
    upstream = COMPUTE.replace("total * 2", "total * 3").replace("total > 10", "total > 12")
    report, text = ported(tmp_path, "calc.py", COMPUTE, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_renamed_test_never_sends_its_hunk_into_another_test(tmp_path: Path) -> None:
    """The release renamed the patched test and changed the line above the change: the
    context is found only in the other test, which the base had too; it is not the place
    (before: carried, exit 0, the change written into the wrong test)."""
    line = "    status = ucm_bistro_patch(symbol, (void*)munmap_hook<0>, &rp);\n"
    first = GTEST.index(line)
    patched = GTEST[:first] + line.replace("munmap_hook<0>", "hook<0>::munmap") + GTEST[first + len(line):]  # fmt: skip
    head = "UCS_TEST_SKIP_COND_F(malloc_hook, bistro_patch, RUNNING_ON_VALGRIND) {\n"
    upstream = GTEST.replace(head, "UCS_TEST_F(malloc_hook, bistro_patch_basic) {\n").replace(
        "    /* set hook to mmap call */\n", "    /* set hook to munmap call */\n", 1
    )
    report, text = ported(tmp_path, "malloc_hook.cc", GTEST, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


QUERY = dedent(
    """
    int iface_query(iface_t *iface, attr_t *attr)
    {
        attr->max_short = max_inline - hdr_size;
        attr->max_bcopy = iface->seg_size;

        /* Error Handling */
        attr->flags |= FLAG_ERRHANDLE_PEER_FAILURE;

        return 0;
    }
    """
)


def test_an_insertion_before_the_return_follows_its_own_lines(tmp_path: Path) -> None:
    """The patch adds a check before the function's ``return``; the release added its own
    block between the lines above and that ``return``: the merge conflicts (both insert
    there), the one place where the blank line and the ``return`` stand side by side in the
    function takes it, after the release's block (before: a conflict; patch --fuzz=2 does
    the same here)."""
    check = "    if (attr->max_short) {\n        attr->flags |= FLAG_AM_SHORT;\n    }\n\n"
    patched = QUERY.replace("    return 0;\n", check + "    return 0;\n")
    block = "    /* Tag Offload */\n    tag_query(iface, attr);\n\n"
    upstream = QUERY.replace("    return 0;\n", block + "    return 0;\n")
    report, text = ported(tmp_path, "rc_iface.c", QUERY, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("    return 0;\n", check + "    return 0;\n")
