"""Patching installed distributions in real virtual environments: a small fake vLLM wheel built
here (fast), and FlashInfer 0.6.6's real wheel (``network``; cached in the user's cache)."""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from patchkit.engine.series import Blobs, touched_paths
from patchkit.errors import TreeError
from patchkit.gitrepo import blob_id
from patchkit.model import LockEntry, PatchMeta
from patchkit.ops.apply import split_applicable
from patchkit.ops.apply_tree import ApplyFailed, apply
from patchkit.ops.status import PatchState, status
from patchkit.ops.verify import verify, verify_applied
from patchkit.project.load import load_project
from patchkit.verification.env import LocalRunner
from patchkit.workspace.installed import (
    InstalledError,
    InstalledTree,
    invalidate_pycache,
    modified_files,
    open_installed,
    outside_changes,
    record_digest,
)
from patchkit.workspace.reset import reset
from patchkit.workspace.treecheck import tree_commit
from testing.builders import Project, Upstream

# Read before the hermetic fixture moves HOME, so repeated runs reuse one download.
WHEELS = Path(platformdirs.user_cache_dir("patchkit")) / "wheels"
REPO = Path(__file__).resolve().parents[2]
FI_PATCH = REPO / "patchsets/flashinfer-spark/patches/decode-gqa-group-size-16.patch"
FI_HEADER = "flashinfer/data/include/flashinfer/utils.cuh"

MAMBA = "vllm/model_executor/layers/mamba/mamba_utils.py"
VLLM_FILES: dict[str, str | bytes] = {
    # Importing the package fails under FORBID: patchkit reads metadata only, never imports it.
    "vllm/__init__.py": "import os\nif os.environ.get('FORBID'):\n    raise ImportError('imported')\n",
    "vllm/_version.py": "__version__ = version = '0.19.0'\n__commit_id__ = commit_id = 'g2a69949bd'\n",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/mamba/__init__.py": "",
    MAMBA: "def block_size(n):\n    return n * 16\n" + "\n" * 6 + "TAIL = 1\n",
}
SOURCE_ONLY: dict[str, str | bytes] = {
    "csrc/mamba/ssu.cu": "// kernel\nint x = 1;\n",
    "CMakeLists.txt": "project(vllm)\n",
}


# --- builders ------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(dest: Path, name: str, version: str, files: dict[str, str | bytes]) -> Path:
    """A pure-Python wheel holding ``files``, with a RECORD of their hashes."""
    info = f"{name}-{version}.dist-info"
    payload = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    payload[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    payload[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: patchkit-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = "".join(f"{p},sha256={_b64(c)},{len(c)}\n" for p, c in payload.items())
    payload[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, content in payload.items():
            zf.writestr(path, content)
    return wheel


def make_venv(path: Path, wheel: Path, *, system: bool = False) -> Path:
    """A fresh virtual environment with ``wheel`` installed; returns its interpreter. With
    ``system`` it also sees this interpreter's packages (pytest, for verify)."""
    flags = ["--system-site-packages"] if system else []
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", *flags, str(path)], check=True)
    python = path / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run([*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    return python


def site_packages(python: Path) -> Path:
    return next((python.parent.parent / "lib").glob("python3*/site-packages"))


# --- fake vLLM ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_venv_pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("vllm-dist")
    wheel = build_wheel(base, "vllm", "0.19.0", VLLM_FILES)
    return make_venv(base / "venv", wheel, system=True)


def copy_venv(pristine: Path, dest: Path) -> Path:
    shutil.copytree(pristine.parent.parent, dest, symlinks=True)
    return dest / "bin" / "python"


@pytest.fixture
def vllm_python(vllm_venv_pristine: Path, tmp_path: Path) -> Path:
    return copy_venv(vllm_venv_pristine, tmp_path / "venv")


@pytest.fixture
def vllm_project(tmp_path: Path) -> Project:
    upstream = Upstream(tmp_path / "upstream")
    upstream.commit({**VLLM_FILES, **SOURCE_ONLY})
    project = Project(tmp_path / "project", upstream, "2a69949bd", target="vllm")
    fixed = str(VLLM_FILES[MAMBA]).replace("n * 16", "max(n, 1) * 16")
    project.add_diff("fix-block-size", upstream.diff_of({MAMBA: fixed}))
    return project


def _load(project: Project, target: str) -> tuple[LockEntry, list[PatchMeta]]:
    loaded = load_project(project.path)
    return loaded.entry(target), loaded.patches(target)


def _apply(tree: InstalledTree, entry: LockEntry, patches: list[PatchMeta], **kw: bool) -> None:
    apply(tree=tree, entry=entry, patches=patches, blobs=Blobs([]), **kw)


def _tree(entry: LockEntry, python: Path) -> InstalledTree:
    tree = open_installed(entry, python)
    assert isinstance(tree, InstalledTree)
    return tree


def test_open_installed_reads_metadata_without_importing(
    vllm_python: Path, vllm_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORBID", "1")
    entry, _ = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    site = site_packages(vllm_python).resolve()
    assert (tree.kind, tree.root, tree.target) == ("installed", site, "vllm")
    assert tree.state_dir == site / ".patchkit" / "vllm"
    assert tree.dist is not None and tree.dist.version == "0.19.0"
    assert tree_commit(tree) == "2a69949bd"


def test_tree_holds_only_what_the_distribution_installs(
    vllm_python: Path, vllm_project: Project
) -> None:
    entry, _ = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    assert tree.holds(MAMBA)
    assert tree.holds("vllm/model_executor/layers/mamba/new_helper.py")  # new file, held dir
    for path in ("csrc/mamba/ssu.cu", "CMakeLists.txt", "vllm/nowhere/x.py", "setup.py"):
        assert not tree.holds(path), path


def test_split_applicable_names_the_missing_paths(vllm_python: Path, vllm_project: Project) -> None:
    up = vllm_project.upstream
    vllm_project.add_diff("kernel", up.diff_of({"csrc/mamba/ssu.cu": "// kernel\nint x = 2;\n"}))
    vllm_project.add_diff(
        "mixed", up.diff_of({MAMBA: "def block_size(n):\n    return 0\n", "CMakeLists.txt": "x\n"})
    )
    entry, patches = _load(vllm_project, "vllm")
    applicable, skipped = split_applicable(_tree(entry, vllm_python), patches)
    assert [p.id for p in applicable] == ["fix-block-size"]
    assert [(s.patch_id, s.paths) for s in skipped] == [
        ("kernel", ("csrc/mamba/ssu.cu",)),
        ("mixed", ("CMakeLists.txt",)),
    ]
    assert "CMakeLists.txt" in skipped[1].reason and "does not contain" in skipped[1].reason


def test_apply_status_reset_round_trip(vllm_python: Path, vllm_project: Project) -> None:
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    target = site_packages(vllm_python) / MAMBA
    original = target.read_bytes()
    _apply(tree, entry, patches)
    assert b"max(n, 1)" in target.read_bytes()
    assert [p.state for p in status(tree=tree, patches=patches).patches] == [PatchState.APPLIED]
    _apply(tree, entry, patches)  # idempotent
    reset(tree=tree)
    assert target.read_bytes() == original
    assert modified_files(tree, None) == []  # every file as RECORD has it again
    assert not (tree.state_dir / "state.json").exists()
    assert status(tree=tree, patches=patches).patches[0].state is PatchState.NOT_APPLIED


def test_verify_runs_the_set_tests_against_the_installed_package(
    vllm_python: Path, vllm_project: Project
) -> None:
    set_root = vllm_project.path / "patchsets" / "demo"
    (set_root / "tests").mkdir()
    (set_root / "tests" / "test_block_size.py").write_text(
        "from vllm.model_executor.layers.mamba.mamba_utils import block_size\n\n\n"
        "def test_zero_blocks_still_get_one():\n    assert block_size(0) == 16\n"
    )
    meta = set_root / "patches" / "fix-block-size.toml"
    meta.write_text(
        meta.read_text() + '\n[[tests]]\nwhere = "set"\nnode = "tests/test_block_size.py"\n'
    )
    loaded = load_project(vllm_project.path)
    entry, patches = loaded.entry("vllm"), loaded.patches("vllm")
    tree = _tree(entry, vllm_python)
    _apply(tree, entry, patches)
    report = verify_applied(
        tree=tree, lock=loaded.lock, patches=patches, python=str(vllm_python), record=False
    )
    assert [(v.patch_id, v.result.value) for v in report.verdicts] == [("fix-block-size", "passed")]
    reset(tree=tree)
    report = verify(
        tree_root=tree.root,
        patches=patches,
        lock=loaded.lock,
        runner=LocalRunner(),
        python=str(vllm_python),
        record=False,
    )
    assert report.verdicts[0].result.value == "failed"  # the test could fail: it proves the fix


def test_invalidate_pycache_removes_stale_bytecode(
    vllm_python: Path, vllm_project: Project
) -> None:
    entry, _ = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    cache = site_packages(vllm_python) / "vllm/model_executor/layers/mamba/__pycache__"
    assert list(cache.glob("mamba_utils.*.pyc")), "pip compiles bytecode at install"
    removed = invalidate_pycache(tree, [MAMBA, "csrc/mamba/ssu.cu"])
    assert removed and not list(cache.glob("mamba_utils.*.pyc"))
    assert list(cache.glob("__init__.*.pyc"))  # other modules keep theirs


def test_refuses_a_hand_modified_file_by_name(vllm_python: Path, vllm_project: Project) -> None:
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    target = site_packages(vllm_python) / MAMBA
    edited = target.read_text().replace("TAIL = 1", "TAIL = 2  # hand fix")
    target.write_text(edited)  # away from the hunk: only the RECORD check can catch it
    with pytest.raises(TreeError, match=re.escape(MAMBA)):
        _apply(tree, entry, patches)
    assert target.read_text() == edited
    assert not (tree.state_dir / "state.json").exists()


def test_hand_edit_inside_the_hunk_writes_nothing(vllm_python: Path, vllm_project: Project) -> None:
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    target = site_packages(vllm_python) / MAMBA
    edited = target.read_text().replace("n * 16", "n * 32")
    target.write_text(edited)
    with pytest.raises(TreeError, match=re.escape(MAMBA)):
        _apply(tree, entry, patches)
    with pytest.raises(ApplyFailed, match="fix-block-size"):
        _apply(tree, entry, patches, allow_dirty=True)  # on top of the edit: a conflict
    assert target.read_text() == edited


def test_allow_dirty_patches_on_top_and_reset_gives_the_edit_back(
    vllm_python: Path, vllm_project: Project
) -> None:
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    target = site_packages(vllm_python) / MAMBA
    edited = target.read_text().replace("TAIL = 1", "TAIL = 2")
    target.write_text(edited)
    _apply(tree, entry, patches, allow_dirty=True)
    assert "max(n, 1)" in target.read_text() and "TAIL = 2" in target.read_text()
    reset(tree=tree)
    assert target.read_text() == edited
    assert modified_files(tree, None) == [MAMBA]  # still the user's, as before apply


def test_modified_files_finds_edits_deletions_and_strays(
    vllm_python: Path, vllm_project: Project
) -> None:
    entry, _ = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    site = site_packages(vllm_python)
    (site / "vllm/model_executor/__init__.py").write_text("# edited\n")
    (site / "vllm/model_executor/layers/mamba/__init__.py").unlink()
    (site / "vllm/model_executor/layers/mamba/stray.py").write_text("x = 1\n")
    assert modified_files(tree, None) == [
        "vllm/model_executor/__init__.py",
        "vllm/model_executor/layers/mamba/__init__.py",
    ]
    stray = "vllm/model_executor/layers/mamba/stray.py"  # where a patch would create a file
    assert modified_files(tree, [MAMBA, stray]) == [stray]


def test_status_sees_changes_made_outside_patchkit(
    vllm_python: Path, vllm_project: Project
) -> None:
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    _apply(tree, entry, patches)
    assert outside_changes(tree) == []  # what patchkit wrote is not someone else's change
    (site_packages(vllm_python) / "vllm/_version.py").write_text("# pinned by hand\n")
    assert outside_changes(tree) == ["vllm/_version.py"]


def test_a_reinstall_leaves_no_stale_state(
    vllm_venv_pristine: Path, vllm_python: Path, vllm_project: Project
) -> None:
    entry, patches = _load(vllm_project, "vllm")
    _apply(_tree(entry, vllm_python), entry, patches)
    wheel = next(vllm_venv_pristine.parents[2].glob("*.whl"))
    pip = [sys.executable, "-m", "pip", "--python", str(vllm_python), "install", "-q"]
    subprocess.run([*pip, "--force-reinstall", "--no-deps", "--no-index", str(wheel)], check=True)
    tree = _tree(entry, vllm_python)  # finds every patched file back as RECORD has it
    assert status(tree=tree, patches=patches).patches[0].state is PatchState.NOT_APPLIED
    _apply(tree, entry, patches)
    assert status(tree=tree, patches=patches).patches[0].state is PatchState.APPLIED


def test_other_commit_is_refused_unless_allowed(vllm_python: Path, vllm_project: Project) -> None:
    lock = vllm_project.path / "upstream.lock"
    lock.write_text(lock.read_text().replace("2a69949bd", "0123456789"))
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    with pytest.raises(TreeError, match="2a69949bd"):
        _apply(tree, entry, patches)
    _apply(tree, entry, patches, allow_other_commit=True)
    assert status(tree=tree, patches=patches).patches[0].state is PatchState.APPLIED


def test_missing_distribution_says_what_to_do(vllm_project: Project, tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True
    )
    entry, _ = _load(vllm_project, "vllm")
    with pytest.raises(InstalledError, match="vllm is not installed") as info:
        open_installed(entry, tmp_path / "bare" / "bin" / "python")
    assert info.value.hint and "--python" in info.value.hint


def test_editable_install_is_refused(vllm_python: Path, vllm_project: Project) -> None:
    info = site_packages(vllm_python) / "vllm-0.19.0.dist-info" / "direct_url.json"
    info.write_text('{"url": "file:///src/vllm", "dir_info": {"editable": true}}')
    entry, _ = _load(vllm_project, "vllm")
    with pytest.raises(InstalledError, match="editable") as caught:
        open_installed(entry, vllm_python)
    assert caught.value.hint and "--checkout" in caught.value.hint


def test_state_of_another_release_is_refused_with_the_way_out(
    vllm_python: Path, vllm_project: Project
) -> None:
    entry, patches = _load(vllm_project, "vllm")
    tree = _tree(entry, vllm_python)
    _apply(tree, entry, patches)
    version = site_packages(vllm_python) / "vllm/_version.py"
    version.write_text(version.read_text().replace("2a69949bd", "fedcba987"))  # "upgraded"
    with pytest.raises(InstalledError, match="fedcba987") as caught:
        open_installed(entry, vllm_python)
    assert caught.value.hint and str(tree.state_dir) in caught.value.hint


def test_record_digest_is_pips() -> None:
    # pip's RECORD line for an empty file
    assert record_digest(b"") == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"


# --- real FlashInfer 0.6.6 --------------------------------------------------------------------


def cached_wheel(requirement: str, prefix: str) -> Path:
    """A release's wheel from the user's cache, downloaded there once."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    found = sorted(WHEELS.glob(f"{prefix}-*.whl"))
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(WHEELS)]
        subprocess.run([*cmd, requirement], check=True)
        found = sorted(WHEELS.glob(f"{prefix}-*.whl"))
    return found[0]


@pytest.fixture(scope="module")
def flashinfer_wheel() -> Path:
    return cached_wheel("flashinfer-python==0.6.6", "flashinfer_python-0.6.6")


@pytest.fixture(scope="module")
def fi_venv_pristine(flashinfer_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(tmp_path_factory.mktemp("fi") / "venv", flashinfer_wheel)


@pytest.fixture
def fi_python(fi_venv_pristine: Path, tmp_path: Path) -> Path:
    return copy_venv(fi_venv_pristine, tmp_path / "venv")


def _flashinfer() -> tuple[LockEntry, list[PatchMeta]]:
    loaded = load_project(REPO, ["flashinfer-spark"])
    return loaded.entry("flashinfer"), loaded.patches("flashinfer")


def _base_blob(patch: Path) -> str:
    index = next(ln for ln in patch.read_text().splitlines() if ln.startswith("index "))
    return index.split()[1].split("..")[0]


@pytest.mark.upstream
def test_flashinfer_wheel_ships_the_patched_header_as_released(fi_python: Path) -> None:
    header = site_packages(fi_python) / FI_HEADER
    assert blob_id(header.read_bytes()) == _base_blob(FI_PATCH)


@pytest.mark.upstream
def test_flashinfer_apply_status_reset(fi_python: Path) -> None:
    entry, patches = _flashinfer()
    tree = _tree(entry, fi_python)
    assert tree_commit(tree) == entry.commit
    assert split_applicable(tree, patches) == (patches, [])
    header = site_packages(fi_python) / FI_HEADER
    recorded = tree.dist.files[FI_HEADER].digest if tree.dist else None
    _apply(tree, entry, patches)
    assert b"group_size == 16" in header.read_bytes()
    assert status(tree=tree, patches=patches).patches[0].state is PatchState.APPLIED
    reset(tree=tree)
    assert record_digest(header.read_bytes()) == recorded
    assert modified_files(tree, None) == []


@pytest.mark.upstream
def test_flashinfer_refuses_hand_modified_header(fi_python: Path) -> None:
    entry, patches = _flashinfer()
    tree = _tree(entry, fi_python)
    header = site_packages(fi_python) / FI_HEADER
    header.write_bytes(header.read_bytes() + b"// local tweak\n")
    with pytest.raises(TreeError, match=re.escape("include/flashinfer/utils.cuh")):
        _apply(tree, entry, patches)
    assert header.read_bytes().endswith(b"// local tweak\n")


# --- real vLLM 0.19.0 (its 430 MB wheel, installed without dependencies: never imported) ------


@pytest.fixture(scope="module")
def real_vllm_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    wheel = cached_wheel("vllm==0.19.0", "vllm-0.19.0")
    base = tmp_path_factory.mktemp("vllm-real")
    yield make_venv(base / "venv", wheel)
    shutil.rmtree(base, ignore_errors=True)  # 1.2 GB installed


@pytest.mark.upstream
def test_real_vllm_wheel_takes_the_vllm_spark_set(real_vllm_python: Path) -> None:
    loaded = load_project(REPO, ["vllm-spark"])
    entry, patches = loaded.entry("vllm"), loaded.patches("vllm")
    tree = _tree(entry, real_vllm_python)
    assert tree_commit(tree) == entry.commit
    assert split_applicable(tree, patches) == (patches, [])
    touched = [path for meta in patches for path in touched_paths(meta)]

    def bytecode(paths: list[str]) -> list[Path]:
        return [
            pyc
            for path in paths
            for pyc in (tree.disk_path(path).parent / "__pycache__").glob(
                f"{Path(path).stem}.*.pyc"
            )
        ]

    assert bytecode(touched)  # pip compiled them at install
    report = apply(tree=tree, entry=entry, patches=patches, blobs=Blobs([]))
    assert {p.state for p in status(tree=tree, patches=patches).patches} == {PatchState.APPLIED}
    assert bytecode(list(report.written)) == []  # apply dropped the stale bytecode
    reset(tree=tree)
    assert modified_files(tree, None) == []
