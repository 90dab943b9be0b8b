"""Upstream renamed what a hunk's context names (a field, a variable): the renames are learned
from the scope's lines upstream rewrote in place and made in the hunk's lines too, only when
all the evidence agrees; otherwise the conflict stands."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.diff.renames import learn
from patchkit.outcome import Outcome
from tests.conftest import dedent
from tests.engine.test_placement import ported

ADD_IFACE_C = dedent(
    """
    #include "worker.h"

    int add_iface(worker_t *w, int i) {
        iface_t *iface = open_iface(w, i);
        int status = -1;

        if (iface == NULL) {
            goto out;
        }

        status = query(iface, &w->ifaces[i].attr);
        if (status != 0) {
            goto out;
        }

        attr = &w->ifaces[i].attr;
        report(attr);
    out:
        return status;
    }
    """
)
CLEAR = "    clear(&w->ifaces[i].attr,\n          sizeof(w->ifaces[i].attr));\n"
QUERY = "    status = query(iface"


def test_a_field_upstream_renamed_is_renamed_in_the_added_lines(tmp_path: Path) -> None:
    patched = ADD_IFACE_C.replace(QUERY, CLEAR + QUERY)
    upstream = ADD_IFACE_C.replace("w->ifaces[i].attr", "w->iface_attrs[i]")
    report, text = ported(tmp_path, "worker.c", ADD_IFACE_C, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == patched.replace("w->ifaces[i].attr", "w->iface_attrs[i]")
    (mark,) = report.result.placements
    assert "ifaces[i].attr -> iface_attrs[i]" in mark.note


def test_a_rename_upstream_did_not_make_everywhere_stays_a_conflict(tmp_path: Path) -> None:
    patched = ADD_IFACE_C.replace(QUERY, CLEAR + QUERY)
    upstream = ADD_IFACE_C.replace("&w->ifaces[i].attr);", "&w->iface_attrs[i]);")
    report, text = ported(tmp_path, "worker.c", ADD_IFACE_C, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_renames_are_learned_only_where_all_the_evidence_agrees() -> None:
    base = [b"    a = cfg->limit;\n", b"    b = cfg->limit + 1;\n", b"    c = 2;\n"]
    ours = [b"    a = cfg->common.limit;\n", b"    b = cfg->common.limit + 1;\n", b"    c = 3;\n"]
    assert [str(r) for r in learn(base, ours)] == ["limit -> common.limit"]
    two = [ours[0], b"    b = cfg->shared.limit + 1;\n", ours[2]]
    assert learn(base, two) == []  # two spellings for one name: none
    kept = [*ours, b"    d = cfg->limit;\n"]
    assert learn([*base, b"    d = cfg->limit;\n"], kept) == []  # still named so: none
    number = [b"    x = solve(a, tol=1e-5);\n"]
    assert learn(number * 2, [b"    x = solve(a, tol=1.25e-5);\n"] * 2) == []  # no rename
    assert learn(base[:1], ours[:1]) == []  # one line is too little evidence
    call = [b"    return run(kernel, grid, stream=None)\n"] * 2
    reworked = [b"    return launch_v2(kernel, grid, sync=True)\n"] * 2
    assert learn(call, reworked) == []  # rewritten in several places: a rework
    assert learn([b"x = None\n"] * 2, [b"x = True\n"] * 2) == []  # keywords are no names
