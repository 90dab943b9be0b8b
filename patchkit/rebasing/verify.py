"""A rebase's carried patches, verified on the new release before the lock moves.

The series as the rebase would publish it (refreshed diffs staged in a temporary directory, the
retired and pending left out) is applied to a fresh tree of the new release, and the tests of
the patches whose change moved are run there. The project is not touched: the lock moves only
when that passed (or the rebase was told ``--allow-pending``). The runs are recorded like any
other, with the new release's version, so ``status`` and ``matrix`` show them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchkit.model import Lock, LockEntry, PatchMeta, SourceKind
from patchkit.verification.run import Result, VerifyReport

# (lock, its target's entry, the staged series, the patches to test, a scratch directory,
# the interpreter): the series applied to a fresh tree of the release and those tests run there
FreshTests = Callable[
    [Lock, LockEntry, list[PatchMeta], Sequence[str], Path, str | None], VerifyReport
]


@dataclass(frozen=True)
class Proof:
    """What verifying the carried patches on the new release gave."""

    changed: tuple[str, ...]  # the patches whose tests were asked for
    report: VerifyReport | None = None  # None: nothing ran (see ``unverified``)
    unverified: str = ""  # why nothing ran although patches changed (a path source)

    @property
    def failed(self) -> bool:
        return self.report is not None and bool(self.report.having(Result.FAILED))

    def failures(self) -> list[str]:
        """One line per failed test case (or test, when it has no cases), its id whole."""
        if self.report is None:
            return []
        lines = []
        for verdict in self.report.having(Result.FAILED):
            for test in verdict.tests:
                cases = [c for c in test.cases if c.outcome in ("failed", "error")]
                if not cases and test.result is Result.FAILED:
                    lines.append(f"{verdict.patch_id}: {test.node} failed: {test.reason}")
                for case in cases:
                    why = case.message.strip().splitlines()[0] if case.message.strip() else ""
                    lines.append(f"{verdict.patch_id}: {case.node} {case.outcome}: {why}")
            if not verdict.tests:
                lines.append(f"{verdict.patch_id}: {verdict.reason}")
        return lines


def moved_lock(lock: Lock, target: str, version: str, commit: str, pins: dict[str, str]) -> Lock:
    """The lock as it will be once ``target`` moved (in memory; nothing written)."""
    entry = lock.targets[target]
    kept = {other: pins.get(other, was) for other, was in entry.pins.items()}
    moved = replace(entry, version=version, commit=commit, pins=kept)
    return replace(lock, targets={**lock.targets, target: moved})


def staged(
    series: Sequence[PatchMeta], refreshed: dict[Path, bytes], into: Path
) -> list[PatchMeta]:
    """The series with each refreshed patch file written under ``into`` and pointing there."""
    out = []
    for meta in series:
        content = refreshed.get(meta.file)
        if content is not None:
            path = into / meta.set_name / meta.file.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            meta = replace(meta, file=path)
        out.append(meta)
    return out


def verify_carried(
    *,
    lock: Lock,
    target: str,
    series: Sequence[PatchMeta],
    refreshed: dict[Path, bytes],
    changed: Sequence[str],
    python: str | None,
    tests: FreshTests,
) -> Proof:
    """Apply ``series`` (as the rebase would publish it) to a fresh tree of ``lock``'s
    ``target`` and run the tests of ``changed`` (``tests`` does both: the verbs' own apply and
    verify, handed in by the rebase verb)."""
    entry = lock.targets[target]
    if not changed:
        return Proof(())
    if entry.source.kind is SourceKind.PATH:
        return Proof(tuple(changed), unverified=_why_not(entry, series))
    with tempfile.TemporaryDirectory(prefix="patchkit-rebase-verify-") as tmp:
        patches = staged(series, refreshed, Path(tmp) / "patches")
        report = tests(lock, entry, patches, changed, Path(tmp), python)
    return Proof(tuple(changed), report)


def _why_not(entry: LockEntry, series: Sequence[PatchMeta]) -> str:
    includes = "".join(f" --include {p.id}" for p in series if p.optional)
    return (
        f"{entry.name}'s source is a local path, of which patchkit makes no fresh tree: check "
        f"out {entry.version} ({entry.commit[:12]}) there, then `patchkit apply --target "
        f"{entry.name}{includes} --verify`"
    )
