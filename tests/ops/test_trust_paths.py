"""Paths named by input, end to end: a patch's metadata naming a file outside its set, and a
diff writing into the checkout's git directory through a symlink the tree already has."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.errors import UnsafePathError
from patchkit.patchset import load_patchset
from testing.builders import Scenario

FILES = {"a": "a one\na two\n"}


@pytest.mark.parametrize("named", ["{outside}", "../../../outside.patch", "../demo2/x.patch"])
def test_patch_file_outside_its_set_is_refused_at_load(tmp_path: Path, named: str) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a": "a one\na TWO\n"})
    outside = tmp_path / "outside.patch"
    outside.write_bytes((s.set_root / "patches" / "p1.patch").read_bytes())
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(meta.read_text() + f'file = "{named.format(outside=outside)}"\n')
    with pytest.raises(UnsafePathError, match=r"p1\.toml: key `file`") as info:
        load_patchset(s.set_root)
    assert info.value.exit_code == 5
