"""Rewriting one file: parse its bytes with libcst once, run the rewrites that take it in
order, and check the result (it parses, a second run changes nothing and finds every site
present) before printing it once. No cache and no judging here, but :func:`rewrite_source`
judges a single file for tests and tools.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from patchkit.engine.diff import resultcheck
from patchkit.engine.rewrite.base import Rewrite
from patchkit.engine.rewrite.load import describe
from patchkit.engine.rewrite.outcome import judge
from patchkit.engine.rewrite.report import (
    STRUCTURE,
    FileReport,
    FileRun,
    Site,
    Tally,
    run_outcome,
)
from patchkit.outcome import Outcome


class _RewriteBroke(Exception):
    """Internal: a rewrite misbehaved; the message is the FAILED reason."""


def rewrite_file(rewrites: Sequence[type[Rewrite]], path: str, data: bytes) -> FileRun:
    """Run the rewrites over one file's bytes, in order. Never raises. No cache, no judging."""
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return FileRun(path, failure=f"libcst cannot parse it: {exc.message}")
    except Exception as exc:  # an undecodable file, say
        return FileRun(path, failure=f"cannot parse it: {describe(exc)}")
    try:
        return _rewrite_module(rewrites, path, data, module)
    except _RewriteBroke as exc:
        return FileRun(path, failure=str(exc))
    except Exception as exc:  # a tree that cannot be printed, say
        return FileRun(path, failure=f"rewriting failed: {describe(exc)}")


def _rewrite_module(
    rewrites: Sequence[type[Rewrite]], path: str, data: bytes, module: cst.Module
) -> FileRun:
    updated, tallies = _run_pass(rewrites, path, module)
    changed = [t for t in tallies if any(not s.present for s in t.sites)]
    if not changed:
        if not _same(updated, module, data):
            raise _RewriteBroke("no site was reported changed, yet the rewrite changed the code")
        return FileRun(path, tuple(tallies))
    output = updated.bytes  # the one print
    where = "anchor(s) " + ", ".join(dict.fromkeys(t.anchor for t in changed))
    if output == data:
        raise _RewriteBroke(
            f"edit sites were reported changed at {where}, yet the code is the same"
        )
    _check_parses(output, where)
    _check_idempotent(rewrites, path, updated, output, tallies)
    why = resultcheck.check(path, data, output)
    if why is not None:
        raise _RewriteBroke(f"{STRUCTURE}{why} (at {where})")
    return FileRun(path, tuple(tallies), output)


def _same(new: cst.Module, old: cst.Module, old_code: bytes) -> bool:
    """The trees print the same code: compared as trees first (the parts a rewrite did not
    visit are shared objects, so this costs next to nothing), printed only when they differ."""
    return new.deep_equals(old) or new.bytes == old_code


def _run_pass(
    rewrites: Sequence[type[Rewrite]], path: str, module: cst.Module
) -> tuple[cst.Module, list[Tally]]:
    tallies: list[Tally] = []
    for cls in rewrites:
        rewrite = cls()
        try:
            module = module.visit(rewrite)
        except Exception as exc:
            anchor = rewrite.current_anchor or "(outside any anchor)"
            raise _RewriteBroke(
                f"rewrite {cls.__name__} raised at anchor {anchor}: {describe(exc)}"
            ) from exc
        if rewrite.stray_sites:
            raise _RewriteBroke(
                f"rewrite {cls.__name__} reported {rewrite.stray_sites} edit site(s) outside "
                f"its anchors {sorted(cls.anchors)}"
            )
        tallies += [_tally(rewrite, path, anchor) for anchor in cls.anchors]
    return module, tallies


def _tally(rewrite: Rewrite, path: str, anchor: str) -> Tally:
    sites = tuple(Site(path, m.qualname, m.present) for m in rewrite.marks if m.anchor == anchor)
    node = rewrite.anchor_nodes.get(anchor)
    code = cst.Module(body=[]).code_for_node(node) if node is not None else ""
    definitions = tuple(rewrite.definitions.get(anchor, ()))
    return Tally(
        path, type(rewrite).__name__, anchor, rewrite.defined[anchor], sites, definitions, code
    )


def _check_parses(output: bytes, where: str) -> None:
    try:
        ast.parse(output)
    except SyntaxError as exc:
        raise _RewriteBroke(
            f"the code rewritten at {where} does not parse: line {exc.lineno}: {exc.msg}"
        ) from exc


def _check_idempotent(
    rewrites: Sequence[type[Rewrite]],
    path: str,
    updated: cst.Module,
    output: bytes,
    first: list[Tally],
) -> None:
    """A second run over the rewritten tree as libcst holds it (never parsed again) must find
    every site present and change nothing."""
    again, tallies = _run_pass(rewrites, path, updated)
    for before, after in zip(first, tallies, strict=True):
        changed = sum(not s.present for s in after.sites)
        present = len(after.sites) - changed
        if changed or present != len(before.sites):
            raise _RewriteBroke(
                f"not idempotent: on its own output, anchor {after.anchor} ({after.rewrite}) "
                f"reports changed {changed}, present {present}, "
                f"expected {len(before.sites)} present"
            )
    if not _same(again, updated, output):
        raise _RewriteBroke("not idempotent: a second run on its own output changed it again")


def rewrite_source(rewrites: Sequence[type[Rewrite]], path: str, data: bytes | None) -> FileReport:
    """Run the rewrites over ``data`` as if ``path`` were their only file; judge. No cache."""
    if data is None:
        return FileReport(path, Outcome.GONE, message="the file does not exist")
    admitted = all(cls.selector().admits(data) for cls in rewrites)
    run = rewrite_file(rewrites, path, data) if admitted else FileRun(path)
    if run.failure:
        return FileReport(path, run_outcome(run), message=run.failure)
    anchors = judge([cls.selector() for cls in rewrites], [run])
    outcome = Outcome.worst([a.outcome for a in anchors])
    output = run.output if outcome in (Outcome.APPLIED, Outcome.PARTLY_UPSTREAMED) else None
    return FileReport(path, outcome, tuple(anchors), output)
