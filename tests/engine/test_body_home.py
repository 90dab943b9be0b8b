"""Upstream renamed the definition a hunk changes, or moved its body into a new one and left a
wrapper under the old name: the hunk goes into the definition that holds its body, found in
the file by its body (:mod:`patchkit.engine.diff.bodyhome`); a conflict when two definitions
hold it alike, when the old name still holds a body like it, or when the names share nothing.

Each case on a small repository through ``port`` (a line merge, and main, conflict on all)."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.diff.bodyhome import body_home
from patchkit.engine.diff.fileview import FileView
from patchkit.engine.diff.parse import split_lines
from patchkit.outcome import Outcome
from tests.conftest import dedent
from tests.engine.test_placement import ported

SELECTOR_HPP = dedent(
    """
    #pragma once

    LIB_NAMESPACE_BEGIN

    namespace detail
    {
    struct selector
    {
      int size;
      bool plus;
      bool trivial;

      int get_lookahead_policy(int cc) const
      {
        if (cc >= 120)
        {
          return fallback_lookahead();
        }
        if (cc >= 100)
        {
          // tunings from bench/scan/sum.lookahead.cu
          if (plus && trivial)
          {
            switch (size)
            {
              case 1:
                return 4;
              case 2:
                return 6;
              default:
                break;
            }
          }
        }
        return 0;
      }

      int get_default_policy(int cc) const
      {
        return cc >= 100 ? 2 : 1;
      }
    };
    } // namespace detail

    LIB_NAMESPACE_END
    """
)
OLD_NAMES = {
    "get_lookahead_policy": "get_warpspeed_policy",
    "fallback_lookahead": "fallback_warpspeed",
    "sum.lookahead.cu": "sum.warpspeed.cu",
}


def _renamed(text: str, names: dict[str, str]) -> str:
    for old, new in names.items():
        text = text.replace(old, new)
    return text


def test_a_renamed_method_gets_the_hunk_beside_a_rewritten_comment(tmp_path: Path) -> None:
    patched = SELECTOR_HPP.replace("if (plus && trivial)", "if (trivial)")
    upstream = _renamed(SELECTOR_HPP, OLD_NAMES)
    report, text = ported(tmp_path, "scan.hpp", SELECTOR_HPP, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == _renamed(patched, OLD_NAMES)
    assert "get_warpspeed_policy" in report.result.placements[0].note


def test_a_body_held_alike_by_two_renamed_methods_stays_a_conflict(tmp_path: Path) -> None:
    patched = SELECTOR_HPP.replace("if (plus && trivial)", "if (trivial)")
    renamed = _renamed(SELECTOR_HPP, OLD_NAMES)
    start = renamed.index("  int get_warpspeed_policy")
    end = renamed.index("  int get_default_policy")
    twin = renamed[start:end].replace("get_warpspeed_policy", "get_onesweep_policy")
    upstream = renamed[:end] + twin + renamed[end:]
    report, text = ported(tmp_path, "scan.hpp", SELECTOR_HPP, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_renamed_method_whose_name_shares_no_word_stays_a_conflict(tmp_path: Path) -> None:
    patched = SELECTOR_HPP.replace("if (plus && trivial)", "if (trivial)")
    upstream = _renamed(SELECTOR_HPP, OLD_NAMES | {"get_lookahead_policy": "tuned_for"})
    report, text = ported(tmp_path, "scan.hpp", SELECTOR_HPP, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


ALLOC_C = dedent(
    """
    #include <stdlib.h>

    static libAtomic size_t used_memory = 0;

    /* Try allocating memory, and return NULL if failed. */
    void *try_alloc_usable(size_t size, size_t *usable) {
        check_size(size);
        void *ptr = malloc(size + PREFIX_SIZE);
        if (!ptr) return NULL;
        update_stats(ptr);
        if (usable) *usable = size;
        return ptr;
    }

    void *alloc(size_t size) {
        void *ptr = try_alloc_usable(size, NULL);
        if (!ptr) oom(size);
        return ptr;
    }
    """
)
WRAPPER = dedent(
    """

    void *try_alloc_usable(size_t size, size_t *usable) {
        size_t got = 0;
        void *ptr = try_alloc_usable_internal(size, &got);
        if (usable) *usable = got;
        return ptr;
    }
    """
)
CHECKED = "    if (size >= SIZE_MAX/2) return NULL;\n"


def _split(text: str) -> str:
    """``try_alloc_usable``'s body moved into ``try_alloc_usable_internal``, a wrapper left."""
    inner = text.replace(
        "void *try_alloc_usable(size_t size, size_t *usable) {",
        "static inline void *try_alloc_usable_internal(size_t size, size_t *usable) {",
    ).replace("try_alloc_usable(size, NULL)", "try_alloc_usable_internal(size, NULL)")
    at = inner.index("\nvoid *alloc(")
    return inner[:at] + WRAPPER + inner[at:]


def test_a_body_moved_into_a_new_helper_gets_the_hunk_not_the_wrapper(tmp_path: Path) -> None:
    patched = ALLOC_C.replace("    check_size(size);\n", CHECKED)
    upstream = _split(ALLOC_C)
    report, text = ported(tmp_path, "alloc.c", ALLOC_C, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == _split(patched)


def test_an_old_name_that_still_holds_a_body_like_it_stays_a_conflict(tmp_path: Path) -> None:
    patched = ALLOC_C.replace("    check_size(size);\n", CHECKED)
    split = _split(ALLOC_C)
    start, end = split.index("\nvoid *try_alloc_usable("), split.index("\nvoid *alloc(")
    kept = ALLOC_C[ALLOC_C.index("\nvoid *try_alloc_usable(") : ALLOC_C.index("\nvoid *alloc(")]
    kept = kept.replace("PREFIX_SIZE);", "PREFIX_SIZE + 1);").replace("(ptr);", "(ptr, size);")
    upstream = split[:start] + kept + split[end:]
    report, text = ported(tmp_path, "alloc.c", ALLOC_C, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_the_result_check_still_judges_a_file_the_grammar_reads_whole(tmp_path: Path) -> None:
    """The check of every result compares definitions by name: where it reads the whole file,
    the hunk in the renamed definition is refused by it, as before (never written)."""
    clean = ALLOC_C.replace("static libAtomic size_t", "static size_t")
    patched = clean.replace("    check_size(size);\n", CHECKED)
    upstream = _split(clean)
    report, text = ported(tmp_path, "alloc.c", clean, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert "a scope the patch changes nothing in at base" in report.result.details[0].reason
    assert text == upstream


def test_a_body_two_base_methods_shared_left_under_one_new_name_stays_a_conflict(
    tmp_path: Path,
) -> None:
    start = SELECTOR_HPP.index("  int get_lookahead_policy")
    end = SELECTOR_HPP.index("  int get_default_policy")
    twin = SELECTOR_HPP[start:end].replace("get_lookahead_policy", "get_lookahead2_policy")
    base = SELECTOR_HPP[:end] + twin + SELECTOR_HPP[end:]
    patched = base.replace("if (plus && trivial)", "if (trivial)", 1)
    upstream = _renamed(SELECTOR_HPP, OLD_NAMES)  # one of them left, renamed: which one?
    report, text = ported(tmp_path, "scan.hpp", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_body_found_under_a_name_the_base_had_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream's method holding the body has the name of another method of the base: the
    hunk is never placed in another definition the base had."""
    base = SELECTOR_HPP.replace(
        "  int get_default_policy(int cc) const\n",
        "  int get_warpspeed_policy(int cc) const\n  {\n    return 0;\n  }\n\n"
        "  int get_default_policy(int cc) const\n",
    )
    patched = base.replace("if (plus && trivial)", "if (trivial)")
    upstream = _renamed(SELECTOR_HPP, OLD_NAMES)
    report, text = ported(tmp_path, "scan.hpp", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def _function(name: str, lines: int, every: int = 0) -> str:
    """A long C function; with ``every``, each ``every``-th line of its body written otherwise."""
    body = "".join(
        f"    x{i % 50} {'+=' if every and i % every == 0 else '='} y{i % 7} + {i % 3};\n"
        for i in range(lines)
    )
    return f"int {name}(void) {{\n{body}    return 0;\n}}\n"


def test_a_long_body_is_compared_by_what_differs_and_never_beyond_a_bound() -> None:
    """A 20,000-line definition renamed is found by its rest after the common head and tail
    (its first line); one alike but changed all along (every fifth line) is not compared
    beyond the bound (a conflict), so no hostile file makes the rule spend seconds."""
    base = FileView("a.c", split_lines(_function("compute_all", 20000).encode()))
    renamed = FileView("a.c", split_lines(_function("compute_all_v2", 20000).encode()))
    (scope,) = base.tree.scopes if base.tree else ()
    home = body_home(base, scope, renamed)
    assert home is not None and home.path == ("compute_all_v2",)
    spread = _function("compute_all_v2", 20000, every=5)
    assert body_home(base, scope, FileView("a.c", split_lines(spread.encode()))) is None


REALLOC_C = dedent(
    """
    #include <stdlib.h>

    static libAtomic size_t used_memory = 0;

    void *try_realloc_usable(void *ptr, size_t size, size_t *usable) {
        check_size(size);
        size_t oldsize;
        void *newptr;

        if (size == 0 && ptr != NULL) {
            zfree(ptr);
            return NULL;
        }
        if (ptr == NULL)
            return try_malloc_usable(size, usable);

        oldsize = alloc_size(ptr);
        newptr = realloc(ptr, size);
        if (newptr == NULL) return NULL;
        update_stats(oldsize, newptr);
        return newptr;
    }
    """
)
REALLOC_WRAPPER = dedent(
    """

    void *try_realloc_usable(void *ptr, size_t size, size_t *usable) {
        size_t got = 0;
        ptr = try_realloc_usable_internal(ptr, size, &got);
        if (usable) *usable = got;
        return ptr;
    }
    """
)
GUARD = "    if (size >= SIZE_MAX/2) {\n        zfree(ptr);\n        return NULL;\n    }\n\n"


def test_a_hunk_its_context_placed_in_the_renamed_body_is_merged_with_the_others(
    tmp_path: Path,
) -> None:
    """Two hunks of one definition whose body moved behind a wrapper: one conflicts (the
    signature upstream rewrote is its context), the other's context is intact in the new
    definition; both go there, the second where its context put it."""
    patched = REALLOC_C.replace("    check_size(size);\n", "").replace(
        "    oldsize = alloc_size(ptr);\n", GUARD + "    oldsize = alloc_size(ptr);\n"
    )

    def split(text: str) -> str:
        inner = text.replace(
            "void *try_realloc_usable(", "static void *try_realloc_usable_internal("
        )
        return inner + REALLOC_WRAPPER

    report, text = ported(tmp_path, "realloc.c", REALLOC_C, patched, split(REALLOC_C))
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == split(patched)
