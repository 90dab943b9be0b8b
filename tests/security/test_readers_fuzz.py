"""Property: any bytes given to the readers of hostile input end in patchkit's own errors or a
value, never another exception (a crash, exit 70)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchkit.errors import PatchkitError
from patchkit.gitrepo.catfile import parse_header
from patchkit.importers.meta import parse_mail
from patchkit.importers.scripts import read_script
from patchkit.workspace.state import StateStore

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
STATE_KEYS = ["version", "target", "commit", "lock_version", "patches", "files"]
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SLOW
@given(st.dictionaries(st.sampled_from(STATE_KEYS), JSON) | JSON)
def test_state_files_of_any_shape(raw: object) -> None:
    if isinstance(raw, dict) and "version" not in raw:
        raw["version"] = 1
    with contextlib.suppress(PatchkitError):
        StateStore.parse(json.dumps(raw).encode(), Path("state.json"))


@SLOW
@given(st.binary(max_size=200))
def test_state_files_of_any_bytes(data: bytes) -> None:
    with contextlib.suppress(PatchkitError):
        StateStore.parse(data, Path("state.json"))


@SLOW
@given(st.binary(max_size=120))
def test_cat_file_headers(line: bytes) -> None:
    found = parse_header(line + b"\n")
    assert found is None or len(found[0]) in (40, 64)


@SLOW
@given(st.text(alphabet="()[]{}:=+ \n'\"abcPor.replace1,fin", max_size=300))
def test_scripts_of_any_text(text: str) -> None:
    with contextlib.suppress(PatchkitError):
        read_script(text.encode(), Path("s.py"), "vllm")


@SLOW
@given(st.binary(max_size=300))
def test_mail_of_any_bytes(data: bytes) -> None:
    parse_mail(b"From: " + data + b"\nSubject: x\n\n" + data)
