"""Success means every hunk: a patch is partly upstreamed only when each of its hunks is
applied or already there; one that ends in a conflict makes the whole patch a conflict, and
nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream
from tests.conftest import dedent

OC = Outcome

FUNC = dedent(
    """
    def compute(a, b):
        total = a + b
        total = total * 2
        return total
    """
)


def test_a_conflicted_file_beside_an_upstreamed_and_an_applied_one_is_a_conflict(
    tmp_path: Path,
) -> None:
    up = Upstream(tmp_path / "up")
    files = {"a.py": FUNC, "b.py": FUNC, "c.py": FUNC}
    base = up.commit(files, "base")
    patch = tmp_path / "fix.patch"
    fixed = FUNC.replace("total * 2", "total * 3")
    patch.write_bytes(up.diff_of(dict.fromkeys(files, fixed)))
    # upstream made the change in a.py, and rewrote the same line of c.py its own way
    up.commit({"a.py": fixed, "c.py": FUNC.replace("total * 2", "total << 1")})
    before = {name: (up.path / name).read_bytes() for name in files}

    report = port(patch_file=patch, base_commit=base, checkout=up.path)

    assert report.outcome is Outcome.CONFLICT
    assert not report.succeeded and report.written == ()
    assert {name: (up.path / name).read_bytes() for name in files} == before
    assert [d.path for d in report.result.details] == ["c.py"]


@pytest.mark.parametrize(
    ("parts", "verdict"),
    [
        ([OC.UPSTREAMED, OC.APPLIED, OC.CONFLICT], OC.CONFLICT),
        ([OC.PARTLY_UPSTREAMED, OC.AMBIGUOUS], OC.AMBIGUOUS),
        ([OC.UPSTREAMED, OC.GONE, OC.CARRIED], OC.GONE),
        ([OC.FAILED, OC.CONFLICT], OC.FAILED),
        ([OC.UPSTREAMED, OC.APPLIED], OC.PARTLY_UPSTREAMED),
        ([OC.UPSTREAMED, OC.PARTLY_UPSTREAMED], OC.PARTLY_UPSTREAMED),
        ([OC.UPSTREAMED, OC.UPSTREAMED], OC.UPSTREAMED),
        ([OC.APPLIED, OC.CARRIED], OC.CARRIED),
        ([OC.APPLIED], OC.APPLIED),
        ([], OC.FAILED),
    ],
)
def test_a_patch_verdict_is_a_success_only_when_every_part_landed(
    parts: list[Outcome], verdict: Outcome
) -> None:
    assert Outcome.worst(parts) is verdict
