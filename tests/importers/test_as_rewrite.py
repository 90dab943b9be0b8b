"""``import --as-rewrite``: a simple replace script written as a rewrite anchored by scope."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.series import Blobs, run_patch
from patchkit.outcome import Outcome
from patchkit.project.sets import load_patchset, read_toml
from tests.importers.conftest import Releases3

SCRIPT = """\
# Fields start at 0
P = "/usr/lib/python3/dist-packages/vllm/model.py"
code = open(P).read()
for name in ["a", "b"]:
    code = code.replace(f"        self.{name} = None\\n", f"        self.{name} = 0\\n")
open(P, "w").write(code)
"""


def _run(meta_file: Path, files: dict[str, bytes]) -> Outcome:
    patch = next(p for p in load_patchset(meta_file).patches)
    blobs = Blobs([])
    try:
        result = run_patch(patch, files.get, blobs)
    finally:
        blobs.close()
    for change in result.changes:
        assert change.content is not None
        files[change.path] = change.content
    return result.outcome


def test_script_becomes_a_rewrite_that_edits_only_its_anchor(
    releases3: Releases3, tmp_path: Path
) -> None:
    (tmp_path / "fields.py").write_text(SCRIPT)
    [patch] = releases3.import_(tmp_path / "fields.py", as_rewrite=True).patches
    assert (patch.kind, patch.outcome) == ("rewrite", "applied")
    root = releases3.set_dir()
    module = (root / "patches" / "fields.py").read_text()
    assert "anchors = {'Model.__init__': 2}" in module
    assert read_toml(root / "patches" / "fields.toml")["files"] == ["vllm/model.py"]

    lock = releases3.file_at("v1.2", "vllm/model.py")
    lookalike = "\n\nclass Other:\n    def __init__(self):\n        self.a = None\n"
    files = {"vllm/model.py": (lock + lookalike).encode()}
    assert _run(root, files) is Outcome.APPLIED
    text = files["vllm/model.py"].decode()
    assert text.count("self.a = 0") == 1 and text.endswith("        self.a = None\n")
    assert _run(root, files) is Outcome.UPSTREAMED  # a second run finds it there


def test_module_level_text_is_kept_as_a_diff_and_says_why(
    releases3: Releases3, tmp_path: Path
) -> None:
    script = tmp_path / "top.py"
    script.write_text(
        "P = '/site-packages/vllm/util.py'\n"
        "code = open(P).read()\n"
        "code = code.replace('x + 1\\n\\n\\ndef other', 'x + 2\\n\\n\\ndef other')\n"
        "open(P, 'w').write(code)\n"
    )
    [patch] = releases3.import_(script, as_rewrite=True).patches
    assert (patch.kind, patch.outcome) == ("diff", "applied")
    assert "at module level" in patch.message  # it spans two functions
    assert (releases3.set_dir() / "patches" / "top.patch").is_file()


def test_new_text_holding_the_old_is_not_offered(releases3: Releases3, tmp_path: Path) -> None:
    script = tmp_path / "grow.py"
    script.write_text(
        "P = '/site-packages/vllm/util.py'\n"
        "code = open(P).read()\n"
        "code = code.replace('def other(y):', 'def other(y):  # tripled')\n"
        "open(P, 'w').write(code)\n"
    )
    [patch] = releases3.import_(script, as_rewrite=True).patches
    assert patch.kind == "diff" and "contains the old" in patch.message
