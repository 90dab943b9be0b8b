"""File names, patch ids and messages are shown as they are: rich's markup parser never sees
them (a file named ``[/x].txt`` crashed apply and status on a terminal with exit 70)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from patchkit.cli.render import Out, literal, plain, styled
from testing.builders import Scenario
from testing.terminal import on_a_terminal

NAMES = ("[/x].txt", "[bold]b[/].txt", "[link=x]c.txt")


def test_styled_keeps_every_bracket_but_patchkit_s_own_tags() -> None:
    text = f"[red]error:[/] {literal('[/x] [bold]y[/]')}"
    assert styled(text).plain == "error: [/x] [bold]y[/]"
    assert plain(text) == "error: [/x] [bold]y[/]"


def test_a_terminal_prints_markup_like_names(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Out, "is_terminal", property(lambda self: True))
    out = Out()
    out.print("[yellow]note:[/] wrote [/x].txt")  # a stray closing tag: no MarkupError
    out.print("[/x]", markup=False)
    assert "wrote [/x].txt" in capsys.readouterr().out


def test_apply_and_status_on_a_terminal_show_the_names(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {name: "one\n" for name in NAMES})
    s.add("p1", {name: "two\n" for name in NAMES})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "COLUMNS": "200"}
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    for verb in ("apply", "status"):
        code, out = on_a_terminal([sys.executable, "-m", "patchkit", verb, *where], env, 60)
        assert code == 0, out
        assert "[/x].txt" in out and "[bold]b[/].txt" in out
