"""The package index: which one pip uses, what it lists, verified downloads, safe extraction."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from patchkit.errors import SourceError
from patchkit.upstream import index as index_module
from patchkit.upstream.index import (
    IndexConfig,
    PackageIndex,
    parse_pip_config,
    pip_default_index,
    resolve_index,
)
from patchkit.upstream.sdist import extract_sdist
from testing.fake_index import (
    COMMITS,
    PROJECT,
    FakeIndex,
    make_sdist,
    make_tarball,
)
from testing.fake_index import fake_index as fake_index  # the fixture

PIP_LIST = """\
:env:.index-url='http://env.example/simple'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.index-url='https://global.example/simple'
global.cert='/etc/ssl/ca.pem'
"""


def index_for(fake: FakeIndex) -> PackageIndex:
    return PackageIndex(IndexConfig(fake.url, "test"))


# -- which index --------------------------------------------------------------------------------
def test_patchkit_env_wins_over_pip_env_and_config() -> None:
    env = {"PATCHKIT_INDEX_URL": "http://pk/simple", "PIP_INDEX_URL": "http://pip/simple"}
    assert resolve_index(env, PIP_LIST).url == "http://pk/simple"
    assert resolve_index({"PIP_INDEX_URL": "http://pip/simple"}, PIP_LIST).url == (
        "http://pip/simple"
    )


def test_pip_config_index_url_extra_indexes_ignored() -> None:
    config = resolve_index({}, PIP_LIST)
    assert (config.url, config.origin, config.cert) == (
        "https://global.example/simple",
        "pip config",
        "/etc/ssl/ca.pem",
    )


def test_install_section_beats_global() -> None:
    text = "global.index-url='http://g/simple'\ninstall.index-url='http://i/simple'\n"
    assert parse_pip_config(text, "index-url") == "http://i/simple"


def test_default_is_pips_own() -> None:
    assert resolve_index({}, "").url == pip_default_index() == "https://pypi.org/simple"


def test_reads_real_pip_config_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = http://configured.example/simple\n"
        "extra-index-url = file:///somewhere/simple\n"
    )
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    for var in ("PIP_INDEX_URL", "PATCHKIT_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)
    assert resolve_index().url == "http://configured.example/simple"


def test_building_an_index_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> str:
        raise AssertionError("pip config was read")

    monkeypatch.setattr(index_module, "pip_config_text", boom)
    PackageIndex()  # neither pip nor the network until a release is asked for


# -- listing --------------------------------------------------------------------------------------
def test_lists_sdists_only_not_yanked_in_version_order(fake_index: FakeIndex) -> None:
    releases = index_for(fake_index).releases(PROJECT)
    assert [r.version for r in releases] == ["0.1.0", "0.2.0", "0.3.0rc1", "0.3.0"]
    first = releases[0]
    assert first.filename == "fake_vllm-0.1.0.tar.gz"
    assert first.sha256 == hashlib.sha256(make_sdist("0.1.0")).hexdigest()
    assert first.url.startswith(fake_index.url.removesuffix("simple/"))
    final = index_for(fake_index).releases(PROJECT, include_prereleases=False)
    assert [r.version for r in final] == ["0.1.0", "0.2.0", "0.3.0"]


def test_json_pages_give_upload_times(fake_index: FakeIndex) -> None:
    fake_index.json_pages = True
    fake_index.files[0].upload_time = "2026-03-11T01:36:21.434295Z"
    releases = index_for(fake_index).releases(PROJECT)
    assert releases[0].upload_time == datetime(2026, 3, 11, 1, 36, 21, 434295, timezone.utc)
    assert releases[0].git_date() == "1773192981 +0000"
    assert releases[1].upload_time is None


def test_release_compares_versions(fake_index: FakeIndex) -> None:
    assert index_for(fake_index).release(PROJECT, "0.2").version == "0.2.0"


def test_missing_version_names_project_and_index(fake_index: FakeIndex) -> None:
    with pytest.raises(SourceError, match=rf"{PROJECT} 9.9 has no source release on http://"):
        index_for(fake_index).release(PROJECT, "9.9")


def test_missing_project(fake_index: FakeIndex) -> None:
    with pytest.raises(SourceError, match="project 'nothing-here' not found"):
        index_for(fake_index).releases("nothing-here")


def test_unreachable_index_is_a_source_error() -> None:
    index = PackageIndex(IndexConfig("http://127.0.0.1:9/simple/", "test"))
    with pytest.raises(SourceError, match=r"127.0.0.1:9/simple/ \(from test\) failed") as err:
        index.releases(PROJECT)
    assert err.value.hint and "PATCHKIT_INDEX_URL" in err.value.hint


# -- downloads ----------------------------------------------------------------------------------
def test_download_verifies_and_is_reused_offline(fake_index: FakeIndex, tmp_path: Path) -> None:
    index = index_for(fake_index)
    release = index.release(PROJECT, "0.1.0")
    path = index.download(release, tmp_path)
    assert path == tmp_path / "fake_vllm-0.1.0.tar.gz"
    assert path.read_bytes() == make_sdist("0.1.0")
    fake_index.stop()
    assert index.download(release, tmp_path) == path  # no server: served from the cache


def test_download_goes_to_the_cache(fake_index: FakeIndex) -> None:
    index = index_for(fake_index)
    path = index.download(index.release(PROJECT, "0.2.0"))
    assert path.parent.name == "downloads"
    assert path.is_file()


def test_corrupted_download_is_refused(fake_index: FakeIndex, tmp_path: Path) -> None:
    fake_index.files[0].content = b"tampered" + fake_index.files[0].content
    index = index_for(fake_index)
    release = index.release(PROJECT, "0.1.0")
    with pytest.raises(SourceError, match=r"0\.1\.0: .* has sha256 [0-9a-f]{64}, but the index"):
        index.download(release, tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing left behind, not even a partial file


def test_bad_cached_file_is_downloaded_again(fake_index: FakeIndex, tmp_path: Path) -> None:
    index = index_for(fake_index)
    release = index.release(PROJECT, "0.1.0")
    (tmp_path / release.filename).write_bytes(b"truncated")
    assert index.download(release, tmp_path).read_bytes() == make_sdist("0.1.0")


# -- extraction ---------------------------------------------------------------------------------
def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "x.tar.gz"
    path.write_bytes(data)
    return path


def test_extract_strips_top_dir_and_sdist_files(tmp_path: Path) -> None:
    archive = write(tmp_path, make_sdist("0.1.0"))
    tree = extract_sdist(archive, tmp_path / "out")
    assert tree.root == tmp_path / "out" / "fake_vllm-0.1.0"
    names = sorted(p.relative_to(tree.root).as_posix() for p in tree.root.rglob("*"))
    assert names == ["README.md", "vllm", "vllm/_version.py", "vllm/core.py"]
    assert COMMITS["0.1.0"] in (tree.root / "vllm/_version.py").read_text()
    assert (tree.root / "README.md").stat().st_mode & 0o100


def test_extract_keeps_setup_cfg_minus_the_egg_info_block(tmp_path: Path) -> None:
    cfg = b"[metadata]\nname = x\n\n[egg_info]\ntag_build = \ntag_date = 0\n\n"
    archive = write(tmp_path, make_tarball({"pkg/setup.cfg": cfg}))
    tree = extract_sdist(archive, tmp_path / "out")
    assert (tree.root / "setup.cfg").read_bytes() == b"[metadata]\nname = x\n"


@pytest.mark.parametrize(
    "files,links,what",
    [
        ({"pkg/a": b"", "pkg/../evil": b""}, {}, "'..'"),
        ({"pkg/a": b"", "/etc/evil": b""}, {}, "absolute"),
        ({"pkg/a": b""}, {"pkg/link": "../../etc/passwd"}, "links outside"),
        ({"pkg/a": b""}, {"pkg/link": "/etc/passwd"}, "links outside"),
        ({"pkg/a": b"", "other/b": b""}, {}, "2 top-level entries"),
    ],
)
def test_extract_refuses_unsafe_members(
    tmp_path: Path, files: dict[str, bytes], links: dict[str, str], what: str
) -> None:
    archive = write(tmp_path, make_tarball(files, links=links))
    with pytest.raises(SourceError, match=what):
        extract_sdist(archive, tmp_path / "out")
    assert not (tmp_path / "evil").exists()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


def test_extract_keeps_links_inside(tmp_path: Path) -> None:
    archive = write(tmp_path, make_tarball({"pkg/a/f": b"x"}, links={"pkg/b": "a/f"}))
    tree = extract_sdist(archive, tmp_path / "out")
    assert (tree.root / "b").is_symlink() and (tree.root / "b").read_bytes() == b"x"
