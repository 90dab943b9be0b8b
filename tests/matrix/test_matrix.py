"""patchkit matrix: every patch x every release, on blobs in memory. Upstream is a small
repository whose tagged commits stand in for releases (a path source)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from patchkit.cache import Cache
from patchkit.matrix.cells import CellJob, CellValue, compute_cell
from patchkit.matrix.execute import LocalPool, Serial
from patchkit.matrix.markdown import render_markdown
from patchkit.matrix.page import render_html
from patchkit.matrix.store import CellStore
from patchkit.matrix.table import assemble_rows
from patchkit.model import PatchKind, PatchMeta
from patchkit.outcome import Outcome
from patchkit.project.load import load_project
from testing.builders import run_git
from testing.matrix import Releases, rows


@pytest.fixture
def rel(tmp_path: Path) -> Releases:
    return Releases(tmp_path)


def test_every_patch_at_every_release_opt_in_included(rel: Releases) -> None:
    m = rel.matrix(releases="v1.0..v1.4")
    assert m.releases == ("1.0", "1.1", "1.2", "1.3", "1.4")
    assert rows(m) == {
        "bump": ["applied", "applied", "carried", "upstreamed", "upstreamed"],
        "tail": ["applied", "applied", "carried", "carried", "conflict"],
        "other": ["applied", "carried", "carried", "carried", "carried"],
    }
    row = {r.patch: r for r in m.rows}
    assert (row["bump"].absorbed_by, row["bump"].broken_by) == ("1.3", None)
    assert (row["tail"].absorbed_by, row["tail"].broken_by) == (None, "1.4")
    assert row["other"].optional
    assert m.cell("bump", "1.4").absorbed_by == "1.3"
    conflict = m.cell("tail", "1.4").detail
    assert conflict["details"] and conflict["details"][0]["path"] == "pkg/tail.py"


def test_json_has_the_documented_shape(rel: Releases) -> None:
    data = rel.matrix(releases="v1.0..v1.1").to_json()
    json.dumps(data)  # plain values only
    assert {"target", "releases", "cells"} <= data.keys()
    assert data["target"] == "demo" and data["releases"] == ["1.0", "1.1"]
    assert len(data["cells"]) == 6
    for cell in data["cells"]:
        assert {"patch", "release", "outcome", "absorbed_by", "verified"} <= cell.keys()


def test_a_computed_cell_is_reused_and_a_changed_patch_is_not(rel: Releases) -> None:
    first = rel.matrix(releases="v1.0..v1.2")
    assert (first.run.computed, first.run.reused) == (9, 0)
    again = rel.matrix(releases="v1.0..v1.3")
    assert (again.run.computed, again.run.reused) == (3, 9)
    patch = rel.root / "patchsets" / "demo" / "patches" / "bump.patch"
    patch.write_bytes(patch.read_bytes() + b"")  # same bytes: still reused
    other = rel.root / "patchsets" / "demo" / "patches" / "other.patch"
    other.write_bytes(b"A new description above the diff.\n\n" + other.read_bytes())
    changed = rel.matrix(releases="v1.0..v1.3")
    assert (changed.run.computed, changed.run.reused) == (4, 8)
    assert rows(changed) == rows(again)


def test_nothing_checked_out_and_nothing_left_but_the_store(rel: Releases) -> None:
    before = run_git(rel.upstream.path, "worktree", "list")
    rel.matrix(releases="v1.0..v1.4")
    assert run_git(rel.upstream.path, "worktree", "list") == before
    assert run_git(rel.upstream.path, "status", "--porcelain") == b""
    files = [p for p in Cache.current().root.rglob("*") if p.is_file()]
    assert [p.relative_to(Cache.current().root).as_posix() for p in files] == [
        "matrix/cells.sqlite"
    ]


def test_a_process_pool_gives_the_same_cells(rel: Releases) -> None:
    serial = rel.matrix(releases="v1.0..v1.4", executor=Serial(), store=_memory())
    pooled = rel.matrix(releases="v1.0..v1.4", executor=LocalPool(2), store=_memory())
    assert pooled.run.executor == "pool of 2"
    assert rows(pooled) == rows(serial)
    assert [c.detail for c in pooled.cells] == [c.detail for c in serial.cells]


def test_a_cell_shipped_to_a_worker_without_the_project_is_the_same(rel: Releases) -> None:
    import dataclasses

    from patchkit.engine.probe import chain_for
    from patchkit.matrix.cells import PatchFile, cell_key
    from patchkit.upstream.history import Point

    project = load_project(rel.root)
    entry = project.entry("demo")
    patches = project.listed("demo")
    chain = tuple(PatchFile.of(m) for m in chain_for(patches, "tail"))
    tags = {
        t: run_git(rel.upstream.path, "rev-parse", f"v{t}").decode().strip() for t in ("1.0", "1.4")
    }
    base, point = Point(tags["1.0"], tags["1.0"]), Point(tags["1.4"], tags["1.4"])
    job = CellJob(entry, base, point, chain, cell_key(entry, base, point, chain))
    here = compute_cell(job)
    moved = tuple(
        dataclasses.replace(
            p, meta=dataclasses.replace(p.meta, file=Path("/nonexistent") / p.meta.file.name)
        )
        for p in chain
    )
    away = compute_cell(dataclasses.replace(job, chain=moved))
    assert (here.outcome, here.detail) == (away.outcome, away.detail) and here.outcome == "conflict"


def test_verification_records_show_per_gpu_kind(rel: Releases) -> None:
    record = _record("bump", "1.0", gpu="NVIDIA H100 80GB HBM3", bench=[BENCH])
    (rel.root / "patchsets" / "demo" / "verification.json").write_text(json.dumps([record]))
    m = rel.matrix(releases="v1.0..v1.1")
    verified = m.cell("bump", "1.0").verified
    assert verified is not None
    ((kind, summary),) = verified.items()
    assert kind.startswith("NVIDIA H100") and summary["result"] == "passed, unproven"
    assert summary["stale"] is True
    assert [(b["case"], b["ratio"], b["slower"]) for b in summary["bench"]] == [("b16", 1.5, False)]
    assert m.cell("bump", "1.1").verified is None
    assert "H100 80GB HBM3 passed, unproven x1.50" in render_markdown(m)
    assert "bench decode b16: compared, x1.50 time" in render_html(m)


def test_a_carried_cell_whose_tests_fail_there_says_so(rel: Releases) -> None:
    """Where a run of the patch as it is now failed at a release, its cell is not just
    `carried`: `carried, tests fail` (a stale run, of an older patch, does not count)."""
    digest = hashlib.sha256((rel.root / "patchsets/demo/patches/bump.patch").read_bytes())
    failed = _record("bump", "1.2", gpu="", bench=[]) | {
        "result": "failed",
        "digest": digest.hexdigest(),
    }
    stale = _record("tail", "1.1", gpu="", bench=[]) | {"result": "failed"}
    (rel.root / "patchsets/demo/verification.json").write_text(json.dumps([failed, stale]))
    m = rel.matrix(releases="v1.0..v1.3")
    assert m.cell("bump", "1.2").shown == "carried, tests fail"
    assert m.cell("bump", "1.1").shown == "applied" and m.cell("tail", "1.1").shown == "applied"
    assert m.to_json()["cells"][2]["shown"] == "carried, tests fail"
    assert "carried, tests fail" in render_markdown(m)
    assert "carried, tests fail" in render_html(m)


def test_page_is_self_contained_with_cells_filters_and_details(rel: Releases) -> None:
    page = render_html(rel.matrix(releases="v1.0..v1.4"))
    assert "http://" not in page and "https://" not in page
    assert page.count("<td class='cell") == 15
    assert "class='f-set'" in page and "id='f-outcome-conflict'" in page
    assert "data-release='1.4' data-cell='9'" in page  # tail @ 1.4: its detail on demand
    assert "pkg/tail.py" in page


def test_page_escapes_patch_text_that_would_end_its_script_or_markup(rel: Releases) -> None:
    """`<!--<script>` or `</script>` in any text (a title, a conflict side) stays text: the
    page's JSON has no `<` at all, attributes and text are escaped (issue 24's case)."""
    import dataclasses
    import re

    evil = "x<!--<script>alert(1)</script>'\"&"
    m = rel.matrix(releases="v1.0..v1.4")
    rows = tuple(dataclasses.replace(r, title=evil, set=evil) for r in m.rows)
    cells = tuple(
        dataclasses.replace(
            c, detail={"message": evil, "details": [{"ours": evil, "theirs": evil}]}
        )
        for c in m.cells
    )
    page = render_html(dataclasses.replace(m, rows=rows, cells=cells))
    assert "<script>alert" not in page and "<!--" not in page
    data = re.search(
        r"<script type='application/json' id='matrix-cells'>(.*?)</script>", page, re.S
    )
    assert data is not None and "<" not in data.group(1) and ">" not in data.group(1)
    assert json.loads(data.group(1))["details"][0]["message"] == evil
    assert page.count("<script") == 2 and page.count("</script>") == 2


def test_page_keeps_each_distinct_detail_once_and_cuts_long_sides(rel: Releases) -> None:
    import dataclasses

    m = rel.matrix(releases="v1.0..v1.4")
    long = "\n".join(f"line {i}" for i in range(5000))
    same = {"message": "m", "details": [{"path": "p", "ours": long, "theirs": long}]}
    page = render_html(
        dataclasses.replace(m, cells=tuple(dataclasses.replace(c, detail=same) for c in m.cells))
    )
    assert page.count("line 39") == 2 and "line 40\\n" not in page  # ours and theirs, once
    assert "4960 more lines" in page and len(page) < 40_000


def test_markdown_table(rel: Releases) -> None:
    text = render_markdown(rel.matrix(releases="v1.0..v1.4"))
    assert "| 1.4 | ⬆️ upstreamed | ❌ conflict | 🔁 carried |" in text
    assert "| `bump` | demo | 1.3 | - | - |" in text


def test_cli_writes_each_format_and_never_imports_ray(rel: Releases, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    code = (
        "import sys\nfrom patchkit.cli import main\n"
        f"rc = main(['matrix', '--target', 'demo', '--project', {str(rel.root)!r}, "
        f"'--releases', 'v1.0..v1.2', '--out', {str(out)!r}])\n"
        "assert 'ray' not in sys.modules, 'ray imported'\nsys.exit(rc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["releases"] == ["1.0", "1.1", "1.2"]
    assert "9 cells computed" in done.stderr


def _memory() -> CellStore:
    from patchkit.matrix.store import MemoryStore

    return MemoryStore()


BENCH = {"bench": "decode", "case": "b16", "metric": "time", "status": "compared", "ratio": 1.5}


def _record(
    patch: str, version: str, *, gpu: str, bench: list[dict[str, object]]
) -> dict[str, object]:
    return {
        "patch": patch,
        "digest": "0" * 64,
        "target": "demo",
        "lock_commit": "0" * 40,
        "lock_version": version,
        "tree_commit": None,
        "result": "passed",
        "reason": "",
        "tests": [],
        "environment": {"python": "3.12", "platform": "linux", "gpu": gpu, "capability": "9.0"},
        "time": "2026-11-22T10:00:00Z",
        "duration_s": 1.0,
        "bench": bench,
    }


def test_values_round_trip() -> None:
    value = CellValue(Outcome.CONFLICT, "three-way", {"message": "m", "details": []}, 0.5)
    raw = json.loads(json.dumps(value.to_json()))
    assert raw["outcome"] == "conflict"  # the enum's value in the store, the enum read back
    back = CellValue.from_json(raw)
    assert back == value and back.outcome is Outcome.CONFLICT


def test_a_break_after_absorption_is_upstream_reworking_not_the_patch_breaking(
    tmp_path: Path,
) -> None:
    """Upstream took the change in 1.1 and rewrote that code in 1.3: the patch did not 'break in
    1.3', it was retired in 1.1; the summary names the rework apart."""
    meta = PatchMeta("p", "t", "w", "demo", PatchKind.DIFF, tmp_path, tmp_path, "s")
    labels = ["1.0", "1.1", "1.2", "1.3"]
    outcomes = dict(
        zip(
            [("p", lb) for lb in labels],
            [Outcome.APPLIED, Outcome.UPSTREAMED, Outcome.UPSTREAMED, Outcome.CONFLICT],
            strict=True,
        )
    )
    (row,) = assemble_rows([meta], labels, outcomes)
    assert (row.absorbed_by, row.broken_by, row.reworked_in) == ("1.1", None, "1.3")
    outcomes[("p", "1.0")] = Outcome.CONFLICT  # a break before absorption is still a break
    (row,) = assemble_rows([meta], labels, outcomes)
    assert (row.absorbed_by, row.broken_by, row.reworked_in) == ("1.1", "1.0", "1.3")


def test_the_markdown_names_an_upstream_rework_after_absorption(rel: Releases) -> None:
    m = rel.matrix(releases="v1.0..v1.4")
    rows_ = tuple(replace(r, reworked_in="1.4") if r.patch == "bump" else r for r in m.rows)
    text = render_markdown(replace(m, rows=rows_))
    assert "| 1.3 (upstream reworked the code in 1.4) | - |" in text
    assert "upstream reworked the code in 1.4" in render_html(replace(m, rows=rows_))
