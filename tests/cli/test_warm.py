"""The warm path of ``apply`` and ``status`` (``ops/warm.py``): a run whose inputs are as a
recorded run found them is replayed without the engine; any change of the lock, a patch (diff,
rewrite or metadata) or a tree file takes the full path, and gives what the full path gives."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from testing.builders import Scenario

REWRITE = """\
from patchkit.engine.rewrite import Rewrite


class Bump(Rewrite):
    path = "pkg/limits.py"
    anchors = {"LIMIT": 1}

    def leave_Integer(self, original_node, updated_node):
        if not self.in_anchor:
            return updated_node
        if updated_node.value == "2":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="2"))
"""

# One command in a new process: its exit code, output and the modules it imported.
PROBE = """\
import json, sys
from patchkit.cli import main
code = main(sys.argv[2:])
sys.stdout.flush()
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""
FULL = "patchkit.engine.series"  # what the full path of apply always imports
SETTLE = 2.1  # seconds: a file changed more recently is no input a record stands on


class Run:
    def __init__(self, code: int, stdout: str, stderr: str, modules: set[str]) -> None:
        self.code, self.stdout, self.stderr, self.modules = code, stdout, stderr, modules

    @property
    def warm(self) -> bool:
        return FULL not in self.modules and "patchkit.ops.status" not in self.modules


def run(s: Scenario, tmp_path: Path, *args: str) -> Run:
    out = tmp_path / "probe.json"
    out.unlink(missing_ok=True)
    argv = [*args, "--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    data = json.loads(out.read_text()) if out.exists() else {"code": proc.returncode, "modules": []}
    return Run(data["code"], proc.stdout, proc.stderr, set(data["modules"]))


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, {"pkg/limits.py": "LIMIT = 1\n", "a.txt": "a\n", "b.txt": "b\n"})
    s.add("p1", {"a.txt": "A\n"})
    s.project.add_rewrite("bump", REWRITE)
    meta = s.set_root / "patches" / "bump.toml"
    meta.write_text(meta.read_text() + 'files = ["pkg/limits.py"]\n')
    return s


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Scenario, Run]:
    """A scenario whose apply was recorded (its inputs settled first), then reset."""
    s = scenario(tmp_path)
    time.sleep(SETTLE)
    full = run(s, tmp_path, "apply")
    assert full.code == 0 and not full.warm, full.stderr
    assert run(s, tmp_path, "reset").code == 0
    assert s.read("a.txt") == b"a\n"
    return s, full


def test_apply_after_reset_replays_the_recorded_run(
    recorded: tuple[Scenario, Run], tmp_path: Path
) -> None:
    s, full = recorded
    before = s.tree().state_dir / "state.json"
    assert not before.exists()
    warm = run(s, tmp_path, "apply")
    assert warm.code == 0 and warm.warm, warm.stderr
    assert warm.stdout == full.stdout  # what the full run printed
    assert s.read("a.txt") == b"A\n" and s.read("pkg/limits.py") == b"LIMIT = 2\n"
    assert s.status() == {"p1": "applied", "bump": "applied"}
    assert not (s.tree().state_dir / "journal.json").exists()
    # reset after a warm apply restores upstream's bytes, as after a full one
    assert run(s, tmp_path, "reset").code == 0
    assert s.read("a.txt") == b"a\n" and s.read("pkg/limits.py") == b"LIMIT = 1\n"


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


CHANGES: dict[str, Callable[[Scenario], None]] = {
    "lock": lambda s: _append(s.lock_path, "# moved on\n"),
    "diff": lambda s: (s.set_root / "patches" / "p1.patch").write_bytes(
        s.upstream.diff_of({"a.txt": "AA\n"})
    ),
    "rewrite": lambda s: _append(
        s.set_root / "patches" / "bump.py", "\n\nBump.anchors = {'LIMIT': 1}\n"
    ),
    "metadata": lambda s: _append(s.set_root / "patches" / "p1.toml", "# reviewed\n"),
    "manifest": lambda s: _append(s.set_root / "patchset.toml", "# reviewed\n"),
    "tree file read": lambda s: s.upstream.commit({"pkg/limits.py": "LIMIT = 1\nX = 3\n"}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_of_an_input_takes_the_full_path(
    recorded: tuple[Scenario, Run], tmp_path: Path, change: str
) -> None:
    s, _ = recorded
    warm = run(s, tmp_path, "apply")
    assert warm.warm, "the unchanged case replays"
    assert run(s, tmp_path, "reset").code == 0
    CHANGES[change](s)
    if change == "tree file read":
        s.lock_to_head()
    again = run(s, tmp_path, "apply")
    assert again.code == 0 and not again.warm, again.stderr
    if change == "diff":
        assert s.read("a.txt") == b"AA\n"
    if change == "tree file read":
        assert s.read("pkg/limits.py") == b"LIMIT = 2\nX = 3\n"


def test_a_tree_file_edited_after_reset_is_never_replayed_over(
    recorded: tuple[Scenario, Run], tmp_path: Path
) -> None:
    s, _ = recorded
    (s.root / "a.txt").write_text("mine\n")
    again = run(s, tmp_path, "apply")
    assert again.code == 4 and not again.warm  # the full path refuses the dirty file
    assert s.read("a.txt") == b"mine\n"


def test_a_saved_result_gone_takes_the_full_path(
    recorded: tuple[Scenario, Run], tmp_path: Path
) -> None:
    s, _ = recorded
    objects = s.tree().state_dir / "objects"
    for item in objects.iterdir():
        item.unlink()
    again = run(s, tmp_path, "apply")
    assert again.code == 0 and not again.warm, again.stderr
    assert s.read("a.txt") == b"A\n"
    assert run(s, tmp_path, "reset").code == 0  # the full run recorded its results again
    assert run(s, tmp_path, "apply").warm and s.read("a.txt") == b"A\n"


def test_status_replays_until_a_file_it_read_changes(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    assert run(s, tmp_path, "apply").code == 0
    time.sleep(SETTLE)  # the files apply wrote settle
    full = run(s, tmp_path, "status")
    warm = run(s, tmp_path, "status")
    assert not full.warm and warm.warm
    assert warm.stdout == full.stdout and "applied" in warm.stdout
    (s.root / "a.txt").write_text("edited\n")
    changed = run(s, tmp_path, "status")
    assert not changed.warm and "modified since apply" in changed.stdout
