"""upstream.lock and patchset.toml: errors name the file and the key, as ConfigError (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.model import SourceKind
from patchkit.project.lock import load_lock, move_lock
from patchkit.project.sets import load_patchset
from testing.builders import Scenario

LOCK = """\
# pinned by hand
[targets.demo]
repository = "https://example.com/demo"
version = "1.0"
commit = "0123456789abcdef"
source = { kind = "path", path = "/src/demo" }  # a local mirror
"""


def write_lock(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "upstream.lock"
    path.write_text(text)
    return path


def config_error(load, path: Path, *fragments: str) -> ConfigError:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as info:
        load(path)
    error = info.value
    assert error.exit_code == 2
    for fragment in (str(path), *fragments):
        assert fragment in error.message
    return error


def test_a_valid_lock_loads(tmp_path: Path) -> None:
    entry = load_lock(write_lock(tmp_path, LOCK)).targets["demo"]
    assert (entry.version, entry.commit) == ("1.0", "0123456789abcdef")
    assert (entry.source.kind, entry.source.path) == (SourceKind.PATH, "/src/demo")


def test_move_lock_keeps_comments(tmp_path: Path) -> None:
    path = write_lock(tmp_path, LOCK)
    move_lock(path, "demo", version="1.1", commit="fedcba9876543210")
    text = path.read_text()
    assert "# pinned by hand" in text and "# a local mirror" in text
    assert load_lock(path).targets["demo"].commit == "fedcba9876543210"


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        ('commit = "0123456789abcdef"\n', "", ("targets.demo.commit",)),
        ('kind = "path"', 'kind = "svn"', ("targets.demo.source.kind", "'svn'")),
        (', path = "/src/demo"', "", ("targets.demo.source.path",)),
        ('version = "1.0"', "version = 1", ("targets.demo.version",)),
        ("[targets.demo]", "[targets.demo", ("not valid TOML",)),
    ],
    ids=[
        "missing-commit",
        "bad-source-kind",
        "path-source-without-path",
        "version-not-string",
        "bad-toml",
    ],
)
def test_lock_errors_name_the_file_and_the_key(
    tmp_path: Path, old: str, new: str, fragments: tuple[str, ...]
) -> None:
    assert old in LOCK
    config_error(load_lock, write_lock(tmp_path, LOCK.replace(old, new)), *fragments)


def test_missing_lock_is_a_config_error(tmp_path: Path) -> None:
    config_error(load_lock, tmp_path / "upstream.lock", "does not exist")


# -- patch sets ------------------------------------------------------------------------------


def demo_set(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    s.add("p1", {"a.txt": "A\n"})
    s.add("p2", {"b.txt": "b\n"})
    return s


def test_series_naming_a_missing_patch_is_refused(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    s.set_series(["p1", "nope", "p2"])
    config_error(load_patchset, s.set_root, "nope.toml", "does not exist")


def test_requires_an_id_not_earlier_in_the_series_is_refused(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(meta.read_text() + 'requires = ["p2"]\n')
    error = config_error(load_patchset, s.set_root, "'p2'", "not earlier in the series")
    assert str(meta.resolve()) in error.message


def test_requires_an_earlier_patch_is_accepted(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    meta = s.set_root / "patches" / "p2.toml"
    meta.write_text(meta.read_text() + 'requires = ["p1"]\n')
    assert [p.requires for p in s.patches()] == [(), ("p1",)]


def test_id_not_matching_the_file_name_is_refused(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(meta.read_text().replace('id = "p1"', 'id = "other"'))
    error = config_error(load_patchset, s.set_root, "'other'", "'p1'")
    assert str(meta) in error.message


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (lambda t: t.replace('title = "Patch p1"\n', ""), ("'title'",)),
        (lambda t: t.replace('target = "demo"', 'target = "elsewhere"'), ("'elsewhere'",)),
        (lambda t: t + 'status = "maybe"\n', ("status",)),
    ],
    ids=["missing-title", "unknown-target", "bad-status"],
)
def test_patch_metadata_errors_name_the_file_and_the_key(tmp_path: Path, edit, fragments) -> None:  # type: ignore[no-untyped-def]
    s = demo_set(tmp_path)
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(edit(meta.read_text()))
    error = config_error(load_patchset, s.set_root, *fragments)
    assert str(meta) in error.message


def test_series_listing_a_patch_twice_is_refused(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    s.set_series(["p1", "p2", "p1"])
    config_error(load_patchset, s.set_root, "patchset.toml", "twice")


def test_patch_with_no_file_beside_its_metadata_is_refused(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    (s.set_root / "patches" / "p2.patch").unlink()
    config_error(load_patchset, s.set_root, "p2.toml", "found none")


@pytest.mark.parametrize(
    ("files", "fragments"),
    [
        ('["../outside.py"]', ("files", "'../outside.py'")),
        ('["/abs.py"]', ("files", "'/abs.py'")),
        ('["a.py", "a.py"]', ("files", "twice")),
        ('"a.py"', ("'files'", "list of strings")),
    ],
    ids=["parent", "absolute", "twice", "not-a-list"],
)
def test_bad_rewrite_files_are_refused(tmp_path: Path, files: str, fragments: tuple) -> None:
    s = demo_set(tmp_path)
    s.project.add_rewrite("rw", "# not imported to load its metadata\n")
    s.set_series(["p1", "p2", "rw"])
    meta = s.set_root / "patches" / "rw.toml"
    meta.write_text(meta.read_text() + f"files = {files}\n")
    config_error(load_patchset, s.set_root, "rw.toml", *fragments)


def test_rewrite_files_load_and_a_diff_may_not_declare_them(tmp_path: Path) -> None:
    s = demo_set(tmp_path)
    s.project.add_rewrite("rw", "raise SystemExit('a rewrite is never imported to load it')\n")
    s.set_series(["p1", "p2", "rw"])
    rw = s.set_root / "patches" / "rw.toml"
    rw.write_text(rw.read_text() + 'files = ["pkg/a.py", "b.py"]\n')
    assert [p.files for p in s.patches()] == [(), (), ("pkg/a.py", "b.py")]
    p1 = s.set_root / "patches" / "p1.toml"
    p1.write_text(p1.read_text() + 'files = ["a.txt"]\n')
    config_error(load_patchset, s.set_root, "p1.toml", "for rewrites")


def test_linked_patch_files_resolve_to_their_targets(tmp_path: Path) -> None:
    """The set's directory is listed once; a link among its files is still followed, as
    ``resolve`` does, and a directory named like a patch file is no patch file."""
    s = demo_set(tmp_path)
    patches = s.set_root / "patches"
    elsewhere = tmp_path / "kept"
    elsewhere.mkdir()
    for name in ("p1.patch", "p1.toml"):
        (patches / name).rename(elsewhere / name)
        (patches / name).symlink_to(elsewhere / name)
    (patches / "p2.diff").mkdir()  # not a file: p2.patch stays the only candidate
    loaded = {p.id: p for p in load_patchset(s.set_root).patches}
    assert loaded["p1"].file == (elsewhere / "p1.patch").resolve()
    assert loaded["p1"].meta_file == (elsewhere / "p1.toml").resolve()
    assert loaded["p2"].file == (patches / "p2.patch").resolve()
    assert loaded["p2"].meta_file == (patches / "p2.toml").resolve()
