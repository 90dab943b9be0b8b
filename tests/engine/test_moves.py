"""Following moved code with a diff: a file renamed upstream, a function moved to another
file; the placement names the path the diff was made for."""

from __future__ import annotations

from pathlib import Path

from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream, run_git
from tests.conftest import dedent

MOD = dedent(
    """
    import os


    def helper():
        return 0


    def compute(a, b):
        total = a + b
        return total
    """
)
PATCHED = MOD.replace("total = a + b\n", "total = a + b + 1\n")


def made(tmp_path: Path) -> tuple[Upstream, Path, str]:
    up = Upstream(tmp_path / "up")
    up.commit({"pkg/mod.py": MOD, "pkg/other.py": "X = 1\n"}, "base")
    patch = tmp_path / "bump.patch"
    patch.write_bytes(up.diff_of({"pkg/mod.py": PATCHED}))
    return up, patch, up.head()


def test_a_renamed_file_is_followed(tmp_path: Path) -> None:
    up, patch, base = made(tmp_path)
    run_git(up.path, "mv", "pkg/mod.py", "pkg/core.py")
    up.commit({"pkg/core.py": "# moved\n" + MOD})
    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)
    assert report.outcome is Outcome.CARRIED
    assert (up.path / "pkg/core.py").read_text() == "# moved\n" + PATCHED
    assert report.written == ("pkg/core.py",) and not (up.path / "pkg/mod.py").exists()
    (mark,) = report.result.placements
    assert (mark.path, mark.moved_from, mark.scope) == (
        "pkg/core.py",
        "pkg/mod.py",
        ("def compute",),
    )


def test_a_function_moved_to_another_file_is_followed(tmp_path: Path) -> None:
    up, patch, base = made(tmp_path)
    compute = MOD[MOD.index("def compute") :]
    up.commit(
        {
            "pkg/mod.py": MOD[: MOD.index("\n\ndef compute")] + "\n",
            "pkg/math.py": "import sys\n\n\n" + compute,
        }
    )
    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert (up.path / "pkg/math.py").read_text() == "import sys\n\n\n" + compute.replace(
        "a + b\n", "a + b + 1\n"
    )
    assert "a + b + 1" not in (up.path / "pkg/mod.py").read_text()
    (mark,) = report.result.placements
    assert (mark.path, mark.moved_from) == ("pkg/math.py", "pkg/mod.py")


def test_a_function_gone_everywhere_is_not_guessed(tmp_path: Path) -> None:
    up, patch, base = made(tmp_path)
    up.commit({"pkg/mod.py": MOD[: MOD.index("\n\ndef compute")] + "\n"})
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert report.outcome in (Outcome.CONFLICT, Outcome.GONE)
    assert report.written == ()
