"""What an export made: per patch its branch, commit, text and what was published."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from patchkit.export.prtext import PrText
from patchkit.export.upstream_test import UpstreamRun


class BranchState(str, enum.Enum):
    CREATED = "created"
    UPDATED = "updated"  # the patch, its text or the base changed since the last export
    UNCHANGED = "unchanged"  # the branch already pointed at the same commit


@dataclass(frozen=True)
class PatchExport:
    """One patch exported: its branch, commit and text, and what was published."""

    patch_id: str
    branch: str  # the branch prefix and the title's words: "fix/admit-sm12x-in-the-mxfp4"
    commit: str
    parent: str  # the base, or the last dependency's commit when stacked
    state: BranchState
    text: PrText
    files: tuple[str, ...]  # repository paths the commit changes
    out_dir: Path  # COMMIT_MSG, PR_TITLE, PR_BODY.md, <id>.patch, export.json
    stacked_on: tuple[str, ...] = ()  # dependencies carried first (it does not apply without)
    formatting: tuple[str, ...] = ()  # what the target's formatters did, or why they did not
    pushed_to: str | None = None  # the remote URL the branch was pushed to
    pr_url: str | None = None
    comment_for: str | None = None  # an open upstream PR for the same fix: COMMENT.md is for it
    commented: str | None = None  # --open: the PR COMMENT.md was posted on
    upstream_test: UpstreamRun | None = None  # the test the PR adds upstream, and its run


@dataclass(frozen=True)
class ExportReport:
    target: str
    base: str  # the commit every branch is based on
    exports: tuple[PatchExport, ...]
    left_out: tuple[str, ...] = ()  # "<id>: merged upstream in <PR>": not exported
    checked: str = ""  # what upstream's newest release was found to have already (--check-against)
    checkout: str = ""  # the repository holding the branches
    upstream_base: bool = True  # the base is upstream's own commit (False: a release's stand-in)
    stopped: tuple[str, ...] = ()  # "<id>: why its change or its test does not carry there"
    absorbed: tuple[str, ...] = ()  # "<id>: upstream already has it at ...: NOTE.md ... in DIR/"

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "base": self.base,
            "exports": [_json(e) for e in self.exports],
            "left_out": list(self.left_out),
            "checked": self.checked,
            "checkout": self.checkout,
            "upstream_base": self.upstream_base,
            "stopped": list(self.stopped),
            "absorbed": list(self.absorbed),
        }


def _json(export: PatchExport) -> dict[str, Any]:
    data = asdict(export)
    data["out_dir"] = str(export.out_dir)
    return data
