"""``export-pr`` onto a newer release of an index source (the default: the newest release the
cache holds): the cache's commits are stand-ins made from source releases, so what the texts
say of where upstream has a change, and of where the upstream test ran, names that release (its
label, with the commit its ``_version.py`` names), never the pinned release's commit. On the
fake index of fake-vllm 0.1.0 (the pin, commit 1111111aaaaaaa) and 0.2.0 (2222222bbbbbbb)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.ops.export_pr import export_pr
from patchkit.ops.fetch import fetch_target
from patchkit.project.load import load_project
from patchkit.upstream.index import IndexConfig, PackageIndex
from patchkit.upstream.repo import UpstreamRepo
from patchkit.upstream.sources import ReleaseStore
from testing.fake_index import COMMITS, PROJECT, FakeIndex
from testing.fake_index import fake_index as fake_index  # the fixture
from tests.export.test_export import ADA

LOCK = f"""\
[targets.vllm]
repository = "https://github.com/vllm-project/vllm"
version = "0.1.0"
commit = "{COMMITS["0.1.0"]}"
source = {{ kind = "index", package = "{PROJECT}" }}
"""
# 0.2.0 made this change itself: onto it, the patch changes nothing
BUMP = """\
--- a/vllm/core.py
+++ b/vllm/core.py
@@ -1 +1 @@
-VERSION = '0.1.0'
+VERSION = '0.2.0'
"""
README = """\
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-fake vllm
+fake vllm, fixed
"""
README_TEST = """\
--- /dev/null
+++ b/tests/test_readme.py
@@ -0,0 +1,5 @@
+from pathlib import Path
+
+
+def test_readme_says_fixed():
+    assert "fixed" in (Path(__file__).parents[1] / "README.md").read_text()
"""
OTHERS_PR = """
[upstream]
pr = "https://github.com/vllm-project/vllm/pull/7"
state = "open"
author = "someone"
ours = false
"""
README_META = """
[export.test]
file = "upstream-tests/readme.diff"
run = ["tests/test_readme.py"]
"""
LABEL = f"vLLM 0.2.0 (commit {COMMITS['0.2.0'][:12]}; the newest release fetched)"
PIN_COMMIT = COMMITS["0.1.0"][:7]


def _project(root: Path) -> Path:
    sets = root / "patchsets" / "demo"
    (sets / "patches").mkdir(parents=True)
    (sets / "upstream-tests").mkdir()
    (root / "upstream.lock").write_text(LOCK)
    (sets / "patchset.toml").write_text(
        '[patchset]\nname = "demo"\nversion = "1.0.0"\ndescription = "test set"\n'
        'targets = ["vllm"]\nseries = ["bump", "readme"]\n'
    )
    for patch_id, diff, title, extra in (
        ("bump", BUMP, "Bump the version", OTHERS_PR),
        ("readme", README, "Say fixed in the readme", README_META),
    ):
        (sets / "patches" / f"{patch_id}.patch").write_text(diff)
        (sets / "patches" / f"{patch_id}.toml").write_text(
            f'id = "{patch_id}"\ntarget = "vllm"\ntitle = "{title}"\nwhy = "a test says so"\n'
            + extra
        )
    (sets / "upstream-tests" / "readme.diff").write_text(README_TEST)
    return root


@pytest.fixture
def onto_newer(
    tmp_path: Path, fake_index: FakeIndex, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """The project, and the cache's tree at the pin with 0.2.0 fetched beside it (offline)."""
    monkeypatch.setenv("PATCHKIT_INDEX_URL", fake_index.url)
    project = load_project(_project(tmp_path / "project"))
    fetch_target(project=project, target="vllm")
    with ReleaseStore("vllm", PROJECT, index=PackageIndex(IndexConfig(fake_index.url, "t"))) as s:
        s.ensure_release("0.2.0")
    fake_index.stop()
    return project.root, UpstreamRepo.shared_path("vllm")


def test_a_note_and_comment_name_the_newer_release_never_the_pins_commit(
    onto_newer: tuple[Path, Path],
) -> None:
    root, tree = onto_newer
    report = export_pr(
        project=load_project(root), target="vllm", tree_root=tree, patch_ids=["bump"],
        identity=ADA,
    )  # fmt: skip
    (absorbed,) = report.absorbed
    assert f"upstream already has it at {LABEL}" in absorbed
    out_dir = Path(absorbed.rsplit(" in ", 1)[1].rstrip("/"))
    note, comment = ((out_dir / name).read_text() for name in ("NOTE.md", "COMMENT.md"))
    assert f"Upstream vLLM already has this change at {LABEL}: applied there" in note
    assert comment.startswith(f"Upstream vLLM already has this change at {LABEL}: applied")
    assert PIN_COMMIT not in note + comment


def test_the_runs_on_the_newer_release_never_name_the_pins_commit(
    onto_newer: tuple[Path, Path],
) -> None:
    root, tree = onto_newer
    report = export_pr(
        project=load_project(root), target="vllm", tree_root=tree, patch_ids=["readme"],
        identity=ADA,
    )  # fmt: skip
    (export,) = report.exports
    run = export.upstream_test
    assert run is not None and run.proven, run
    assert run.upstream == ""  # a stand-in: the label names the release
    said = next(p for p in export.text.body.split("\n\n") if p.startswith("The test this PR"))
    assert f"`tests/test_readme.py`): On {LABEL}, without this change it **failed**" in said
    assert PIN_COMMIT not in said


def test_a_note_and_a_branchs_texts_never_lie_side_by_side(onto_newer: tuple[Path, Path]) -> None:
    """Onto the pin the change makes a branch; onto 0.2.0 upstream has it. Each export leaves
    only what is true of itself in the patch's directory (the push record stays)."""
    root, tree = onto_newer
    kw = {"project": load_project(root), "target": "vllm", "tree_root": tree, "identity": ADA}
    (pinned,) = export_pr(patch_ids=["bump"], onto="pin", **kw).exports  # type: ignore[arg-type]
    out = pinned.out_dir
    export_pr(patch_ids=["bump"], **kw)  # type: ignore[arg-type]
    assert (out / "NOTE.md").is_file() and (out / "export.json").is_file()
    assert not any((out / f).exists() for f in ("PR_BODY.md", "COMMIT_MSG", "bump.patch"))
    export_pr(patch_ids=["bump"], onto="pin", **kw)  # type: ignore[arg-type]
    assert (out / "PR_BODY.md").is_file() and not (out / "NOTE.md").exists()
