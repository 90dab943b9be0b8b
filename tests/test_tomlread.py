"""TOML read once per text: a later process takes the parsed result from the cache; an edited
file is parsed again; a broken cache or a value marshal cannot hold changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import patchkit.tomlread as tomlread
from patchkit.errors import ConfigError

# A new process reads the file and says whether it had to parse it.
PROBE = """\
import sys
from pathlib import Path
import patchkit.tomlread as t
parsed = []
real = t._parse
t._parse = lambda path, text: parsed.append(path) or real(path, text)
data = t.read_toml(Path(sys.argv[1]))
print(repr(data), bool(parsed))
"""


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "cache"))


def _probe(path: Path) -> tuple[str, bool]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    ).stdout.split(" ")
    return " ".join(out[:-1]), out[-1].strip() == "True"


def test_a_later_process_takes_the_parsed_text_from_the_cache(tmp_path: Path) -> None:
    meta = tmp_path / "p.toml"
    meta.write_text('id = "p"\nfiles = ["a.py"]\n[export]\nidentity = "A <a@b.c>"\n')
    first, parsed = _probe(meta)
    assert parsed and first == repr(
        {"id": "p", "files": ["a.py"], "export": {"identity": "A <a@b.c>"}}
    )
    again, parsed = _probe(meta)
    assert again == first and not parsed  # from the cache
    meta.write_text('id = "p"\nfiles = ["b.py"]\n')  # same size or not: the text is the key
    edited, parsed = _probe(meta)
    assert parsed and "b.py" in edited


def test_a_broken_cache_file_is_ignored(tmp_path: Path) -> None:
    meta = tmp_path / "p.toml"
    meta.write_text('id = "p"\n')
    _probe(meta)
    store = Path(os.environ["PATCHKIT_CACHE"]) / tomlread._FILE
    assert store.is_file()
    store.write_bytes(b"\x00not marshal")
    data, parsed = _probe(meta)
    assert parsed and data == repr({"id": "p"})


def test_each_read_is_a_fresh_copy_and_dates_still_read(tmp_path: Path) -> None:
    meta = tmp_path / "p.toml"
    meta.write_text('id = "p"\n[t]\nx = [1]\n')
    one = tomlread.read_toml(meta)
    one["t"]["x"].append(2)
    two = tomlread.read_toml(meta)
    two["t"]["x"].append(3)
    assert tomlread.read_toml(meta)["t"]["x"] == [1]
    dated = tmp_path / "d.toml"
    dated.write_text("when = 2026-11-23\n")
    assert str(tomlread.read_toml(dated)["when"]) == "2026-11-23"  # parsed, not kept
    assert str(tomlread.read_toml(dated)["when"]) == "2026-11-23"


def test_a_missing_or_broken_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        tomlread.read_toml(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("id = \n")
    with pytest.raises(ConfigError, match=r"bad\.toml: not valid TOML"):
        tomlread.read_toml(bad)


def test_a_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "latin.toml"
    bad.write_bytes(b'title = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=r"latin\.toml: not valid TOML: not UTF-8"):
        tomlread.read_toml(bad)
