"""Helpers for testing rewrites with inline before/after code (LibCST ``assertCodemod`` style)."""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Sequence

from patchkit.engine.rewrite import Rewrite
from patchkit.engine.rewrite.file import rewrite_source
from patchkit.engine.rewrite.report import FileReport
from patchkit.outcome import Outcome


def run_rewrite(
    rewrite: type[Rewrite] | Sequence[type[Rewrite]], code: str, *, dedent: bool = True
) -> FileReport:
    """Run rewrite class(es) over inline code as if it were the file they name. No cache."""
    classes = [rewrite] if isinstance(rewrite, type) else list(rewrite)
    source = textwrap.dedent(code) if dedent else code
    return rewrite_source(classes, classes[0].path, source.encode())


def assert_rewrite(
    rewrite: type[Rewrite] | Sequence[type[Rewrite]],
    before: str,
    after: str,
    *,
    outcome: Outcome = Outcome.APPLIED,
    dedent: bool = True,
) -> FileReport:
    """Assert the rewrite turns ``before`` into ``after`` with ``outcome``.

    ``after`` equal to ``before`` asserts no change (use ``outcome=Outcome.UPSTREAMED``, GONE,
    CONFLICT ...). The engine itself has already checked that the output parses and that a
    second run is a no-op.
    """
    source = textwrap.dedent(before) if dedent else before
    report = run_rewrite(rewrite, source, dedent=False)
    if report.outcome is not outcome:
        raise AssertionError(
            f"expected {outcome.value}, got {report.outcome.value}:\n"
            + "\n".join(report.messages())
        )
    want = textwrap.dedent(after) if dedent else after
    got = report.output.decode() if report.output is not None else source
    if got != want:
        diff = difflib.unified_diff(
            want.splitlines(keepends=True), got.splitlines(keepends=True), "expected", "got"
        )
        raise AssertionError("rewrite output differs:\n" + "".join(diff))
    return report
