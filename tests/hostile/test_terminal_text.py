"""Text from input (file names in a diff, a patch's title, a ``gh`` answer) never reaches the
terminal raw: ESC (colours, window titles, cursor moves), CR (writing over the line) and bidi
overrides (reordering what is read) are printed as their names, ``<ESC>``, ``<CR>``,
``<U+202E>``, on a terminal and in logs alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.cli.render import Out
from patchkit.progress import visible
from testing.builders import Scenario
from testing.fake_gh import fake_gh
from tests.hostile.common import run
from tests.ops.test_upstream_check import URL, case

NAMES = ("x\x1b[31mred.txt", "a\rb.txt", "evil\u202etxt.py", "z\x9bc.txt")
HIDDEN = ("\x1b", "\r", "\u202e", "\x9b", "\x07")


def _new_file(path: str) -> bytes:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        "@@ -0,0 +1 @@\n+x\n"
    ).encode()


@pytest.mark.parametrize("terminal", [False, True], ids=["log", "terminal"])
def test_control_characters_in_file_names_are_named_not_printed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    terminal: bool,
) -> None:
    monkeypatch.setattr(Out, "is_terminal", property(lambda self: terminal))
    s = Scenario(tmp_path / "work", {"a.txt": "one\n"})
    s.project.add_diff("p1", b"".join(_new_file(name) for name in NAMES))
    assert run(s, "apply") == 0
    said = capsys.readouterr()
    printed = said.out + said.err
    assert not [ch for ch in HIDDEN if ch in printed], printed
    assert "x<ESC>[31mred.txt" in printed and "<U+202E>" in printed and "a<CR>b.txt" in printed


def test_a_gh_answer_with_escape_sequences_is_named_not_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    c = case(tmp_path / "p")
    gh = fake_gh(tmp_path, monkeypatch)
    title = "\x1b]0;owned\x07\x1b[2Jfix \u202ereversed"
    pr = {"number": 41233, "title": title, "state": "OPEN", "url": f"{URL}/pull/41233"}
    gh.on("pr", "list", contains="39809", out=[{**pr, "files": [], "author": {"login": "x"}}])
    gh.on("pr", "list", out=[])
    argv = ["upstream-check", "--target", "vllm", "--project", str(c.project.path), "--dry-run"]
    assert main(argv) == 0
    said = capsys.readouterr()
    assert not [ch for ch in HIDDEN if ch in said.out + said.err]
    assert "<ESC>]0;owned<U+0007><ESC>[2Jfix <U+202E>reversed" in said.out


def test_visible_keeps_lines_tabs_and_letters() -> None:
    assert visible("a\tb\nç 中 ✓") == "a\tb\nç 中 ✓"
    assert visible("\x1b]0;t\x07\u200b") == "<ESC>]0;t<U+0007><U+200B>"


@pytest.mark.parametrize("terminal", [False, True], ids=["log", "terminal"])
def test_a_tables_title_from_input_is_named_not_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], terminal: bool
) -> None:
    from rich.table import Table

    monkeypatch.setattr(Out, "is_terminal", property(lambda self: terminal))
    table = Table(title="run on ray://\x1b]0;owned\x07host")
    table.add_column("patch")
    table.add_row("p1")
    Out().print(table)
    printed = capsys.readouterr().out
    assert not [ch for ch in HIDDEN if ch in printed], printed
    assert "<ESC>]0;owned<U+0007>host" in "".join(printed.split())  # rich wraps the title
