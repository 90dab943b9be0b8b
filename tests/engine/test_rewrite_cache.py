"""A poisoned rewrite result in the cache is never written into a tree: an output that is not
the one its entry names, an entry not sealed by this cache, or one filed under another input,
is recomputed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import patchkit.engine.rewrite.run
from patchkit.cli import main
from patchkit.engine.rewrite.run import run_rewrite_patch
from patchkit.outcome import Outcome
from testing.builders import Scenario

MODULE = """\
import libcst as cst
from patchkit.engine.rewrite import Rewrite


class Bump(Rewrite):
    path = "a.py"
    anchors = {"f": 1}

    def leave_Integer(self, original_node, updated_node):
        if not self.in_anchor or updated_node.value not in ("1", "2"):
            return updated_node
        if updated_node.value == "2":
            return self.present(updated_node)
        return self.changed(updated_node.with_changes(value="2"))
"""
BASE = "def f():\n    return 1\n"
GOOD = b"def f():\n    return 2\n"
EVIL = b"import os\nos.system('echo owned')\ndef f():\n    return 2\n"


def _rewrites() -> Path:
    return Path(os.environ["PATCHKIT_CACHE"]) / "rewrites"


def _poison_outputs() -> int:
    outs = list(_rewrites().glob("*.out"))
    for out in outs:
        out.write_bytes(EVIL)
    return len(outs)


def _forge_entries() -> int:
    """Rewrite every result entry as an attacker would who cannot read the cache's key: the
    output's digest made to match the poisoned output, the seal line kept."""
    import hashlib

    forged = 0
    for entry in _rewrites().glob("*.json"):
        head, _, payload = entry.read_bytes().partition(b"\n")
        try:
            meta = json.loads(payload if head.startswith(b"patchkit-sealed") else head + payload)
        except ValueError:
            continue
        if not isinstance(meta, dict) or "tallies" not in meta:
            continue
        meta["output"] = hashlib.sha256(EVIL).hexdigest()
        entry.write_bytes(head + b"\n" + json.dumps(meta).encode())
        forged += 1
    return forged


@pytest.mark.parametrize("poison", ["output", "output and entry"])
def test_a_poisoned_result_is_recomputed_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, poison: str
) -> None:
    module = tmp_path / "bump.py"
    module.write_text(MODULE)
    files = {"a.py": BASE}

    def read(path: str) -> bytes | None:
        return files[path].encode() if path in files else None

    cold = run_rewrite_patch("bump", module, read)
    assert cold.outcome is Outcome.APPLIED and cold.changes[0].content == GOOD
    assert _poison_outputs() == 1
    if poison == "output and entry":
        assert _forge_entries() == 1
    runs = []
    real = patchkit.engine.rewrite.run._run_job
    monkeypatch.setattr(
        patchkit.engine.rewrite.run, "_run_job", lambda job: runs.append(job) or real(job)
    )
    again = run_rewrite_patch("bump", module, read)
    assert again.outcome is Outcome.APPLIED and again.changes[0].content == GOOD
    assert runs, "the poisoned result was taken from the cache"


def test_apply_never_writes_a_poisoned_result_into_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path, {"a.py": BASE})
    s.project.add_rewrite("rw", MODULE)
    args = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    assert main(["apply", *args]) == 0
    assert (s.root / "a.py").read_bytes() == GOOD
    assert main(["reset", *args]) == 0
    assert _poison_outputs() == 1
    assert main(["apply", *args]) == 0
    assert (s.root / "a.py").read_bytes() == GOOD  # recomputed, not the planted output
    capsys.readouterr()
