"""Every line patchkit prints that holds text from input goes through ``visible()``: progress
lines on stderr (a bar or spinner on a terminal, timestamped lines in a log), log lines, and
the output made for scripts (``show``'s diff, ``matrix``'s page) when a person reads it on a
terminal. ESC, CSI, OSC 8 links, BEL, CR, bidi overrides are named (``<ESC>``); on a terminal
a bracket in a name (``[/x]``) is shown, never read as rich markup (which raised: exit 70)."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchkit import progress
from patchkit.cli import main
from patchkit.cli.render import Out
from testing.builders import Scenario, run_git

HIDDEN = ("\x1b", "\x9b", "\x07", "\r", "\u202e", "\u2066")
EVIL = "v[/x]\x1b]8;;https://e.example\x07link\x1b]8;;\x07\x9b2J\r\u202eexe.\u2066py\nforged"


def _clean(text: str) -> bool:
    return not [ch for ch in HIDDEN if ch in text]


def _every_kind_of_progress() -> None:
    progress.note(f"note {EVIL}")
    with progress.step(f"step {EVIL}"):
        for _ in progress.steps([EVIL, "b"], f"label {EVIL}"):
            with progress.step(f"inner {EVIL}"):
                pass
    assert list(progress.counting(iter([1, 2]), 2, f"cell {EVIL}")) == [1, 2]


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    progress.configure()


def test_progress_lines_in_a_log_name_what_a_terminal_would_act_on(restore: None) -> None:
    out = io.StringIO()
    progress.configure(mode=progress.Mode.LINES, stream=out)

    _every_kind_of_progress()

    said = out.getvalue()
    assert _clean(said), said
    assert "v[/x]<ESC>]8;;https://e.example<U+0007>link" in said
    assert "<U+009B>2J<CR><U+202E>exe.<U+2066>py<LF>forged" in said
    assert all(line[:2].isdigit() for line in said.splitlines())  # no forged line


def test_progress_on_a_terminal_neither_raises_on_brackets_nor_shows_escapes(
    restore: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress.configure(mode=progress.Mode.TERMINAL)

    _every_kind_of_progress()  # rich's markup parser raised MarkupError on '[/x]'

    said = capsys.readouterr()
    assert _clean(said.out + said.err)


def _scenario(tmp_path: Path) -> Scenario:
    name = "x\x1b]8;;http://e\x07link\x1b]8;;\x07\u202etxt.py"
    s = Scenario(tmp_path / "work", {"a.txt": "one\x1b[2J\ntwo\n", name: "evil\x1b[31m\nline\n"})
    s.add("p1", {"a.txt": "one\x1b[2J\nTWO\r\n", name: "evil\x1b[31m\nLINE\x07\n"})
    s.upstream.commit({"a.txt": "ONE\x1b[2J\ntwo\n", name: "evil\x1b[31m\nline!\n"}, "v2\x1b[31m")
    run_git(s.root, "tag", "v1.1")
    run_git(s.root, "checkout", "-q", s.base)
    return s


def _commands(s: Scenario, tmp_path: Path) -> list[list[str]]:
    where = ["--target", "demo", "--project", str(s.project.path)]
    tree = ["--checkout", str(s.root)]
    patch = str(s.project.path / "patchsets" / "demo" / "patches" / "p1.patch")
    return [
        ["apply", *where, *tree],
        ["status", *where, *tree],
        ["show", "p1", *where, *tree],
        ["reset", *where, *tree],
        ["port", patch, "--base", s.base, *tree],
        ["export-series", *where, "--format", "quilt", str(tmp_path / "series")],
        ["rebase", *where, "--onto", "v1.1", "--no-verify"],
        ["rebase", *where, "--abort"],
        ["matrix", *where, "--format", "md", "--no-reuse"],
        ["fetch", *where],
    ]


def test_every_command_names_what_a_terminal_would_act_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """File names, file contents and a commit message with OSC 8 links, CSI, BEL, CR and a
    bidi override, through each command a person runs on a terminal."""
    s = _scenario(tmp_path)
    monkeypatch.setattr(Out, "is_terminal", property(lambda self: True))
    for argv in _commands(s, tmp_path):
        code = main(argv)
        said = capsys.readouterr()
        assert code in (0, 8), (argv[0], code, said.err)
        assert _clean(said.out + said.err), (argv[0], said.out + said.err)


def test_show_piped_to_a_script_is_the_diff_byte_for_byte(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    s = _scenario(tmp_path)
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["show", "p1", *where]) == 0
    assert b"TWO\r\n" in capfdbinary.readouterr().out


def test_log_lines_name_what_a_terminal_would_act_on() -> None:
    code = (
        "import argparse, logging\n"
        "from patchkit.cli import configure_logging\n"
        "configure_logging(argparse.Namespace(verbose=False))\n"
        "logging.getLogger('patchkit.x').warning('%s has no sha256', 'u\\x1b]0;t\\x07\\nforged')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stderr == "patchkit: u<ESC>]0;t<U+0007><LF>forged has no sha256\n"
