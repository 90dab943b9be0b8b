"""The warm path of ``apply`` and ``status`` (``ops/warm.py``): a run whose inputs are as a
recorded run found them is replayed without the engine; any change of the lock, a patch (diff,
rewrite or metadata) or a tree file takes the full path, and gives what the full path gives."""

from __future__ import annotations

import json
import os
import shutil
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
    search = ("pkg/*.py",)  # the run lists pkg/: its entries are inputs too

    def leave_Integer(self, original_node, updated_node):
        if not self.in_anchor:
            return updated_node
        if updated_node.value == "2":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="2"))
"""

# One command in a new process, through the entry the console script and ``python -m patchkit``
# use: its exit code, output and the modules it imported.
PROBE = """\
import json, sys
from patchkit.__main__ import main
code = main(sys.argv[2:])
sys.stdout.flush()
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules), "from": sys.modules["patchkit"].__file__}, f)
"""
FULL = "patchkit.engine.series"  # what the full path of apply always imports
SETTLE = 2.1  # seconds: a file changed more recently is no input a record stands on


class Run:
    def __init__(self, code: int, stdout: str, stderr: str, modules: set[str], origin: str) -> None:
        self.code, self.stdout, self.stderr, self.modules = code, stdout, stderr, modules
        self.origin = origin  # where the patchkit it ran was imported from

    @property
    def warm(self) -> bool:
        return FULL not in self.modules and "patchkit.ops.status" not in self.modules


def run(
    s: Scenario, tmp_path: Path, *args: str, probe: str = PROBE, cwd: Path | None = None, **env: str
) -> Run:
    out = tmp_path / "probe.json"
    out.unlink(missing_ok=True)
    argv = [*args, "--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(out), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
    )
    data = json.loads(out.read_text()) if out.exists() else {"code": proc.returncode, "modules": []}
    return Run(data["code"], proc.stdout, proc.stderr, set(data["modules"]), data.get("from", ""))


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
    "file added where a rewrite searches": lambda s: (s.root / "pkg" / "more.py").write_text(""),
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


# -- what the entry replays: the command lines it reads as the full parser does -----------------
SAME_AS_FULL = [
    ["apply", "--target", "vllm"],
    ["-q", "apply", "-t", "vllm", "--project", "p", "--checkout", "c"],
    ["apply", "--target=vllm", "--set=a", "--set", "b", "--include", "x", "--json", "-q"],
    ["apply", "-t", "v", "--exclude", "e", "--allow-dirty", "--allow-other-commit", "--explain"],
    ["apply", "-t", "v", "--keep-going", "--python", "/usr/bin/python3", "--quiet"],
    ["status", "--target", "vllm", "--checkout", "c/../d/", "--json"],
    ["--quiet", "status", "-t", "", "--include", "a", "--include", "b", "--set", "s"],
]
LEFT_TO_FULL = [
    ["apply"],  # no target
    ["apply", "--tar", "vllm"],  # abbreviated: the full parser expands it
    ["apply", "-tvllm"],
    ["apply", "-t=vllm"],
    ["apply", "--target", "a", "--target", "b"],
    ["apply", "--target", "-x"],
    ["apply", "--target"],
    ["apply", "--target", "v", "--installed"],
    ["apply", "--target", "v", "--verify"],
    ["apply", "--target", "v", "--json=yes"],
    ["apply", "--target", "v", "extra"],
    ["apply", "--target", "v", "--"],
    ["-v", "apply", "--target", "v"],
    ["status", "--target", "v", "--exclude", "e"],
    ["status", "--target", "v", "--explain"],
    ["reset", "--target", "v"],
    ["apply", "--target", "v", "-h"],
]


def _full_key(argv: list[str]) -> str | None:
    """The record's name the full path gives this command line (``cli/warm.py``)."""
    from patchkit.cli import build_parser
    from patchkit.cli.warm import _key

    verb = next(word for word in argv if not word.startswith("-"))
    return _key(verb, build_parser(only=verb).parse_args(argv))


@pytest.mark.parametrize("argv", SAME_AS_FULL, ids=" ".join)
def test_the_entry_reads_a_command_line_as_the_full_parser_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from patchkit.__main__ import warm_request
    from patchkit.ops import warm

    monkeypatch.chdir(tmp_path)  # (the default project)
    request = warm_request(argv)
    assert request is not None
    assert warm.request_key(*request) == _full_key(argv)


@pytest.mark.parametrize("argv", LEFT_TO_FULL, ids=" ".join)
def test_any_other_command_line_is_left_to_the_full_parser(argv: list[str]) -> None:
    from patchkit.__main__ import warm_request

    assert warm_request(argv) is None


def test_a_change_of_patchkit_code_takes_the_full_path(tmp_path: Path) -> None:
    """A copy of patchkit is recorded from; one of its modules changes (as an upgrade or an
    edit does): the next run takes the full path."""
    import patchkit

    copy = tmp_path / "site"
    shutil.copytree(Path(patchkit.__file__).parent, copy / "patchkit")
    s = scenario(tmp_path / "s")

    def from_copy(*args: str) -> Run:
        return run(s, tmp_path, *args, cwd=tmp_path, PYTHONPATH=str(copy))

    time.sleep(SETTLE)
    full = from_copy("apply")
    assert not full.warm and full.origin.startswith(str(copy)), full.stderr
    assert from_copy("reset").code == 0
    assert from_copy("apply").warm
    assert from_copy("reset").code == 0
    _append(copy / "patchkit" / "engine" / "series.py", "\n# changed\n")
    changed = from_copy("apply")
    assert changed.code == 0 and not changed.warm, changed.stderr


def library_probe(site: Path) -> str:
    """The probe with one more parser library for the engine (as ``LIBRARIES`` names them),
    installed in ``site``: the records it makes stand on that library too."""
    return PROBE.replace(
        "import json, sys\n",
        f"import json, sys\nsys.path.insert(0, {str(site)!r})\n"
        "import patchkit.engine.fingerprint as f\n"
        "f.LIBRARIES = (*f.LIBRARIES, ('fake-grammar', 'fake_grammar'))\n",
    )


def test_a_new_version_of_a_parser_library_takes_the_full_path(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "fake_grammar").mkdir(parents=True)
    (site / "fake_grammar" / "__init__.py").write_text("")
    info = site / "fake_grammar-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: fake-grammar\nVersion: 1.0\n")
    s = scenario(tmp_path / "s")
    probe = library_probe(site)
    time.sleep(SETTLE)
    assert not run(s, tmp_path, "apply", probe=probe).warm
    assert run(s, tmp_path, "reset").code == 0
    assert run(s, tmp_path, "apply", probe=probe).warm
    assert run(s, tmp_path, "reset").code == 0
    info.rename(site / "fake_grammar-1.1.dist-info")  # what an upgrade leaves
    upgraded = run(s, tmp_path, "apply", probe=probe)
    assert upgraded.code == 0 and not upgraded.warm, upgraded.stderr


def test_cache_prune_removes_the_recorded_runs_that_can_never_replay(
    recorded: tuple[Scenario, Run], tmp_path: Path
) -> None:
    from patchkit import cacheroot
    from patchkit.cache import Cache
    from patchkit.ops.cache import prune
    from patchkit.workspace import replay

    s, _ = recorded
    cache = Cache.current()
    warm, key = cache.dir("warm"), cacheroot.sealing_key(cache.root)
    (kept,) = warm.iterdir()  # the apply's record: its tree and project are there
    record = replay.read_record(key, str(kept))
    assert record is not None
    record.root = str(tmp_path / "gone")
    replay.store(str(warm), key, "a" * 32, record)  # its tree is gone
    record.root, record.project = str(s.root), str(tmp_path / "gone")
    replay.store(str(warm), key, "b" * 32, record)  # its project is gone
    (warm / ("c" * 32)).write_bytes(b"0" * 64 + b"\nrecord")  # not sealed here
    (warm / f"{'d' * 32}.123.tmp").write_bytes(b"")  # a write cut short
    removed = [line for line in prune().removed if str(warm) in line]
    assert sorted(p.name for p in warm.iterdir()) == [kept.name]
    assert len(removed) == 4, removed
    assert run(s, tmp_path, "apply").warm  # the record kept still replays


# -- the replayed writes keep the journal's and the lock's promises ----------------------------
# The replay alone, with no full path after it: whether it replayed.
REPLAY_ONLY = """\
import json, sys
from patchkit.__main__ import warm_request
from patchkit.ops import warm
done = warm.replay_request(*warm_request(sys.argv[2:]))
with open(sys.argv[1], "w") as f:
    json.dump({"code": int(done is None), "modules": [], "from": ""}, f)
"""


def test_a_replay_cut_short_is_rolled_back_by_the_next_command(
    recorded: tuple[Scenario, Run], tmp_path: Path
) -> None:
    """The replay stops after its journal and the files (the state file's temporary name is
    taken by a directory): the next writer rolls the write back first, as after any
    interrupted write, and no file is left half-way."""
    s, _ = recorded
    state = s.tree().state_dir
    blocker = state / "state.tmp"
    (blocker / "x").mkdir(parents=True)
    assert run(s, tmp_path, "apply", probe=REPLAY_ONLY).code == 1  # cut short
    assert (state / "journal.json").exists() and s.read("a.txt") == b"A\n"
    again = run(s, tmp_path, "apply")  # the full path: it rolls back, then stops at the same
    assert not again.warm and again.code != 0
    assert s.read("a.txt") == b"a\n" and s.read("pkg/limits.py") == b"LIMIT = 1\n"
    assert not (state / "journal.json").exists() and not (state / "state.json").exists()
    shutil.rmtree(blocker)
    assert run(s, tmp_path, "apply").warm  # the record still holds
    assert s.read("a.txt") == b"A\n" and s.read("pkg/limits.py") == b"LIMIT = 2\n"


def test_a_directory_a_link_stands_for_is_never_written_through(
    recorded: tuple[Scenario, Run], tmp_path: Path
) -> None:
    s, _ = recorded
    outside = tmp_path / "outside"
    shutil.move(s.root / "pkg", outside)
    (s.root / "pkg").symlink_to(outside)  # the same bytes, read through a link
    again = run(s, tmp_path, "apply")
    assert not again.warm and again.code != 0
    assert (outside / "limits.py").read_text() == "LIMIT = 1\n"


def test_a_busy_tree_is_never_replayed_into(recorded: tuple[Scenario, Run], tmp_path: Path) -> None:
    from patchkit.workspace.locks import writing

    s, _ = recorded
    with writing(s.tree(), "reset"):  # another process's write, as the lock says
        again = run(s, tmp_path, "apply", PATCHKIT_LOCK_TIMEOUT="0.2")
    assert not again.warm and again.code == 9, again.stderr  # the full path waited, refused
    assert s.read("a.txt") == b"a\n"


def test_apply_over_its_own_result_replays_until_a_file_it_read_changes(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    assert run(s, tmp_path, "apply").code == 0
    time.sleep(SETTLE)  # the files apply wrote settle
    full = run(s, tmp_path, "apply")  # nothing to write: recorded as such
    warm = run(s, tmp_path, "apply")
    assert full.code == warm.code == 0 and not full.warm and warm.warm, warm.stderr
    assert warm.stdout == full.stdout and warm.stderr == full.stderr
    (s.root / "a.txt").write_text("edited\n")
    changed = run(s, tmp_path, "apply")
    assert not changed.warm and changed.code == 4  # the full path: a patched file was edited
    assert s.read("a.txt") == b"edited\n"


def test_a_record_asks_once_per_file_system_whether_its_lstat_is_fresh(tmp_path: Path) -> None:
    """(Reading the mount table for each of a thousand inputs took seconds.)"""
    from patchkit.workspace import replay

    paths = [tmp_path / f"f{i}" for i in range(50)]
    for path in paths:
        path.write_text(path.name)
    asked: list[str] = []
    later = time.time_ns() + 2 * replay.SETTLED_NS  # every file settled by then
    inputs = replay.snapshot(map(str, paths), later, {}, lambda p: not asked.append(p))
    assert inputs is not None and len(asked) == 1
    assert all(inputs[3 :: replay.INPUT]), "each fingerprint is trusted"
