"""A replace script carried without a base release: partly upstreamed only when every edit is
there or can be made; a text it cannot find makes it a conflict (issue 27: success means every
hunk)."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.series import Blobs
from patchkit.importers.carry import _without_base
from patchkit.importers.model import Candidate, FileEdits, Form, Meta, Replace
from patchkit.outcome import Outcome


def _candidate(*replaces: Replace) -> Candidate:
    edits = (FileEdits("pkg/a.py", tuple(replaces)),)
    return Candidate("fix", Form.SCRIPT, Path("fix.py"), Meta(), edits=edits)


def test_an_edit_upstream_made_beside_one_whose_text_is_gone_is_a_conflict() -> None:
    files = {"pkg/a.py": b"x = 2\ny = 1\n"}  # upstream made x = 2; "z = 0" is gone
    candidate = _candidate(Replace("x = 1", "x = 2"), Replace("z = 0", "z = 5"))

    carried = _without_base(candidate, files.get, "demo", Blobs([]))

    assert carried.outcome is Outcome.CONFLICT
    assert "z = 0" in carried.message


def test_every_edit_there_is_upstreamed() -> None:
    files = {"pkg/a.py": b"x = 2\nz = 5\n"}
    candidate = _candidate(Replace("x = 1", "x = 2"), Replace("z = 0", "z = 5"))

    assert _without_base(candidate, files.get, "demo", Blobs([])).outcome is Outcome.UPSTREAMED


def test_an_edit_upstream_made_beside_one_still_to_make_is_partly_upstreamed() -> None:
    files = {"pkg/a.py": b"x = 2\nz = 0\n"}
    candidate = _candidate(Replace("x = 1", "x = 2"), Replace("z = 0", "z = 5"))

    carried = _without_base(candidate, files.get, "demo", Blobs([]))

    assert carried.outcome is Outcome.PARTLY_UPSTREAMED
