"""The test a PR adds to upstream's own suite (``[export.test]`` of the patch's metadata): its
diff is applied after the patch, in the same exported commit; it is run on the upstream tree
without the change and with it (it must fail without and pass with), and the PR text shows the
command and both results.

Runs are kept in ``patchsets/<set>/upstream-tests/results.json``, one entry per run, keyed by
the **tree** of the upstream commit it ran on (the same content on every machine, whatever
commit stands for it) and by the digests of the patch and of its upstream test: a run recorded
on a GPU machine (``scripts/upstream_tests.py prove``) is found by a later export anywhere,
and a changed patch or test is never described by an older run. A GPU test with no recorded
run is reported as not run."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from patchkit.engine.diff.make import FileDelta
from patchkit.errors import ConfigError
from patchkit.model import PatchKind, PatchMeta, UpstreamTest
from patchkit.project.sets import patch_digest
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
    tree: str = ""  # the tree it ran on (the change and the test on the base)
    unpatched: str = ""  # its result on the same base without the change: "failed (2 failed)"
    base_tree: str = ""  # the tree of the upstream commit both runs started from
    upstream: str = ""  # that upstream commit ("" when not known)
    patch_digest: str = ""  # of the patch file the change came from
    tests_digest: str = ""  # of the test's diff and how it is run (:func:`digest_of_test`)

    @property
    def proves_nothing(self) -> bool:
        """It passed without the change too: it does not show the fix."""
        return self.unpatched.startswith("passed")

    @property
    def ran_both(self) -> bool:
        """It ran (passed or failed) with the change and without it."""
        ran = ("passed", "failed")
        return self.result in ran and self.unpatched.startswith(ran)

    @property
    def proven(self) -> bool:
        return self.result == "passed" and self.unpatched.startswith("failed")


def command(test: UpstreamTest) -> str:
    extra = ["--noconftest"] if test.noconftest else []
    return shlex.join(["python", "-m", "pytest", *extra, *test.run])


def digest_of_test(test: UpstreamTest) -> str:
    """The sha256 of the test's diff and of how it is run: a changed test is run again."""
    digest = hashlib.sha256(test.file.read_bytes())
    how = [*test.run, str(test.gpu), str(test.min_capability), str(test.noconftest)]
    digest.update("\0".join(how).encode())
    return digest.hexdigest()


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


def recorded(meta: PatchMeta, base_tree: str) -> UpstreamRun | None:
    """The latest recorded run of ``meta``'s upstream test from ``base_tree`` (both halves),
    made with the patch and the test as they are now."""
    runs = [r for r in same_change(meta) if r.base_tree == base_tree]
    return max(runs, key=lambda r: r.time) if runs else None


def same_change(meta: PatchMeta) -> list[UpstreamRun]:
    """Every recorded run of ``meta``'s upstream test with the patch and the test as they are
    now that ran with and without the change (older records, keyed otherwise, and runs that
    could not run never match: they say nothing about the fix)."""
    test = meta.export.test
    if test is None:
        return []
    keys = {"patch_digest": patch_digest(meta), "tests_digest": digest_of_test(test)}
    found = []
    for raw in _load(_results_file(meta)):
        if raw.get("patch") != meta.id or any(raw.get(k) != v for k, v in keys.items()):
            continue
        run = UpstreamRun(**{k: str(raw.get(k, "")) for k in UpstreamRun.__dataclass_fields__})
        if run.ran_both and run.base_tree:
            found.append(run)
    return found


_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def run_from_json(raw: object, *, where: str) -> tuple[str, UpstreamRun]:
    """A run as ``scripts/upstream_tests.py prove`` wrote it (hostile data: every field a
    string, the trees and digests hex, both halves there), and its patch id."""
    if not isinstance(raw, dict) or not isinstance(raw.get("patch"), str):
        raise ConfigError(f'{where}: a run must be an object with a "patch" id')
    fields = {k: raw.get(k, "") for k in UpstreamRun.__dataclass_fields__}
    bad = sorted(k for k, v in fields.items() if not isinstance(v, str))
    keys = ("base_tree", "patch_digest", "tests_digest")
    bad += [k for k in keys if not _HEX.fullmatch(str(fields[k]))]
    bad += [k for k in ("result", "unpatched", "where") if not fields[k]]
    if bad:
        raise ConfigError(f"{where}: the run of {raw['patch']} has bad or missing {', '.join(bad)}")
    return raw["patch"], UpstreamRun(**{k: str(v) for k, v in fields.items()})


def record(meta: PatchMeta, run: UpstreamRun) -> Path:
    """Add ``run`` to the set's results file (kept sorted, so re-recording is stable)."""
    path = _results_file(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    runs = [*_load(path), {"patch": meta.id, **asdict(run)}]
    runs.sort(key=lambda r: (str(r.get("patch")), str(r.get("time")), str(r.get("base_tree"))))
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


def section(
    meta: PatchMeta,
    run: UpstreamRun | None,
    elsewhere: UpstreamRun | None = None,
    *,
    base: str = "",
) -> str:
    """Markdown: the test this PR adds, where it reproduced the bug (failed without the change)
    and where the fix passed it, on which device and versions; or why it has not run. Its
    command is in the test plan. ``elsewhere``: a run from another upstream commit, said as
    such when this branch's base has none. ``base``: how the text names the branch's base, said
    for a run that names no upstream commit (a source release's stand-in)."""
    test = meta.export.test
    if test is None or run is None:
        return ""
    files = ", ".join(f"`{f}`" for f in test_files(test))
    if run.result == "not added":
        return f"The test for this change ({files}) is not on this branch: {run.detail}."
    if run.result == "not run":
        said = f"The test this PR adds ({files}) has not been run from this branch's base: {run.detail}."
        return f"{said} {_both(elsewhere, 'another ')}" if elsewhere else said
    return f"The test this PR adds ({files}): {_both(run, '', base)}"


def _both(run: UpstreamRun, other: str, base: str = "") -> str:
    """ "On upstream commit X: without this change it failed (...); with it, passed (...). Both
    on <device and versions> (date)." """
    if run.upstream:
        where = f"On {other}upstream commit {run.upstream[:12]}"
    else:
        where = f"On {base}" if base else ("On another commit" if other else "On its base")
    unpatched = run.unpatched.partition(" (")
    without = (
        f"**{unpatched[0]}** ({unpatched[2].rstrip(')')})"
        if unpatched[2]
        else f"**{run.unpatched}**"
    )
    return (
        f"{where}, without this change it {without}; with it, it **{run.result}** "
        f"({run.detail}). Both runs on {run.where} ({run.time[:10]})."
    )
