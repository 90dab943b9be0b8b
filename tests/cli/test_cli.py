"""The command line: JSON shapes, exit codes, one-line errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.cli import main
from testing.builders import Scenario

FILES = {"a.txt": "a one\na two\n", "b.txt": "b one\nb two\n"}


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    s.add("p2", {"b.txt": "b one\nb TWO\n"})
    return s


def cli(s: Scenario, *args: str) -> int:
    return main(
        [
            args[0],
            "--target",
            "demo",
            "--project",
            str(s.project.path),
            "--checkout",
            str(s.root),
            *args[1:],
        ]
    )


def one_error_line(err: str) -> str:
    """stderr holds an ``error:`` line (and at most a hint line), never a traceback."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ")
    assert len(lines) <= 2 and all(line.startswith("  what to do:") for line in lines[1:])
    return lines[0]


def test_apply_json_names_target_commit_and_each_patch_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    assert cli(s, "apply", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["target"], data["commit"]) == ("demo", s.base)
    assert [(p["id"], p["state"]) for p in data["patches"]] == [
        ("p1", "applied"),
        ("p2", "applied"),
    ]
    assert s.read("a.txt") == b"a one\na TWO\n"


def test_status_json_has_the_same_top_level_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    assert cli(s, "apply") == 0
    capsys.readouterr()
    assert cli(s, "status", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert {"target", "commit", "patches"} <= set(data)
    assert (data["target"], data["commit"]) == ("demo", s.base)
    assert [(p["id"], p["state"]) for p in data["patches"]] == [
        ("p1", "applied"),
        ("p2", "applied"),
    ]


def test_reset_json_lists_restored_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    cli(s, "apply")
    capsys.readouterr()
    assert cli(s, "reset", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data["restored"]) == ["a.txt", "b.txt"]
    assert s.read("a.txt") == FILES["a.txt"].encode()


def test_missing_lock_is_a_one_line_error_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    (s.project.path / "upstream.lock").unlink()
    assert cli(s, "apply") == 2
    assert "no upstream.lock found" in one_error_line(capsys.readouterr().err)


def test_bad_manifest_key_exits_2_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    meta = s.set_root / "patches" / "p2.toml"
    meta.write_text(meta.read_text() + 'requires = ["later"]\n')
    assert cli(s, "status") == 2
    line = one_error_line(capsys.readouterr().err)
    assert "p2.toml" in line and "'later'" in line


def test_dirty_tree_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = scenario(tmp_path)
    (s.root / "b.txt").write_text("b one\nb two\nmine\n")
    assert cli(s, "apply") == 4
    assert "b.txt" in one_error_line(capsys.readouterr().err)


def test_failing_apply_exits_6_and_names_the_failing_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    s.upstream.commit({"b.txt": "b one\nb changed upstream\n"})
    s.lock_to_head()
    assert cli(s, "apply") == 6
    out, err = capsys.readouterr()
    assert "p2 (conflict)" in one_error_line(err)
    assert "p2" in out and "conflict" in out
    assert s.read("a.txt") == FILES["a.txt"].encode()


def test_failing_apply_json_still_reports_each_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    s.upstream.commit({"b.txt": "b one\nb changed upstream\n"})
    s.lock_to_head()
    assert cli(s, "apply", "--json") == 6
    data = json.loads(capsys.readouterr().out)
    assert data["written"] is False
    assert [(p["id"], p["state"], p["outcome"]) for p in data["patches"]] == [
        ("p1", "not-applied", "applied"),  # it would apply, but nothing was written
        ("p2", "conflict", "conflict"),
    ]


def test_unknown_target_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    code = main(["status", "--target", "nope", "--project", str(s.project.path)])
    assert code == 2
    assert "'nope'" in one_error_line(capsys.readouterr().err)


def test_apply_warns_when_the_trees_pins_disagree_with_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from testing.builders import Project, Upstream

    upstream = Upstream(tmp_path / "vllm")
    head = upstream.commit(
        {
            "requirements/cuda.txt": "torch==2.10.0\nflashinfer-python==0.6.5\n",
            "vllm/x.py": "x = 1\n",
        }
    )
    project = Project(tmp_path / "project", upstream, head, target="vllm")
    project.add_diff("p", upstream.diff_of({"vllm/x.py": "x = 2\n"}))
    lock = project.path / "upstream.lock"
    lock.write_text(
        lock.read_text()
        + '\n[targets.flashinfer]\nrepository = "https://example.com/fi"\nversion = "0.6.6"\n'
        'commit = "70b142b75b46"\nsource = { kind = "index", package = "flashinfer-python" }\n'
    )
    code = main(["apply", "--project", str(project.path), "--target", "vllm", "--json"])
    assert code == 0
    err = capsys.readouterr().err
    assert "vllm 1.0's requirements pin flashinfer 0.6.5" in err
    assert "targets.flashinfer.version is 0.6.6" in err and "--onto 0.6.5" in err


def test_a_command_imports_only_what_it_needs() -> None:
    """The GPU machines carry few wheels: `apply` must not need the index client (pypi-simple)
    or the rewrite engine's libcst just to parse its arguments."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from patchkit.cli import main\n"
        "try:\n    main(['apply', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pypi_simple', 'libcst', 'patchkit.ops.rebase') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
