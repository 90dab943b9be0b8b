"""A conflict where one side only respaced lines (realigned ``=`` after a line left) that the
other side rewrote is merged: the rewrite, respaced (NVIDIA/cccl bf8e9d2393: the fix realigned
``end   =``, the release had written ``(::cuda::std::min) (`` as ``::cuda::std::min(``); a
respacing that touches a rewritten token, a re-indented line, or two changes by tokens in
lines side by side stay a conflict."""

from __future__ import annotations

import time
from pathlib import Path

from patchkit.engine.diff.respace import merge_line, merged_region
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream
from tests.conftest import dedent
from tests.engine.test_placement import ported

BASE = dedent(
    """
    int scan(int n, int num_threads)
    {
      int total = 0;
      {
        const int tid        = thread_num();
        const int block_size = ceil_div(n, num_threads);
        const int start      = tid * block_size;
        const int end        = (min) (start + block_size, n);
        total += end - start;
      }
      return total;
    }
    """
)
# the fix: block_size computed once, above; the block's '=' realigned after it left
FIX = BASE.replace(
    "  int total = 0;\n", "  int total = 0;\n  const int block_size = ceil_div(n, num_threads);\n"
).replace(
    """    const int tid        = thread_num();
    const int block_size = ceil_div(n, num_threads);
    const int start      = tid * block_size;
    const int end        = (min) (start + block_size, n);
""",
    """    const int tid   = thread_num();
    const int start = tid * block_size;
    const int end   = (min) (start + block_size, n);
""",
)
OLD_END = "    const int end        = (min) (start + block_size, n);\n"


def _port(tmp_path: Path, theirs: str, fix: str = FIX) -> tuple[Outcome, str]:
    up = Upstream(tmp_path / "up")
    base = up.commit({"scan.c": BASE}, "base")
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"scan.c": fix}))
    up.commit({"scan.c": theirs})
    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)
    return report.outcome, (up.path / "scan.c").read_text()


def test_lines_the_patch_only_respaced_get_upstreams_rewrite(tmp_path: Path) -> None:
    theirs = BASE.replace(OLD_END, "    const int end        = min(start + block_size, n);\n")

    outcome, text = _port(tmp_path, theirs)

    assert outcome is Outcome.CARRIED
    assert text == FIX.replace("(min) (start", "min(start")


def test_a_respacing_beside_a_rewritten_token_stays_a_conflict(tmp_path: Path) -> None:
    theirs = BASE.replace(OLD_END, "    const int stop       = (min) (start + block_size, n);\n")

    outcome, text = _port(tmp_path, theirs)

    assert outcome is Outcome.CONFLICT
    assert text == theirs


def test_a_line_reindented_is_no_respacing(tmp_path: Path) -> None:
    theirs = BASE.replace(OLD_END, "    const int end        = min(start + block_size, n);\n")
    fix = FIX.replace("    const int end   =", "      const int end   =")

    outcome, text = _port(tmp_path, theirs, fix)

    assert outcome is Outcome.CONFLICT
    assert text == theirs


def test_changes_by_tokens_on_lines_side_by_side_stay_a_conflict() -> None:
    base = [b"items.sort()\n", b"return items[0]\n"]
    ours = [b"items.sort(reverse=True)\n", b"return items[0]\n"]
    theirs = [b"items.sort()\n", b"return items[-1]\n"]

    assert merged_region(ours, base, theirs) is None


def test_a_line_merges_by_tokens_only_where_a_kept_token_lies_between() -> None:
    base = b"  int end        = (min) (a, n);\n"

    apart = merge_line(base, b"  int end        = min(a, n);\n", b"  int end   = (min) (a, n);\n")
    touching = merge_line(
        base, b"  int stop       = (min) (a, n);\n", b"  int end   = (min) (a, n);\n"
    )

    assert apart == b"  int end   = min(a, n);\n"
    assert touching is None


def test_a_line_merged_is_rewritten_only_in_the_hunk_whose_conflict_wrote_it(
    tmp_path: Path,
) -> None:
    """The patch respaces ``y  =  foo(a)`` in f and adds ``y = foo(a)`` in g; upstream wrote
    f's line ``foo(a, b)``: f gets the rewrite, g the patch's own line, as it added it."""
    base = dedent(
        """
        def f(a, b):
            y  =  foo(a)
            return y


        def pad1():
            return 1


        def pad2():
            return 2


        def g(a, b):
            z = 1
            w = 2
            v = 3
            return z + w + v
        """
    )
    patched = base.replace("    y  =  foo(a)\n", "    y = foo(a)\n").replace(
        "    z = 1\n", "    z = 1\n    y = foo(a)\n"
    )
    upstream = base.replace("    y  =  foo(a)\n", "    y  =  foo(a, b)\n").replace("v = 3", "v = 4")

    report, text = ported(tmp_path, "m.py", base, patched, upstream)

    assert report.outcome is Outcome.CARRIED
    assert text == upstream.replace("    y  =  foo(a, b)\n", "    y = foo(a, b)\n").replace(
        "    z = 1\n", "    z = 1\n    y = foo(a)\n"
    )


def test_a_long_line_is_left_a_conflict_at_once() -> None:
    """A data table on one line (3,000 numbers) is over the bound: no token-by-token
    comparison (seconds, growing with the square of its length), the conflict stands."""
    long = b"a = [" + b", ".join(b"%d" % i for i in range(3000)) + b"]\n"
    ours = long.replace(b"[0,", b"[0 ,")
    theirs = long.replace(b"2999]", b"3007]")

    started = time.monotonic()
    merged = merged_region([ours], [long], [theirs])

    assert merged is None
    assert time.monotonic() - started < 1.0
