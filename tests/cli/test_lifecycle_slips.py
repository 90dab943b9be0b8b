"""The small slips a newcomer met on the README's lifecycle (issue 30), each pinned: ids never
cut in tables, the same exit code for a missing input file, a verb's own usage for a flag
typo, `written` false for a no-op apply, help that names only a verb's own flags, and a dry-run
import naming patches as the real one does."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from patchkit.cli import build_parser, main
from patchkit.cli.render import table
from testing.builders import Project, Upstream, run_git


def test_a_table_never_cuts_a_patch_id_on_a_120_column_terminal() -> None:
    """`status` on a 120-column terminal, with its verified and speed columns: the ids (what
    --include and --patch take) and the paths are whole, never `mamba-prefix-spe…`."""
    out = Console(width=120, file=io.StringIO(), force_terminal=True)
    ids = ["mamba-prefix-spec-buffers", "mxfp4-triton-sm12x (opt-in)"]
    verified = "passed on NVIDIA H100 80GB HBM3 (sm_90) 2026-11-23; passed on cpu (stale)" * 2
    speed = "x1.00 (ssu: sm121 gate b1) to x1.58, 5 cases on NVIDIA H100 80GB HBM3 (sm_90)"
    path = "vllm/v1/attention/backends/mamba_attn.py"
    rows = [[i, "vllm-spark", "rewrite", "not applied", path, verified, speed] for i in ids]
    columns = ("patch", "set", "kind", "state", "files", "verified", "speed")
    out.print(table("t", columns, rows, out=out))
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert "…" not in text
    assert "mamba-prefix-spec-buffers" in text and "mxfp4-triton-sm12x" in text


def test_a_missing_input_file_is_a_usage_error_for_port_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope.patch")
    checkout = Upstream(tmp_path / "checkout")
    checkout.commit({"a.py": "a = 1\n"})
    assert main(["port", missing, "--base", "HEAD", "--checkout", str(checkout.path)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_flag_typo_shows_the_verbs_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as bad:
        main(["status", "--target", "vllm", "--verifyy"])
    assert bad.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: patchkit status") and "--verifyy" in err


def test_status_and_reset_help_do_not_offer_verify() -> None:
    for verb in ("status", "reset"):
        text = build_parser(only=verb)._subparsers._group_actions[0].choices[verb].format_help()  # type: ignore[union-attr]
        assert "--verify" not in text, verb
    apply_help = build_parser(only="apply")._subparsers._group_actions[0].choices["apply"]  # type: ignore[union-attr]
    assert "--verify" in apply_help.format_help()


def test_rebase_set_has_help() -> None:
    parser = build_parser(only="rebase")._subparsers._group_actions[0].choices["rebase"]  # type: ignore[union-attr]
    (action,) = [a for a in parser._actions if "--set" in a.option_strings]
    assert action.help


def test_a_no_op_apply_json_says_nothing_was_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = Upstream(tmp_path / "upstream")
    base = upstream.commit({"pkg/mod.py": "x = 1\n"})
    project = Project(tmp_path / "project", upstream, base)
    project.add_diff("fix", upstream.diff_of({"pkg/mod.py": "x = 2\n"}))
    run_git(upstream.path, "checkout", "-q", base)
    args = ["apply", "--target", "demo", "--project", str(project.path), "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["written"] is True
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["noop"] is True and again["written"] is False
