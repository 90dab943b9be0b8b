"""Progress: timestamped lines when the output is a log, nothing with --quiet."""

from __future__ import annotations

import io
import re

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
        "verifying 1/2: a",
        "verifying 2/2: b",
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
