"""No input crashes import: each malformed source is refused with a reason, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.importers.conftest import Releases3

BAD: dict[str, bytes | dict[str, bytes]] = {
    "binary.patch": b"\x00\xff\xfe--- a\n+++ b\n@@ -1 +1 @@\n-\xff\n+\x00\n",
    "truncated.diff": b"--- a/vllm/model.py\n+++ b/vllm/model.py\n@@ -1,9 +1,9 @@\n class",
    "escape.diff": b"--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
    "nohunks.patch": b"--- a/vllm/model.py\n+++ b/vllm/model.py\n",
    "syntax.py": b"code = open('/site-packages/vllm/model.py').read(\n",
    "latin1.py": b"# \xe9t\xe9\nP = '/site-packages/vllm/model.py'\n",
    "huge_loop.py": b"P='/site-packages/vllm/model.py'\ncode=open(P).read()\n"
    b"for i in [" + b"1," * 2000 + b"]:\n    pass\nopen(P,'w').write(code)\n",
    "empty.txt": b"",
    "mod": {"run.sh": b"patch -p1 -d / < 'unterminated\npatch -pX -d / < x.patch\n"},
    "quilt": {"series": b"missing.patch\n"},
    "badseries": {"series": b"\xff\xfe\x00\n"},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_source_is_refused_not_crashed(
    releases3: Releases3, tmp_path: Path, name: str
) -> None:
    source = tmp_path / name
    content = BAD[name]
    if isinstance(content, dict):
        source.mkdir()
        for file, data in content.items():
            (source / file).write_bytes(data)
    else:
        source.write_bytes(content)
    report = releases3.import_(source)
    assert report.patches and all(p.refused for p in report.patches)
    assert all(p.message for p in report.patches)
    assert not releases3.set_dir().exists()
