"""On the real vLLM 0.19.0 release: a container mod made on the 0.20.0 wheel (``patch -p1 -d /``
with site-packages paths, no index lines) and a replace script made for 0.19.0 (an f-string
loop), both under ``examples/import/``, imported, carried to the lock, then applied."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.ops.import_ import import_patches
from patchkit.project.load import load_project
from patchkit.upstream.sources import ReleaseStore
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.upstream

EXAMPLES = PROJECT_ROOT / "examples" / "import"
MOD = EXAMPLES / "mods" / "gb10-custom-allreduce"
SCRIPT = EXAMPLES / "scripts" / "gb10_scheduler_defaults.py"
DYNAMIC = EXAMPLES / "scripts" / "dynamic_refused.py"
CUSTOM_AR = "vllm/distributed/device_communicators/custom_all_reduce.py"


def test_mod_and_script_imported_carried_and_applied_on_vllm_0_19_0(
    real_cache: Path, real_tree: Callable[[str], Path], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "patchsets").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "upstream.lock", project / "upstream.lock")
    with ReleaseStore("vllm", "vllm") as store:  # the releases the mod may have been made on
        for version in ("0.19.1", "0.20.0"):
            store.ensure_release(version)
    report = import_patches(
        project=load_project(project),
        target="vllm",
        sources=[str(MOD), str(SCRIPT), str(DYNAMIC)],
        into="spark",
        max_fetch=0,  # what else the cache holds is tried; nothing more is downloaded
    )
    mod, script, dynamic = report.patches
    for p in report.patches:
        print(f"{p.name}: {p.form}; base {p.base} ({p.base_how}); {p.outcome} at the lock")
        print(p.diff.decode() or p.message)
    assert (mod.form, mod.base, mod.outcome) == ("container-mod", "0.20.0", "carried")
    assert mod.base_how.startswith("applies exactly at 0.20.0; tried 0.19.0, ")
    assert report.fetched == ()
    assert mod.files == (CUSTOM_AR,)
    assert mod.untranslated == ()  # the pip install is the patch's requirement, not a step left
    mod_meta = (project / "patchsets" / "spark" / "patches" / f"{mod.name}.toml").read_text()
    assert 'Requires = "nvidia-nccl-cu12==2.27.7"' in mod_meta
    assert (script.form, script.base, script.outcome) == ("replace-script", "0.19.0", "applied")
    assert "+    DEFAULT_MAX_NUM_SEQS: ClassVar[int] = 64  # GB10: unified memory\n" in (
        script.diff.decode()
    )
    assert dynamic.refused and "glob.glob()" in dynamic.message

    tree = real_tree("vllm")  # the lock, applied to with the imported set
    code = main(["apply", "-t", "vllm", "--project", str(project), "--checkout", str(tree)])
    assert code == 0
    patched = (tree / CUSTOM_AR).read_text()
    assert "capability.major == 12" in patched
    assert "= 1024  # GB10" in (tree / "vllm/config/scheduler.py").read_text()


def test_script_as_a_rewrite_anchored_by_scope_on_vllm_0_19_0(
    real_cache: Path, real_tree: Callable[[str], Path], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "patchsets").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "upstream.lock", project / "upstream.lock")
    report = import_patches(
        project=load_project(project),
        target="vllm",
        sources=[str(SCRIPT)],
        into="spark",
        as_rewrite=True,
    )
    [script] = report.patches
    assert (script.kind, script.outcome) == ("rewrite", "applied"), script.message
    module = project / "patchsets" / "spark" / "patches" / "gb10-scheduler-defaults.py"
    print(module.read_text())
    assert "anchors = {'SchedulerConfig': 2}" in module.read_text()
    tree = real_tree("vllm")
    code = main(["apply", "-t", "vllm", "--project", str(project), "--checkout", str(tree)])
    assert code == 0
    assert "= 64  # GB10" in (tree / "vllm/config/scheduler.py").read_text()
