"""Bases among releases of a package index: fetched only when no local release holds the base,
at most ``max_fetch`` of them, and reported. On the fake index of fake-vllm 0.1.0 ... 0.3.0."""

from __future__ import annotations

from pathlib import Path

from patchkit.importers.releases import from_index
from patchkit.ops.import_ import ImportReport, import_patches
from patchkit.project.load import load_project
from patchkit.project.sets import read_toml
from patchkit.upstream.index import IndexConfig, PackageIndex
from testing.fake_index import PROJECT, FakeIndex
from testing.fake_index import fake_index as fake_index  # the fixture

LOCK = f"""\
[targets.vllm]
repository = "https://example.com/vllm"
version = "0.1.0"
commit = "1111111aaaaaaa"
source = {{ kind = "index", package = "{PROJECT}" }}
"""
# made on the 0.2.0 release (no index lines: a site-packages diff from a container)
DIFF = """\
--- a/usr/local/lib/python3.12/dist-packages/vllm/core.py
+++ b/usr/local/lib/python3.12/dist-packages/vllm/core.py
@@ -1 +1 @@
-VERSION = '0.2.0'
+VERSION = '0.2.0'  # patched
"""


def _import(
    fake: FakeIndex, tmp_path: Path, max_fetch: int, base: str | None = None
) -> ImportReport:
    project_dir = tmp_path / "project"
    (project_dir / "patchsets").mkdir(parents=True, exist_ok=True)
    (project_dir / "upstream.lock").write_text(LOCK)
    (tmp_path / "core.patch").write_text(DIFF)
    project = load_project(project_dir)
    index = PackageIndex(IndexConfig(fake.url, "test"))
    releases = from_index(project.entry("vllm"), index)
    try:
        return import_patches(
            project=project,
            target="vllm",
            sources=[str(tmp_path / "core.patch")],
            into="fetched",
            max_fetch=max_fetch,
            base=base,
            releases=releases,
        )
    finally:
        releases.repo.close()


def test_base_fetched_within_budget_and_conflict_kept_pending(
    fake_index: FakeIndex, tmp_path: Path
) -> None:
    report = _import(fake_index, tmp_path, max_fetch=1)
    [patch] = report.patches
    assert report.fetched == ("0.2.0",)  # the nearest release the cache lacked, and no more
    assert patch.base == "0.2.0"
    assert patch.base_how == "applies exactly at 0.2.0; tried 0.1.0, 0.2.0; fetched 0.2.0"
    assert patch.outcome == "conflict"  # 0.1.0 has another VERSION line: a person decides
    meta = read_toml(tmp_path / "project/patchsets/fetched/patches/core.toml")
    assert meta["history"]["pending"].startswith("conflict at 0.1.0 on import")
    written = (tmp_path / "project/patchsets/fetched/patches/core.patch").read_text()
    assert "+VERSION = '0.2.0'  # patched" in written and "index " in written  # at its base
    assert sum("/files/" in r for r in fake_index.requests) == 2  # 0.1.0 (the lock), 0.2.0


def test_no_budget_no_fetch_and_the_report_says_so(fake_index: FakeIndex, tmp_path: Path) -> None:
    report = _import(fake_index, tmp_path, max_fetch=0)
    [patch] = report.patches
    assert report.fetched == ()
    assert patch.base is None and patch.base_how == "not found: applies exactly at none of 0.1.0"
    assert patch.outcome == "conflict" and not patch.written


def test_base_given_by_version_is_fetched_then_named_by_upstream_commit(
    fake_index: FakeIndex, tmp_path: Path
) -> None:
    [patch] = _import(fake_index, tmp_path / "one", max_fetch=0, base="0.2.0").patches
    assert (patch.base, patch.base_how) == ("0.2.0", "given (--base 0.2.0)")
    # 0.2.0 is in the cache now: its upstream commit id (a prefix, as the lock shows it) names it
    [again] = _import(fake_index, tmp_path / "two", max_fetch=0, base="2222222").patches
    assert (again.base, again.base_how) == ("0.2.0", "given (--base 2222222)")
