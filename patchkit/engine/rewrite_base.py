"""The base a rewrite patch subclasses, and the per-anchor report it produces.

A rewrite is a libcst ``CSTTransformer`` that names the file it changes (``path``) and its
anchors: qualified names (``"Class.method"``, ``"function"``, a module-level assigned name) with
the number of edit sites expected inside each. The base tracks the qualified scope, so a subclass
writes ordinary ``leave_*`` methods, tests ``self.current_anchor``, and at an edit site returns
``self.changed(new_node)`` or, where the change is already there, ``self.present(node)``.
Nothing here reads files, parses, or caches: that is ``patchkit.engine.rewrite``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import libcst as cst

from patchkit.model import Outcome

NodeT = TypeVar("NodeT", bound=cst.CSTNode)
T = TypeVar("T")

_SCOPES = (cst.ClassDef, cst.FunctionDef)
_ASSIGNS = (cst.Assign, cst.AnnAssign)


@dataclass(frozen=True)
class _Frame:
    node: cst.CSTNode  # the original node that opened this scope
    qualname: str  # "Class.method"
    is_function: bool


class Rewrite(cst.CSTTransformer):
    """Base of every rewrite. Subclasses set ``path`` and ``anchors``."""

    path: ClassVar[str]  # repository-relative path of the file it rewrites
    anchors: ClassVar[dict[str, int]]  # qualified name -> edit sites expected inside it

    def __init__(self) -> None:
        super().__init__()
        self._frames: list[_Frame] = []
        self.defined: Counter[str] = Counter()  # anchor -> definitions seen
        self.changed_sites: Counter[str] = Counter()
        self.present_sites: Counter[str] = Counter()
        self.stray_sites = 0  # edit sites reported outside every anchor (a bug in the rewrite)
        self.anchor_nodes: dict[str, cst.CSTNode] = {}  # first definition of each anchor
        self._prefixes = {
            a.rsplit(".", i)[0] for a in self.anchors for i in range(1, a.count(".") + 1)
        }

    # -- what a subclass reads -----------------------------------------------------------------
    @property
    def scope(self) -> str:
        """Qualified name of the innermost class, function or assigned name ("" at top)."""
        return self._frames[-1].qualname if self._frames else ""

    @property
    def current_anchor(self) -> str | None:
        """The innermost anchor enclosing the node being visited, if any."""
        for frame in reversed(self._frames):
            if frame.qualname in self.anchors:
                return frame.qualname
        return None

    @property
    def in_anchor(self) -> bool:
        return self.current_anchor is not None

    # -- what a subclass calls at an edit site -------------------------------------------------
    def changed(self, new_node: T) -> T:
        """Record an edit site changed here; return the replacement node."""
        self._count(self.changed_sites)
        return new_node

    def present(self, node: T) -> T:
        """Record an edit site whose change is already in the code; return it unchanged."""
        self._count(self.present_sites)
        return node

    def _count(self, counter: Counter[str]) -> None:
        anchor = self.current_anchor
        if anchor is None:
            self.stray_sites += 1
        else:
            counter[anchor] += 1

    # -- scope tracking ------------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        qualname = self._scope_name(node)
        if qualname is None:
            return super().on_visit(node)
        self._frames.append(_Frame(node, qualname, isinstance(node, cst.FunctionDef)))
        if qualname in self.anchors:
            self.defined[qualname] += 1
            self.anchor_nodes.setdefault(qualname, node)
        # Prune what cannot hold an anchor: visiting costs as much as parsing on large files.
        return super().on_visit(node) and (self.in_anchor or qualname in self._prefixes)

    def on_leave(
        self, original_node: NodeT, updated_node: NodeT
    ) -> NodeT | cst.RemovalSentinel | cst.FlattenSentinel[NodeT]:
        result = super().on_leave(original_node, updated_node)
        if self._frames and self._frames[-1].node is original_node:
            self._frames.pop()
        return result

    def _scope_name(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, _SCOPES):
            return self._qualify(node.name.value)
        if isinstance(node, _ASSIGNS) and not self._in_function():
            name = _assigned_name(node)
            return self._qualify(name) if name else None
        return None

    def _qualify(self, name: str) -> str:
        return f"{self.scope}.{name}" if self._frames else name

    def _in_function(self) -> bool:
        return any(frame.is_function for frame in self._frames)


def _assigned_name(node: cst.Assign | cst.AnnAssign) -> str | None:
    """The name a module- or class-level ``NAME = ...`` / ``NAME: T = ...`` binds."""
    if isinstance(node, cst.AnnAssign):
        target: cst.BaseExpression = node.target
    elif len(node.targets) == 1:
        target = node.targets[0].target
    else:
        return None
    return target.value if isinstance(target, cst.Name) else None


@dataclass(frozen=True)
class AnchorReport:
    """What one rewrite found at one anchor. ``message`` is patch- and file-agnostic."""

    rewrite: str  # class name
    anchor: str
    expected: int
    defined: int  # how many times the anchor is defined in the file
    changed: int  # edit sites changed
    present: int  # edit sites found already changed
    outcome: Outcome
    message: str
    code: str = ""  # the anchor's current source, for conflict reports (only when not ok)


def judge_anchor(
    rewrite: str, anchor: str, expected: int, counts: tuple[int, int, int]
) -> tuple[Outcome, str]:
    """Outcome and message for one anchor from (defined, changed, present)."""
    defined, changed, present = counts
    found = changed + present
    tally = f"found {found} (changed {changed}, already present {present})"
    if defined == 0:
        return Outcome.GONE, f"anchor {anchor} ({rewrite}) is not defined in the file any more"
    if defined > 1:
        return Outcome.AMBIGUOUS, f"anchor {anchor} ({rewrite}) is defined {defined} times"
    if found == 0:
        return (
            Outcome.CONFLICT,
            f"anchor {anchor} ({rewrite}): expected {expected} edit site(s), found none",
        )
    if found > expected:
        return (
            Outcome.AMBIGUOUS,
            f"anchor {anchor} ({rewrite}): expected {expected} edit site(s), {tally}",
        )
    if found < expected:
        return (
            Outcome.CONFLICT,
            f"anchor {anchor} ({rewrite}): expected {expected} edit site(s), {tally}",
        )
    if present == expected:
        return Outcome.UPSTREAMED, f"anchor {anchor} ({rewrite}): all {expected} already present"
    if changed == expected:
        return Outcome.APPLIED, f"anchor {anchor} ({rewrite}): changed {changed}"
    return Outcome.PARTLY_UPSTREAMED, f"anchor {anchor} ({rewrite}): {tally}"


_SEVERITY = (Outcome.FAILED, Outcome.AMBIGUOUS, Outcome.CONFLICT, Outcome.GONE)


def combine_outcomes(outcomes: list[Outcome]) -> Outcome:
    """Worst wins; applied and upstreamed mixed make partly-upstreamed."""
    for bad in _SEVERITY:
        if bad in outcomes:
            return bad
    kinds = set(outcomes)
    if kinds == {Outcome.UPSTREAMED}:
        return Outcome.UPSTREAMED
    if kinds == {Outcome.APPLIED}:
        return Outcome.APPLIED
    if not kinds:
        return Outcome.FAILED
    return Outcome.PARTLY_UPSTREAMED


def anchor_reports(rewrite: Rewrite) -> list[AnchorReport]:
    """Judge every anchor of a rewrite after it ran over a module."""
    name = type(rewrite).__name__
    reports = []
    for anchor, expected in type(rewrite).anchors.items():
        counts = (
            rewrite.defined[anchor],
            rewrite.changed_sites[anchor],
            rewrite.present_sites[anchor],
        )
        outcome, message = judge_anchor(name, anchor, expected, counts)
        code = ""
        node = rewrite.anchor_nodes.get(anchor)
        if node is not None and outcome in (Outcome.CONFLICT, Outcome.AMBIGUOUS):
            code = cst.Module(body=[]).code_for_node(node)
        reports.append(
            AnchorReport(
                name, anchor, expected, *counts, outcome=outcome, message=message, code=code
            )
        )
    return reports


@dataclass(frozen=True)
class FileReport:
    """What the rewrites of one patch did to one file. Patch-agnostic, so it can be cached."""

    path: str
    outcome: Outcome
    anchors: tuple[AnchorReport, ...] = ()
    output: bytes | None = None  # the new content, only when it differs from the input
    message: str = ""  # file-level reason (missing file, parse error, broken rewrite)
    cached: bool = False

    def messages(self) -> list[str]:
        """The file message and every anchor message that is not a plain success."""
        lines = [self.message] if self.message else []
        lines += [a.message for a in self.anchors if not a.outcome.ok]
        return lines or [a.message for a in self.anchors]


def precheck(rewrites: Sequence[type[Rewrite]], path: str, data: bytes | None) -> FileReport | None:
    """GONE without parsing when the file is missing or an anchor's name is not in its text."""
    if data is None:
        return FileReport(path, Outcome.GONE, message="the file does not exist")
    missing = [
        _gone(cls, anchor) for cls in rewrites for anchor in cls.anchors if not _names(data, anchor)
    ]
    if not missing:
        return None
    return FileReport(path, Outcome.GONE, anchors=tuple(missing))


def _names(data: bytes, anchor: str) -> bool:
    last = re.escape(anchor.rsplit(".", 1)[-1].encode())
    pattern = rb"\b(?:def|class)\s+" + last + rb"\b|^[ \t]*" + last + rb"[ \t]*[:=]"
    return re.search(pattern, data, re.MULTILINE) is not None


def _gone(cls: type[Rewrite], anchor: str) -> AnchorReport:
    expected = cls.anchors[anchor]
    outcome, message = judge_anchor(cls.__name__, anchor, expected, (0, 0, 0))
    return AnchorReport(cls.__name__, anchor, expected, 0, 0, 0, outcome, message)
