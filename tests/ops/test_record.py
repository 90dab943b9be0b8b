"""record: edits in a checkout become a patch; refresh rewrites a patch only when it changed."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomlkit

from patchkit.cli import main
from patchkit.errors import ConfigError, TreeError
from patchkit.model import PatchMeta
from patchkit.ops.record import RecordReport, record
from testing.builders import Scenario

FILES = {"a.txt": "a one\na two\na three\n", "b.txt": "b one\nb two\nb three\n"}
A_PATCHED = "a one\na TWO\na three\n"


def record_in(
    s: Scenario, patch_id: str, series: list[PatchMeta] | None = None, **kw: str
) -> RecordReport:
    blobs = s.blobs()
    try:
        return record(
            tree=s.tree(),
            patch_set=s.patch_set(),
            series=s.patches() if series is None else series,
            patch_id=patch_id,
            blobs=blobs,
            **kw,
        )
    finally:
        blobs.close()


def applied_p1(tmp_path: Path) -> tuple[Scenario, Path]:
    s = Scenario(tmp_path, FILES)
    patch = s.add("p1", {"a.txt": A_PATCHED})
    s.apply()
    return s, patch


A_FIXED = "a one\na TWO\na three, fixed\n"


def test_edits_become_a_new_patch_appended_to_the_series(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    manifest = s.set_root / "patchset.toml"
    manifest.write_text("# the demo set: keep this comment\n" + manifest.read_text())
    (s.root / "a.txt").write_text(A_FIXED)
    report = record_in(s, "p2", title="Fix a", why="a was wrong", author="me")
    assert report.changed and report.files == ("a.txt",)
    patch = s.set_root / "patches" / "p2.patch"
    assert report.patch_file == patch
    assert "-a three\n+a three, fixed\n" in patch.read_text()
    meta = tomlkit.parse((s.set_root / "patches" / "p2.toml").read_text())
    assert (meta["id"], meta["title"], meta["why"], meta["target"]) == (
        "p2",
        "Fix a",
        "a was wrong",
        "demo",
    )
    assert manifest.read_text().startswith("# the demo set: keep this comment\n")
    assert [p.id for p in s.patches()] == ["p1", "p2"]
    assert s.status() == {"p1": "applied", "p2": "applied"}


def test_edits_to_a_file_no_patch_touches_become_a_new_patch(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    (s.root / "b.txt").write_text("b one\nb fixed\nb three\n")
    record_in(s, "p2", title="Fix b", why="b was wrong")
    diff = (s.set_root / "patches" / "p2.patch").read_text()
    assert "-b two\n+b fixed\n" in diff and "a.txt" not in diff
    assert s.status() == {"p1": "applied", "p2": "applied"}


def test_recorded_patch_is_reapplied_as_a_noop_and_reset_undoes_it(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    (s.root / "a.txt").write_text(A_FIXED)
    record_in(s, "p2", title="Fix a", why="a was wrong")
    assert s.apply().noop
    s.reset()
    assert s.read("a.txt") == FILES["a.txt"].encode()
    assert [r.outcome.value for r in s.apply().results] == ["applied", "applied"]
    assert s.read("a.txt") == A_FIXED.encode()


def test_new_patch_needs_a_title_and_why(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    (s.root / "b.txt").write_text("changed\n")
    with pytest.raises(ConfigError, match="--title and --why"):
        record_in(s, "p2")
    assert not (s.set_root / "patches" / "p2.patch").exists()


def test_recording_without_edits_is_refused_with_what_to_do(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    with pytest.raises(TreeError, match="no edits to record") as info:
        record_in(s, "p2", title="t", why="w")
    assert info.value.hint and "edit the files" in info.value.hint


def test_refreshing_an_unchanged_patch_writes_nothing(tmp_path: Path) -> None:
    s, patch = applied_p1(tmp_path)
    before, stamp = patch.read_bytes(), patch.stat().st_mtime_ns
    report = record_in(s, "p1")
    assert not report.changed
    assert patch.read_bytes() == before
    assert patch.stat().st_mtime_ns == stamp


def test_refreshing_a_just_recorded_patch_writes_nothing(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    (s.root / "a.txt").write_text(A_FIXED)
    patch = record_in(s, "p2", title="Fix a", why="a was wrong").patch_file
    before, stamp = patch.read_bytes(), patch.stat().st_mtime_ns
    assert not record_in(s, "p2").changed
    assert (patch.read_bytes(), patch.stat().st_mtime_ns) == (before, stamp)


def test_refresh_after_a_manual_edit_updates_the_diff(tmp_path: Path) -> None:
    s, patch = applied_p1(tmp_path)
    fixed = "a one\na TWO\na three, fixed by hand\n"
    (s.root / "a.txt").write_text(fixed)
    assert s.status() == {"p1": "modified since apply"}
    report = record_in(s, "p1")
    assert report.changed
    assert "+a three, fixed by hand\n" in patch.read_text()
    assert s.status() == {"p1": "applied"}
    s.reset()
    assert s.read("a.txt") == FILES["a.txt"].encode()
    s.apply()
    assert s.read("a.txt") == fixed.encode()


def test_refreshing_a_rewrite_is_refused(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    rewrite = s.project.add_rewrite("rw", "# a rewrite module\n")
    with pytest.raises(ConfigError, match="is a rewrite") as info:
        record_in(s, "rw")
    assert str(rewrite.resolve()) in info.value.message
    assert rewrite.read_text() == "# a rewrite module\n"


def test_invalid_patch_id_is_refused(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    with pytest.raises(ConfigError, match="not a valid patch id"):
        record_in(s, "Bad Id", title="t", why="w")


# -- ids already taken, and trees without the series -------------------------------------------
def with_opt_in(tmp_path: Path, extra_meta: str) -> tuple[Scenario, dict[Path, bytes]]:
    """p1 applied; ``extra`` (on b.txt) in the set but not selected; b.txt edited."""
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": A_PATCHED})
    s.add("extra", {"b.txt": "b one\nb EXTRA\nb three\n"})
    meta = s.set_root / "patches" / "extra.toml"
    meta.write_text(meta.read_text() + extra_meta)
    cli(s, "apply")
    (s.root / "b.txt").write_text("b one\nb mine\nb three\n")
    files = s.set_root.rglob("*")
    return s, {f: f.read_bytes() for f in files if f.is_file()}


def cli(s: Scenario, *args: str) -> int:
    where = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    return main([args[0], *where, *args[1:]])


def unchanged(before: dict[Path, bytes]) -> bool:
    return all(f.read_bytes() == content for f, content in before.items())


@pytest.mark.parametrize("extra_meta", ["optional = true\n", 'status = "merged"\n'])
def test_new_patch_with_the_id_of_an_unselected_patch_is_refused(
    tmp_path: Path, extra_meta: str, capsys: pytest.CaptureFixture[str]
) -> None:
    s, before = with_opt_in(tmp_path, extra_meta)
    code = cli(s, "record", "--patch", "extra", "--title", "t", "--why", "w")
    assert code == ConfigError.exit_code
    assert "extra is already a patch" in capsys.readouterr().err
    assert unchanged(before) and len(before) == 5  # manifest, two patches, two metas


def test_the_api_refuses_an_id_taken_in_the_set_but_not_in_the_series(tmp_path: Path) -> None:
    s, before = with_opt_in(tmp_path, "optional = true\n")
    series = [p for p in s.patches() if p.id == "p1"]
    with pytest.raises(ConfigError, match="already a patch") as info:
        record_in(s, "extra", series=series, title="t", why="w")
    assert info.value.hint and "--include extra" in info.value.hint
    assert unchanged(before)


def test_an_included_opt_in_patch_is_refreshed(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("extra", {"b.txt": "b one\nb EXTRA\nb three\n"})
    meta = s.set_root / "patches" / "extra.toml"
    meta.write_text(meta.read_text() + "optional = true\n")
    assert cli(s, "apply", "--include", "extra") == 0
    (s.root / "b.txt").write_text("b one\nb EXTRA, fixed\nb three\n")
    assert cli(s, "record", "--include", "extra", "--patch", "extra") == 0
    assert "+b EXTRA, fixed\n" in (s.set_root / "patches" / "extra.patch").read_text()
    assert "optional = true" in meta.read_text()


def test_recording_on_a_tree_without_the_series_applied_is_refused(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": A_PATCHED})
    (s.root / "a.txt").write_text("a one\na two\na THREE\n")
    before = {f: f.read_bytes() for f in s.set_root.rglob("*") if f.is_file()}
    with pytest.raises(TreeError, match="does not have the series") as info:
        record_in(s, "p2", title="t", why="w")
    assert info.value.hint and "patchkit apply --target demo" in info.value.hint
    assert unchanged(before) and not (s.set_root / "patches" / "p2.patch").exists()
    assert not (s.root / ".git" / "patchkit" / "state.json").exists()


def test_new_patch_never_overwrites_files_left_in_the_patches_directory(tmp_path: Path) -> None:
    s, _ = applied_p1(tmp_path)
    stray = s.set_root / "patches" / "p2.patch"
    stray.write_text("a draft someone keeps here\n")
    (s.set_root / "patches" / "p3.1.patch").write_text("another id's file: not in the way\n")
    (s.root / "b.txt").write_text("b one\nb fixed\nb three\n")
    with pytest.raises(ConfigError, match="would overwrite"):
        record_in(s, "p2", title="t", why="w")
    assert stray.read_text() == "a draft someone keeps here\n"
    assert record_in(s, "p3", title="t", why="w").changed
