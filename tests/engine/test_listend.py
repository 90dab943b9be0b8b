"""An entry appended to a list (a copyright holder in a header comment) whose other entries
upstream changed goes at the list's end, right above its intact trailing side (open-mpi/ompi
a0704ec0ac, a34ad3999b: every tool conflicted); anything less stays a conflict."""

from __future__ import annotations

from pathlib import Path

from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream
from tests.conftest import dedent

HEAD = dedent(
    """
    /*
     * Copyright (c) 2018      Triad National Security, LLC. All rights
     *                         reserved.
     * Copyright (c) 2023      Jeffrey M. Squyres.  All rights reserved.
     * Copyright (c) 2024      NVIDIA Corporation.  All rights reserved.
     * $COPYRIGHT$
     *
     * Additional copyrights may follow
     *
     * $HEADER$
     */

    #include "config.h"

    int answer(void)
    {
        return 42;
    }
    """
)
MINE = " * Copyright (c) 2026      Nanook Consulting  All rights reserved.\n"
END = " * $COPYRIGHT$\n"


def _port(tmp_path: Path, theirs: str) -> tuple[Outcome, str]:
    up = Upstream(tmp_path / "up")
    base = up.commit({"instance.c": HEAD}, "base")
    patch = tmp_path / "fix.patch"
    patch.write_bytes(up.diff_of({"instance.c": HEAD.replace(END, MINE + END, 1)}))
    up.commit({"instance.c": theirs})
    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)
    return report.outcome, (up.path / "instance.c").read_text()


def test_a_copyright_line_goes_at_the_end_of_a_list_upstream_changed(tmp_path: Path) -> None:
    theirs = HEAD.replace("2023      Jeffrey", "2023-2026 Jeffrey").replace(
        END, " * Copyright (c) 2026      Jeffrey M. Squyres.  All rights reserved.\n" + END, 1
    )

    outcome, text = _port(tmp_path, theirs)

    assert outcome is Outcome.CARRIED
    assert text == theirs.replace(END, MINE + END, 1)


def test_an_entry_whose_list_no_longer_ends_there_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream put a line of another kind above the trailing side: no list ends there."""
    theirs = HEAD.replace("2023      Jeffrey", "2023-2026 Jeffrey").replace(
        END, " *\n * Maintained by the Open MPI team.\n" + END, 1
    )

    outcome, text = _port(tmp_path, theirs)

    assert outcome is Outcome.CONFLICT
    assert text == theirs
