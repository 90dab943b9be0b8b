"""import reads hostile scripts and mail within named bounds: each refusal names the file, the
limit and the line; nothing segfaults (libcst at 2000 parentheses), hangs (a loop doubling a
string) or crashes (a replace count of 2^63)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from patchkit.errors import ImportRefused
from patchkit.importers.meta import parse_mail
from patchkit.importers.scripts import read_script

MOD = "/usr/local/lib/python3.12/dist-packages/vllm/model.py"
HEAD = f"P = '{MOD}'\ncode = open(P).read()\n"
TAIL = "open(P, 'w').write(code)\n"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "x = " + "(" * 2000 + "1" + ")" * 2000 + "\n",
            "line 3: brackets and blocks nest deeper than 100 (MAX_NESTING)",
        ),
        (
            "".join("    " * i + "if True:\n" for i in range(150)) + "    " * 150 + "pass\n",
            "(MAX_NESTING)",
        ),
        (
            "s = 'ab'\nfor i in [" + "1," * 200 + "]:\n    s = s + s\n",
            "line 5: builds a value over 1000000 long (MAX_VALUE_CHARS)",
        ),
        ("code = code.replace('a', 'b', 9223372036854775808)\n", "line 3: a replace count outside"),
        ("code = code.replace('a', 'b', True)\n", "line 3: a replace count that is not"),
        (
            "L = [" + "1," * 999 + "]\nfor i in L:\n    for j in L:\n        pass\n",
            "loops run more than 100000 times in all (MAX_STEPS)",
        ),
    ],
    ids=["parentheses", "blocks", "doubling", "count-2^63", "count-bool", "nested-loops"],
)
def test_a_hostile_script_is_refused_naming_the_limit_and_line(body: str, said: str) -> None:
    start = time.monotonic()
    with pytest.raises(ImportRefused) as info:
        read_script((HEAD + body + TAIL).encode(), Path("mod.py"), "vllm")
    assert "mod.py" in info.value.message and said in info.value.message
    assert time.monotonic() - start < 20


def test_an_unknown_charset_in_a_header_is_kept_as_written() -> None:
    mail = b"From: =?x-no-such-charset?q?Eve?= <e@x.org>\nSubject: [PATCH] x\n\nwhy\n---\n"
    meta, _ = parse_mail(mail)
    assert "e@x.org" in meta.author


def test_a_run_sh_line_of_a_megabyte_is_refused_naming_the_line(tmp_path: Path) -> None:
    from patchkit.importers.shell import read_shell

    run_sh = tmp_path / "run.sh"
    run_sh.write_bytes(b"set -e\necho " + b"x" * 1_000_000 + b"\n")
    with pytest.raises(
        ImportRefused, match=r"run\.sh line 2: 1000005 bytes, more than the 65536 \(MAX_LINE\)"
    ):
        read_shell(run_sh)
