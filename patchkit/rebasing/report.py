"""A rebase's report: its values (:class:`RebaseReport`, a :class:`PatchRebase` per patch) and,
when it stopped, ``conflicts.md`` for people (per patch what stopped it, both sides of each
conflict, and what to do, which depends on what the patch is) and ``conflicts.json`` for
tools."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patchkit.outcome import ConflictDetail, Outcome, Placement

if TYPE_CHECKING:
    from patchkit.rebasing.verify import Proof


@dataclass(frozen=True)
class PatchRebase:
    """What a rebase did with one patch."""

    id: str
    outcome: Outcome
    step: str  # a Step value, or "manual"
    absorbed_by: str | None = None  # release/commit where upstream first had the change
    broken_by: str | None = None  # release/commit where the patch first stopped applying
    probes: int = 0  # apply attempts bisection made for this patch
    refreshed: bool = False  # its patch file is rewritten
    details: tuple[ConflictDetail, ...] = ()
    message: str = ""
    placements: tuple[Placement, ...] = ()  # per hunk of a diff: where it went, by which rule
    kind: str = "diff"  # a PatchKind value: what a person changes to fix it
    patch_file: str = ""  # its patch file (.patch or .py), relative to the project
    absorbed: bool = False  # upstream absorbed the change, then reworked that code: retire it

    @property
    def shown(self) -> str:
        """The outcome as people read it: a patch upstream absorbed and later reworked is
        ``absorbed``, never a conflict to fix."""
        return "absorbed" if self.absorbed else self.outcome.value


@dataclass(frozen=True)
class RebaseReport:
    target: str
    from_version: str
    onto: str
    commit: str  # the upstream commit the lock moves to
    patches: tuple[PatchRebase, ...]
    lock_moved: bool
    stopped: bool
    report: Path | None = None  # conflicts.md, when stopped
    worktree: Path | None = None  # the tree left for a person, when stopped
    points: int = 0  # points of history bisection ran the series at (releases fetched)
    proof: Proof | None = None  # the carried patches verified on the new release, when asked

    @property
    def verify_failed(self) -> bool:
        return self.proof is not None and self.proof.failed

    @property
    def probes(self) -> int:
        return sum(p.probes for p in self.patches)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "from": self.from_version,
            "onto": self.onto,
            "patches": [
                {
                    "id": p.id,
                    "outcome": p.shown,
                    "engine_outcome": p.outcome.value,
                    "kind": p.kind,
                    "step": p.step,
                    "absorbed_by": p.absorbed_by,
                    "broken_by": p.broken_by,
                }
                for p in self.patches
            ],
            "commit": self.commit,
            "lock_moved": self.lock_moved,
            "stopped": self.stopped,
            "report": str(self.report) if self.report else None,
            "bisect": {"points": self.points, "attempts": self.probes},
            "verification": None
            if self.proof is None
            else {
                "patches": list(self.proof.changed),
                "failed": self.proof.failures(),
                "unverified": self.proof.unverified or None,
            },
        }


REPORT_MD = "conflicts.md"
REPORT_JSON = "conflicts.json"


def write_report(directory: Path, report: RebaseReport) -> Path:
    """Write ``conflicts.md`` and ``conflicts.json``; the Markdown path is returned."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / REPORT_JSON).write_text(json.dumps(report_json(report), indent=2) + "\n")
    md = directory / REPORT_MD
    md.write_text(report_markdown(report))
    return md


def report_json(report: RebaseReport) -> dict[str, Any]:
    data = report.to_json()
    data["worktree"] = str(report.worktree) if report.worktree else None
    for entry, patch in zip(data["patches"], report.patches, strict=True):
        entry["conflicts"] = [
            {"file": d.path, "hunk": d.hunk, "reason": d.reason, "ours": d.ours, "theirs": d.theirs}
            for d in patch.details
        ]
        entry["message"] = patch.message
    return data


def report_markdown(report: RebaseReport) -> str:
    lines = [
        f"# Rebase of {report.target} {report.from_version} onto {report.onto}: stopped",
        "",
        f"Worktree with the stopped patches' files: `{report.worktree}`",
        "",
        "| patch | outcome | step | broken by | absorbed by |",
        "|---|---|---|---|---|",
    ]
    for p in report.patches:
        lines.append(
            f"| {p.id} | {p.shown} | {p.step} | {p.broken_by or ''} | {p.absorbed_by or ''} |"
        )
    for p in report.patches:
        if not p.outcome.ok:
            lines += _patch_section(p)
    if report.verify_failed and report.proof is not None:
        lines += ["", f"## Tests that fail on {report.onto}", ""]
        lines += [f"- `{line}`" for line in report.proof.failures()]
    lines += ["", "## What to do", "", *next_steps(report)]
    return "\n".join(lines) + "\n"


def _patch_section(patch: PatchRebase) -> list[str]:
    broken = f" (first at {patch.broken_by})" if patch.broken_by else ""
    lines = ["", f"## {patch.id}: {patch.shown}{broken}", ""]
    if patch.message:
        lines += [patch.message, ""]
    for d in patch.details:
        lines += [f"### `{d.path}` {d.hunk}".rstrip(), "", f"Reason: {d.reason}", ""]
        if not d.theirs:  # a rewrite that found no site: upstream's whole code is no help
            lines += [f"(upstream's code is in the worktree: `{d.path}`)", ""]
            continue
        lines += ["Upstream now (ours):", "", *_fenced(d.ours), ""]
        lines += ["The patch wants (theirs):", "", *_fenced(d.theirs), ""]
    return lines


def _fenced(text: str) -> list[str]:
    if not text:
        return ["(nothing)"]
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text.rstrip("\n"), fence]


def stop_hint(report: RebaseReport, patch: PatchRebase) -> str:
    """What a person does about one stopped patch: it depends on what it is."""
    again = f"`patchkit rebase --target {report.target} --continue`"
    if patch.absorbed:
        return (
            f"`patchkit retire {patch.id} --merged-in {patch.absorbed_by}` if {report.onto} still "
            f"has the fix (else fix the patch), then {again}"
        )
    if patch.kind == "rewrite":
        return (
            f"change the rewrite `{patch.patch_file}` (its anchors, search globs, the edit it "
            f"makes) or its metadata (`files`) so it finds its code in {report.onto} (the "
            f"worktree `{report.worktree}` has those files), then {again}: it is re-run"
        )
    return (
        f"edit its files in `{report.worktree}` (remove every conflict marker), then {again}: "
        "its new diff is recorded from there"
    )


def tests_hint(report: RebaseReport) -> str:
    return (
        f"the lock stays at {report.from_version}: fix the patches whose tests fail (or their "
        f"tests), then `patchkit rebase --target {report.target} --continue`; "
        "`--continue --allow-pending` moves the lock anyway"
    )


def next_steps(report: RebaseReport) -> list[str]:
    stopped = [p for p in report.patches if not p.outcome.carried]
    steps = [f"- `{p.id}` ({p.shown}): {stop_hint(report, p)}." for p in stopped]
    if report.verify_failed:
        steps.append(f"- {tests_hint(report)}.")
    return [
        *steps,
        f"- Or `patchkit rebase --target {report.target} --abort`: nothing in the project "
        "changed. `--allow-pending` moves the lock anyway and marks the rest pending.",
    ]
