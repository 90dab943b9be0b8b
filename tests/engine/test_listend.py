"""An entry appended to a list (a copyright holder in a header comment) whose other entries
upstream changed goes at the list's end, right above its intact trailing side (open-mpi/ompi
a0704ec0ac, a34ad3999b: every tool conflicted); anything less stays a conflict."""

from __future__ import annotations

from pathlib import Path

from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream
from tests.conftest import dedent
from tests.engine.test_placement import ported

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


def test_a_holder_upstream_took_with_other_years_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream added the same holder itself, with a year range: the same entry but for its
    numbers, so the list has it already (not doubled)."""
    theirs = HEAD.replace("2023      Jeffrey", "2023-2026 Jeffrey").replace(
        END, MINE.replace("2026     ", "2025-2026") + END, 1
    )

    outcome, text = _port(tmp_path, theirs)

    assert outcome is Outcome.CONFLICT
    assert text == theirs


def test_an_entry_is_not_placed_in_a_branch_upstream_added(tmp_path: Path) -> None:
    """No grammar (Tcl): upstream changed the list's last entry and added an else branch whose
    entry is alike; the trailing side now follows the else body, a block line between the
    list's kept entry and the place: the conflict stands."""
    base = dedent(
        """
        proc setup {x} {
            set cfg(name) default
            if {$x} {
                set cfg(a) 1
                set cfg(b) 2
            }
            run_with cfg
            log_config cfg
        }
        """
    )
    patched = base.replace("        set cfg(b) 2\n", "        set cfg(b) 2\n        set cfg(c) 3\n")
    theirs = base.replace(
        "        set cfg(b) 2\n", "        set cfg(b) 5\n    } else {\n        set cfg(a) 0\n"
    )
    report, text = ported(tmp_path, "setup.tcl", base, patched, theirs)
    assert report.outcome is Outcome.CONFLICT, text
    assert "cfg(c)" not in text
