"""TOML read once per text: a later process takes the parsed result from the cache; an edited
file is parsed again; a broken cache or a value JSON cannot hold changes nothing; an entry
patchkit did not seal is never believed (nothing it names is imported); a text nested too deeply
or with a huge integer is refused naming the file (exit 2), never a crash."""

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


def test_a_broken_cache_entry_is_ignored(tmp_path: Path) -> None:
    meta = tmp_path / "p.toml"
    meta.write_text('id = "p"\n')
    _probe(meta)
    entries = list((Path(os.environ["PATCHKIT_CACHE"]) / "toml").iterdir())
    assert len(entries) == 1
    entries[0].write_bytes(b"\x00not an entry")
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


@pytest.mark.parametrize(
    "text",
    ["x = " + "[" * 5000 + "]" * 5000 + "\n", "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"],
    ids=["arrays", "inline-tables"],
)
def test_nesting_too_deep_is_refused_naming_the_file(tmp_path: Path, text: str) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text(text)
    with pytest.raises(ConfigError, match=r"deep\.toml: not usable TOML: .*nested too deeply"):
        tomlread.read_toml(deep)


def test_an_integer_of_more_than_4300_digits_is_refused_naming_the_file(tmp_path: Path) -> None:
    huge = tmp_path / "huge.toml"
    huge.write_text("n = " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError, match=r"huge\.toml: not usable TOML: .*4300"):
        tomlread.read_toml(huge)


def test_a_deep_or_huge_patch_metadata_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from patchkit.cli import main
    from testing.builders import Scenario

    s = Scenario(tmp_path, {"a.txt": "one\n"})
    s.add("p", {"a.txt": "ONE\n"})
    meta = s.project.path / "patchsets" / "demo" / "patches" / "p.toml"
    args = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    for extra in ("deep = " + "[" * 3000 + "]" * 3000, "n = " + "7" * 4400):
        meta.write_text(meta.read_text().split("\nextra")[0] + f"\nextra = 1\n{extra}\n")
        capsys.readouterr()
        assert main(["status", *args]) == 2
        assert str(meta) in capsys.readouterr().err.replace("\n", "")


# -- a poisoned cache imports nothing ---------------------------------------------------------
EVIL = """
from pathlib import Path
Path(__file__).with_name("IMPORTED").write_text("the planted module ran")
"""


def _plant(cache: Path, meta: Path, poisoned: dict[str, object]) -> None:
    """What an attacker who can write the cache plants for ``meta``'s text: the parsed result
    it wants believed, in every form patchkit has read (marshal; a JSON entry, sealed under a
    key of the attacker's own)."""
    import hashlib
    import json
    import marshal

    text = meta.read_text().encode()
    key = hashlib.blake2b(text, digest_size=16).digest()
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    cache.mkdir(mode=0o700, exist_ok=True)
    (cache / f"toml-{version}.marshal").write_bytes(marshal.dumps({key: marshal.dumps(poisoned)}))
    digest = hashlib.blake2b(text, digest_size=16, person=version.encode()).hexdigest()
    payload = json.dumps({"text": digest, "data": poisoned}).encode()
    seal = hashlib.blake2b(payload, key=b"k" * 32, digest_size=32).hexdigest()
    (cache / "toml").mkdir(exist_ok=True)
    entry = b"patchkit-sealed-1 " + seal.encode() + b"\n" + payload
    (cache / "toml" / f"{digest}.json").write_bytes(entry)


def test_a_poisoned_parsed_toml_entry_never_imports_anything(tmp_path: Path) -> None:
    from testing.builders import Scenario

    s = Scenario(tmp_path, {"a.txt": "one\n"})
    s.add("p", {"a.txt": "ONE\n"})
    patches = s.project.path / "patchsets" / "demo" / "patches"
    (patches / "evil.py").write_text(EVIL)  # in the set, named by no patch
    meta = patches / "p.toml"
    cache = Path(os.environ["PATCHKIT_CACHE"])
    poisoned = {"id": "p", "target": "demo", "title": "Patch p", "why": "x", "file": "evil.py"}
    _plant(cache, meta, poisoned)
    args = ["--target", "demo", "--project", str(s.project.path), "--checkout", str(s.root)]
    proc = subprocess.run(
        [sys.executable, "-m", "patchkit", "apply", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert not (patches / "IMPORTED").exists(), "the planted module was imported"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (s.root / "a.txt").read_text() == "ONE\n"  # the real patch, from the real metadata


def test_without_a_cache_that_can_be_made_the_text_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("PATCHKIT_CACHE", str(tmp_path / "a-file" / "cache"))  # cannot be made
    meta = tmp_path / "p.toml"
    meta.write_text('id = "p"\n')
    assert tomlread.read_toml(meta) == {"id": "p"}


def test_a_cache_others_can_write_is_refused_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from patchkit.errors import CacheUntrusted

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("PATCHKIT_CACHE", str(shared))
    meta = tmp_path / "q.toml"
    meta.write_text('id = "q"\n')
    with pytest.raises(CacheUntrusted, match="chmod go-w"):
        tomlread.read_toml(meta)
