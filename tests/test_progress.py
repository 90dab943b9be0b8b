"""Progress: timestamped lines when the output is a log, nothing with --quiet."""

from __future__ import annotations

import io
import re
from pathlib import Path

from patchkit import progress


def test_lines_are_timestamped_and_a_step_says_when_it_is_done() -> None:
    out = io.StringIO()
    progress.configure(mode=progress.Mode.LINES, stream=out)
    try:
        with progress.step("fetching vllm 0.20.0"):
            pass
        assert list(progress.steps(["a", "b"], "verifying")) == ["a", "b"]
    finally:
        progress.configure()
    lines = out.getvalue().splitlines()
    assert all(re.match(r"\d\d:\d\d:\d\d ", line) for line in lines)
    assert [line[9:] for line in lines] == [
        "fetching vllm 0.20.0 ...",
        lines[1][9:],
        "verifying 1 of 2: a",
        "verifying 2 of 2: b",
    ]
    assert re.fullmatch(r"fetching vllm 0\.20\.0: done in \d+\.\d s", lines[1][9:])


def test_quiet_shows_nothing() -> None:
    out = io.StringIO()
    progress.configure(quiet=True, stream=out)
    try:
        with progress.step("fetching"):
            progress.note("a note")
        assert list(progress.steps([1, 2], "verifying")) == [1, 2]
    finally:
        progress.configure()
    assert out.getvalue() == ""


def test_quiet_is_taken_before_or_after_the_command() -> None:
    from patchkit.cli import build_parser

    for argv in (["-q", "status", "-t", "vllm"], ["status", "-t", "vllm", "--quiet"]):
        assert build_parser(only="status").parse_args(argv).quiet is True
    assert build_parser(only="status").parse_args(["status", "-t", "vllm"]).quiet is False


def test_counting_says_i_of_n_at_most_every_interval_and_the_last() -> None:
    out = io.StringIO()
    progress.configure(mode=progress.Mode.LINES, stream=out)
    try:
        assert list(progress.counting(iter(range(50)), 50, "cell", every_s=3600)) == list(range(50))
    finally:
        progress.configure()
    assert [line[9:] for line in out.getvalue().splitlines()] == ["cell 0 of 50", "cell 50 of 50"]


def test_a_step_inside_a_bar_on_a_terminal_shares_the_one_live_display() -> None:
    """rich allows one live display at a time: a download (a step) inside the matrix's
    releases (a bar) must not raise, and both show."""
    progress.configure(mode=progress.Mode.TERMINAL)
    try:
        for item in progress.steps(["0.6.6", "0.6.7"], "release"):
            with progress.step(f"downloading {item}"):
                assert list(progress.counting(iter([1, 2]), 2, "cell")) == [1, 2]
        with progress.step("alone"):
            pass
    finally:
        progress.configure()


def test_the_matrix_counts_releases_and_cells_off_a_terminal(tmp_path: Path) -> None:
    from testing.matrix import Releases

    rel = Releases(tmp_path / "world")
    out = io.StringIO()
    progress.configure(mode=progress.Mode.LINES, stream=out)
    try:
        rel.matrix(releases="v1.0..v1.4")
    finally:
        progress.configure()
    said = [line[9:] for line in out.getvalue().splitlines()]
    assert "release 1 of 5: 1.0" in said and "release 5 of 5: 1.4" in said
    assert said[-1] == "cell 15 of 15"
