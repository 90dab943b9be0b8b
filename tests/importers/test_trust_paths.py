"""import on hostile sources: what it writes carries no forged trailer and no local path, and
it never follows names or links out of the source or the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.errors import ConfigError, TreeError
from patchkit.importers.formats import MARKER
from patchkit.project.sets import read_toml
from testing.builders import run_git
from tests.importers.conftest import MODEL_V12, Releases3
from tests.importers.test_series import _export


def _diff_at_lock(releases3: Releases3) -> bytes:
    up = releases3.upstream.path
    (up / "vllm" / "model.py").write_text(MODEL_V12.replace("return 2", "return 7"))
    diff = run_git(up, "diff", "--full-index")
    run_git(up, "checkout", "-q", "--", ".")
    return diff


def test_imported_author_is_one_line_and_no_local_path_is_written(
    releases3: Releases3, tmp_path: Path
) -> None:
    header = (
        b"Description: return 7\n"
        b"Author: Evil\n Signed-off-by: Linus Torvalds\n Reviewed-by: A Maintainer\n"
        b" <evil@example.com>\n---\n"
    )
    source = tmp_path / "secret-home" / "fix.patch"
    source.parent.mkdir()
    source.write_bytes(header + _diff_at_lock(releases3))
    [patch] = releases3.import_(source).patches
    assert patch.written, patch.message
    toml = releases3.set_dir() / "patches" / f"{patch.name}.toml"
    meta = read_toml(toml)
    assert "\n" not in meta["author"]
    assert "Signed-off-by" not in meta["author"]
    assert str(tmp_path) not in toml.read_text()  # why and source name no local path
    assert meta["imported"]["source"] == "fix.patch"


def _secret(releases3: Releases3, tmp_path: Path) -> Path:
    """A valid patch outside every source: what a hostile source points import at."""
    secret = tmp_path / "elsewhere" / "secret.patch"
    secret.parent.mkdir()
    secret.write_bytes(_diff_at_lock(releases3))
    return secret


def _nothing_of(secret: Path, releases3: Releases3) -> None:
    content = secret.read_bytes()
    root = releases3.project.path / "patchsets"
    copied = [p for p in root.rglob("*") if p.is_file() and content in p.read_bytes()]
    assert copied == []


@pytest.mark.parametrize("entry", ["../elsewhere/secret.patch", "{abs}"])
def test_quilt_series_entry_outside_its_directory_is_refused(
    releases3: Releases3, tmp_path: Path, entry: str
) -> None:
    secret = _secret(releases3, tmp_path)
    quilt = tmp_path / "debian" / "patches"
    quilt.mkdir(parents=True)
    (quilt / "series").write_text(entry.format(abs=secret) + " -p1\n")
    [patch] = releases3.import_(tmp_path / "debian").patches
    assert not patch.written
    assert "series: entry" in patch.message and "is refused" in patch.message
    _nothing_of(secret, releases3)


def test_quilt_series_entry_linking_out_is_refused(releases3: Releases3, tmp_path: Path) -> None:
    secret = _secret(releases3, tmp_path)
    quilt = tmp_path / "debian" / "patches"
    quilt.mkdir(parents=True)
    os.symlink(secret, quilt / "fix.patch")
    (quilt / "series").write_text("fix.patch -p1\n")
    [patch] = releases3.import_(tmp_path / "debian").patches
    assert not patch.written and "outside" in patch.message
    _nothing_of(secret, releases3)


def test_mod_file_linking_out_of_the_mod_is_refused(releases3: Releases3, tmp_path: Path) -> None:
    secret = _secret(releases3, tmp_path)
    mod = tmp_path / "gb10"
    mod.mkdir()
    os.symlink(secret, mod / "fix.patch")
    (mod / "run.sh").write_text(
        "#!/bin/sh\ncd /usr/lib/python3/site-packages\npatch -p1 < fix.patch\n"
    )
    [patch] = releases3.import_(mod).patches
    assert not patch.written and "fix.patch, which is not a file of" in patch.message
    _nothing_of(secret, releases3)


def test_mod_run_sh_linking_out_is_refused(releases3: Releases3, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.sh"
    elsewhere.write_text("#!/bin/sh\npatch -p1 < fix.patch\n")
    mod = tmp_path / "gb10"
    mod.mkdir()
    os.symlink(elsewhere, mod / "run.sh")
    [patch] = releases3.import_(mod).patches
    assert not patch.written and "outside" in patch.message


def test_mail_directory_link_out_is_refused(releases3: Releases3, tmp_path: Path) -> None:
    up = releases3.upstream.path
    run_git(up, "checkout", "-q", "-b", "feature", "v1.2")
    (up / "vllm" / "util.py").write_text("X = 1\n")
    run_git(up, "commit", "-qam", "util: X")
    mail = run_git(up, "format-patch", "-1", "--stdout", "--full-index")
    run_git(up, "checkout", "-q", "main")
    secret = tmp_path / "elsewhere.patch"
    secret.write_bytes(mail)
    mails = tmp_path / "mails"
    mails.mkdir()
    os.symlink(secret, mails / "0001-x.patch")
    [patch] = releases3.import_(mails).patches
    assert not patch.written and "outside" in patch.message
    _nothing_of(secret, releases3)


def test_import_into_a_set_outside_the_project_is_refused(
    releases3: Releases3, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-set"
    (outside / "patches").mkdir(parents=True)
    manifest = '[patchset]\nname = "o"\nversion = "1"\ntargets = ["vllm"]\nseries = []\n'
    (outside / "patchset.toml").write_text(manifest)
    source = tmp_path / "fix.patch"
    source.write_bytes(_diff_at_lock(releases3))
    with pytest.raises(ConfigError, match=r"--into: set '\.\./\.\./outside-set' is refused"):
        releases3.import_(source, into="../../outside-set")
    assert list((outside / "patches").iterdir()) == []
    assert (outside / "patchset.toml").read_text() == manifest


@pytest.mark.parametrize("spec", ["{up}@--output={marker}..HEAD", "{up}@HEAD..--output={marker}"])
def test_range_ends_never_reach_git_as_options(
    releases3: Releases3, tmp_path: Path, spec: str
) -> None:
    marker = tmp_path / "written"
    [patch] = releases3.import_(spec.format(up=releases3.upstream.path, marker=marker)).patches
    assert not patch.written and "refused" in patch.message
    assert not marker.exists()


def _imported_set(releases3: Releases3, tmp_path: Path) -> None:
    source = tmp_path / "fix.patch"
    source.write_bytes(_diff_at_lock(releases3))
    [patch] = releases3.import_(source).patches
    assert patch.written, patch.message


@pytest.mark.parametrize("fmt", ["quilt", "mbox"])
def test_export_series_again_keeps_files_a_person_added(
    releases3: Releases3, tmp_path: Path, fmt: str
) -> None:
    _imported_set(releases3, tmp_path)
    out = tmp_path / "out"
    first = _export(releases3, out, fmt)
    (out / "NOTES.txt").write_text("mine\n")
    (out / "sub").mkdir()
    (out / "sub" / "keep.patch").write_text("mine too\n")
    second = _export(releases3, out, fmt)
    assert (out / "NOTES.txt").read_text() == "mine\n"
    assert (out / "sub" / "keep.patch").read_text() == "mine too\n"
    assert [p.name for p in second.files] == [p.name for p in first.files]


def test_export_series_never_writes_over_a_file_it_did_not_write(
    releases3: Releases3, tmp_path: Path
) -> None:
    _imported_set(releases3, tmp_path)
    out = tmp_path / "out"
    _export(releases3, out, "quilt")
    (out / MARKER).write_text("# an earlier export that wrote nothing\n")
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (out / "series").unlink()
    os.symlink(victim, out / "series")  # a link where the export writes
    with pytest.raises(TreeError, match="would be written over"):
        _export(releases3, out, "quilt")
    assert victim.read_text() == "keep\n"


def test_export_series_manifest_cannot_name_files_elsewhere(
    releases3: Releases3, tmp_path: Path
) -> None:
    _imported_set(releases3, tmp_path)
    out = tmp_path / "out"
    _export(releases3, out, "quilt")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    with (out / MARKER).open("a") as manifest:
        manifest.write(f"../victim.txt\n{victim}\n.hidden\n")
    _export(releases3, out, "quilt")
    assert victim.read_text() == "keep\n"


def test_import_base_that_looks_like_an_option_is_refused(
    releases3: Releases3, tmp_path: Path
) -> None:
    source = tmp_path / "fix.patch"
    source.write_bytes(_diff_at_lock(releases3))
    with pytest.raises(ConfigError, match="--base: revision '--all' is refused"):
        releases3.import_(source, base="--all")


def test_a_directory_an_older_export_wrote_is_exported_into_again(
    releases3: Releases3, tmp_path: Path
) -> None:
    _imported_set(releases3, tmp_path)
    out = tmp_path / "out"
    first = _export(releases3, out, "quilt")
    # the marker the export wrote before it kept a manifest
    (out / MARKER).write_text("written by `patchkit export-series`; replaced on the next\nexport\n")
    (out / "NOTES.txt").write_text("mine\n")
    second = _export(releases3, out, "quilt")
    assert [p.name for p in second.files] == [p.name for p in first.files]
    assert (out / "NOTES.txt").read_text() == "mine\n"
