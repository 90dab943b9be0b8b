"""The test a PR adds to upstream's own suite (``[export.test]`` of the patch's metadata): its
diff is applied after the patch, in the same exported commit; it is run on the exported tree
where it can be, and the PR text shows the command and the result.

Results are kept in ``patchsets/<set>/upstream-tests/results.json``, one entry per run, keyed
by the exported commit's **tree** id: the tree is the same on every machine (the export is
deterministic) and does not change with the identity that signs the commit, so a result
recorded on a GPU machine (``scripts/upstream_tests.py``) is found by a later export anywhere.
A GPU test with no recorded result is reported as not run."""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from patchkit.engine.diff.make import FileDelta
from patchkit.model import PatchKind, PatchMeta, UpstreamTest
from patchkit.verification.env import LocalRunner, TestJob, parse_junit, probe_environment

RESULTS = "upstream-tests/results.json"
_MISSING = re.compile(r"No module named '([\w.]+)'")


@dataclass(frozen=True)
class UpstreamRun:
    """One run of the upstream test on an exported tree."""

    command: str  # "python -m pytest tests/x.py -k y", run at the tree root
    result: str  # "passed", "failed", "not run"
    detail: str  # "72 passed" | "needs a GPU" | "No module named 'torch' here"
    where: str = ""  # "NVIDIA H100 80GB HBM3 (sm_90), python 3.12.3, cuda 13.0, torch 2.11.0"
    time: str = ""  # ISO 8601, UTC
    tree: str = ""  # the exported tree it ran on
    unpatched: str = ""  # its result on the same tree without the change: "failed (2 failed)"

    @property
    def proves_nothing(self) -> bool:
        """It passed without the change too: it does not show the fix."""
        return self.unpatched.startswith("passed")

    @property
    def proven(self) -> bool:
        return self.result == "passed" and self.unpatched.startswith("failed")


def command(test: UpstreamTest) -> str:
    extra = ["--noconftest"] if test.noconftest else []
    return shlex.join(["python", "-m", "pytest", *extra, *test.run])


def test_files(test: UpstreamTest) -> tuple[str, ...]:
    """The upstream files the test's diff touches."""
    text = test.file.read_text(errors="replace")
    return tuple(dict.fromkeys(re.findall(r"^\+\+\+ b/(\S+)", text, re.MULTILINE)))


def changed_files(test: UpstreamTest) -> tuple[str, ...]:
    """The existing upstream files the test's diff changes (not those it creates)."""
    text = test.file.read_text(errors="replace")
    pairs = re.findall(r"^--- (\S+)[^\n]*\n\+\+\+ b/(\S+)", text, re.MULTILINE)
    return tuple(dict.fromkeys(new for old, new in pairs if old != "/dev/null"))


def test_patch(meta: PatchMeta) -> PatchMeta | None:
    """The upstream test as a patch of its own, applied after ``meta``."""
    test = meta.export.test
    if test is None:
        return None
    return replace(
        meta,
        id=f"{meta.id}.upstream-test",
        kind=PatchKind.DIFF,
        file=test.file,
        requires=(),
        tests=(),
        benches=(),
        files=(),
    )


def merged(first: list[FileDelta], then: list[FileDelta]) -> list[FileDelta]:
    """The deltas of ``first`` followed by ``then`` (read after ``first``), one per path."""
    by_path = {d.path: d for d in first}
    for d in then:
        earlier = by_path.get(d.path)
        by_path[d.path] = (
            replace(d, before=earlier.before, before_mode=earlier.before_mode) if earlier else d
        )
    return list(by_path.values())


# -- results ---------------------------------------------------------------------------------------
def _results_file(meta: PatchMeta) -> Path:
    return meta.meta_file.parent.parent / RESULTS


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [r for r in raw if isinstance(r, dict)] if isinstance(raw, list) else []


def recorded(meta: PatchMeta, tree: str) -> UpstreamRun | None:
    """The latest recorded run of ``meta``'s upstream test on ``tree``, if any."""
    runs = [
        r for r in _load(_results_file(meta)) if r.get("patch") == meta.id and r.get("tree") == tree
    ]
    if not runs:
        return None
    last = max(runs, key=lambda r: str(r.get("time", "")))
    fields = {k: str(last.get(k, "")) for k in UpstreamRun.__dataclass_fields__}
    return UpstreamRun(**fields)


def record(meta: PatchMeta, run: UpstreamRun) -> Path:
    """Add ``run`` to the set's results file (kept sorted, so re-recording is stable)."""
    path = _results_file(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    runs = [*_load(path), {"patch": meta.id, **asdict(run)}]
    runs.sort(key=lambda r: (str(r.get("patch")), str(r.get("time")), str(r.get("tree"))))
    path.write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")
    return path


# -- running ---------------------------------------------------------------------------------------
def run_in(
    tree_dir: Path, meta: PatchMeta, tree: str, *, python: str = sys.executable
) -> UpstreamRun:
    """Run ``meta``'s upstream test in ``tree_dir`` (a checkout of the exported tree ``tree``)."""
    test = meta.export.test
    assert test is not None
    job = TestJob(
        patch_id=meta.id,
        nodes=test.run,
        rootdir=tree_dir,
        python=python,
        pythonpath=(tree_dir,),
        noconftest=test.noconftest,
        gpu=test.gpu,
        min_capability=test.min_capability,
        timeout_s=900.0,
    )
    env = probe_environment(python)
    result = LocalRunner().run(job)
    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    outcome, detail = _outcome(result.returncode, result.junit_xml, result.output, result.error)
    return UpstreamRun(command(test), outcome, detail, env.describe(), now, tree)


def _outcome(code: int, junit: str | None, output: str, error: str | None) -> tuple[str, str]:
    if error:
        return "not run", error
    cases = parse_junit(junit) if junit else []
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
    text = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    missing = _MISSING.search(output)
    if missing and not counts.get("passed") and not counts.get("failed"):
        return "not run", f"No module named '{missing.group(1)}' here"
    if code == 0 and counts.get("passed"):
        return "passed", text
    if code == 5 or not cases:
        return "not run", "no test collected" if code == 5 else f"pytest exit code {code}"
    if code == 0 and not counts.get("failed") and not counts.get("error"):
        return "not run", f"{text} (nothing ran here)"  # every case skipped (a GPU it lacks)
    return "failed", text


# -- the PR text -----------------------------------------------------------------------------------
def not_run(meta: PatchMeta, why: str) -> UpstreamRun:
    test = meta.export.test
    assert test is not None
    return UpstreamRun(command(test), "not run", why)


def not_added(meta: PatchMeta, why: str) -> UpstreamRun:
    """The test could not be added to this branch (its files are not in the base)."""
    test = meta.export.test
    assert test is not None
    return UpstreamRun(command(test), "not added", why)


def section(meta: PatchMeta, run: UpstreamRun | None) -> str:
    """Markdown: the result of the test this PR adds, on this branch (its command is in the
    test plan)."""
    test = meta.export.test
    if test is None or run is None:
        return ""
    files = ", ".join(f"`{f}`" for f in test_files(test))
    said = f"The test this PR adds ({files}), `{run.command}`,"
    if run.proves_nothing:
        return ""  # passes without the change: not named as the fix's test
    if run.result == "not added":
        return f"The test for this change ({files}) is not on this branch: {run.detail}."
    if run.result == "not run":
        return f"{said} has not been run on this branch: {run.detail}."
    ran = f"{said} ran on this branch on {run.where} ({run.time[:10]}): **{run.result}** ({run.detail})"
    if run.proven:
        return f"{ran}; on the same tree without this change it **failed** ({run.unpatched[8:-1]})."
    return f"{ran}; it has not been run without this change." if run.unpatched == "" else f"{ran}."
