"""A change block upstream already made (in its own words: with a rename it made across the
file) is left out of its hunk when the merge conflicts, the rest carried, partly upstreamed
(scipy dc1ae86db6: ``c_args: [cython_c_args, c_undefined_ok]`` stood upstream as
``[cython_c_args, Wno_maybe_uninitialized]``); the added line elsewhere in the scope, or
beside the removed line upstream kept, is no evidence: the conflict stands."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.diff.parse import parse_diff
from patchkit.engine.diff.present import blocks, without
from patchkit.ops.port import port
from patchkit.outcome import Outcome, Rule
from testing.builders import Upstream
from tests.conftest import dedent
from tests.engine.test_placement import ported

BASE = dedent(
    """
    debug_opts = ["-g"]


    def one(env):
        env.setup()
        env.check()
        return build(sources, extra_defines, debug_opts)


    def two(env):
        return build(headers, debug_opts)


    def three(env):
        return build(tests)
    """
)
OLD = "    return build(sources, extra_defines, debug_opts)\n"
# the fix: one() sets up quietly and drops extra_defines (one hunk, two blocks), three() logs
FIX = (
    BASE.replace(OLD, "    return build(sources, debug_opts)\n")
    .replace("env.setup()", "env.setup(quiet=True)")
    .replace("    return build(tests)", '    log("three")\n    return build(tests)')
)
RENAMED = BASE.replace("debug_opts", "dbg_flags")  # upstream's rename, on every line
MADE = "    return build(sources, dbg_flags)\n"  # the fix's line, in upstream's words
KEPT = "    return build(sources, extra_defines, dbg_flags)\n"


def _port(tmp_path: Path, theirs: str) -> tuple[Outcome, str, list[str]]:
    up = Upstream(tmp_path / "up")
    base = up.commit({"build.py": BASE}, "base")
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"build.py": FIX}))
    up.commit({"build.py": theirs})
    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)
    rules = [p.rule.value for p in report.result.placements]
    return report.outcome, (up.path / "build.py").read_text(), rules


def test_a_block_upstream_made_in_its_own_words_is_left_out_the_rest_carried(
    tmp_path: Path,
) -> None:
    theirs = RENAMED.replace(KEPT, MADE)

    outcome, text, rules = _port(tmp_path, theirs)

    assert outcome is Outcome.PARTLY_UPSTREAMED
    assert text == theirs.replace("env.setup()", "env.setup(quiet=True)").replace(
        "    return build(tests)", '    log("three")\n    return build(tests)'
    )
    assert rules == [Rule.SCOPE_MERGE.value, Rule.CONTEXT.value]


def test_a_hunk_whose_every_block_upstream_made_is_already_upstream(tmp_path: Path) -> None:
    theirs = RENAMED.replace(KEPT, MADE).replace("env.setup()", "env.setup(quiet=True)")

    outcome, text, rules = _port(tmp_path, theirs)

    assert outcome is Outcome.PARTLY_UPSTREAMED
    assert text == theirs.replace(
        "    return build(tests)", '    log("three")\n    return build(tests)'
    )
    assert rules == [Rule.UPSTREAM.value, Rule.CONTEXT.value]


def test_the_added_line_elsewhere_in_the_scope_is_no_evidence(tmp_path: Path) -> None:
    moved = RENAMED.replace("    env.check()\n" + KEPT, MADE + "    env.check()\n")

    outcome, text, _ = _port(tmp_path, moved)

    assert outcome is Outcome.CONFLICT
    assert text == moved  # nothing written


def test_the_added_line_beside_the_removed_line_upstream_kept_is_no_evidence(
    tmp_path: Path,
) -> None:
    both = RENAMED.replace(KEPT, KEPT + MADE)

    outcome, text, _ = _port(tmp_path, both)

    assert outcome is Outcome.CONFLICT
    assert text == both


def test_a_rename_seen_on_the_blocks_line_alone_is_no_evidence(tmp_path: Path) -> None:
    alone = BASE.replace(OLD, MADE)  # dbg_flags only where the block is: no rename learned

    outcome, text, _ = _port(tmp_path, alone)

    assert outcome is Outcome.CONFLICT
    assert text == alone


def test_a_block_left_out_keeps_its_lines_as_context(tmp_path: Path) -> None:
    diff = Upstream(tmp_path / "up")
    diff.commit({"f.txt": "a\nb\nc\n"}, "base")
    (fp,) = parse_diff(diff.diff_of({"f.txt": "A\nb\nC\n"}), tmp_path / "x.patch")
    (hunk,) = fp.hunks
    first, second = blocks(hunk)

    rest = without(hunk, [first])

    assert (first.row, first.removed, first.added) == (0, (b"a\n",), (b"A\n",))
    assert (second.row, second.removed, second.added) == (2, (b"c\n",), (b"C\n",))
    assert rest.old == hunk.old and rest.new == (b"a\n", b"b\n", b"C\n")
    assert rest.added == (b"C\n",) and rest.header == hunk.header


def test_the_patchs_own_rename_is_not_upstreams_other_rename(tmp_path: Path) -> None:
    """The patch renames compute to compute_fast, upstream to compute_v2: renames are learned
    from the base to upstream, so compute_fast (nowhere upstream) is never already there."""
    base = dedent(
        """
        def compute(a, b):
            total = a + b
            return total


        def run(x):
            y = compute(x, 1)
            z = compute(y, 2)
            return z
        """
    )
    upstream = base.replace("compute(", "compute_v2(")

    report, text = ported(
        tmp_path, "m.py", base, base.replace("compute(", "compute_fast("), upstream
    )

    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_block_naming_a_new_word_is_never_upstream_by_a_rename(tmp_path: Path) -> None:
    """The block calls make where it called build; upstream's line says make too, with its
    rename of debug_opts: the block renames itself, so only a literal match is evidence."""
    fix = FIX.replace(
        "    return build(sources, debug_opts)\n", "    return make(sources, debug_opts)\n"
    )
    theirs = RENAMED.replace(KEPT, "    return make(sources, dbg_flags)\n")
    up = Upstream(tmp_path / "up")
    base = up.commit({"build.py": BASE}, "base")
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"build.py": fix}))
    up.commit({"build.py": theirs})

    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)

    assert report.outcome is Outcome.CONFLICT
    assert (up.path / "build.py").read_text() == theirs
