"""The base a rewrite patch subclasses: scope tracking and edit-site bookkeeping.

A rewrite is a libcst ``CSTTransformer`` that names the file it was made on (``path``), may
widen its search to other files (``search`` globs, ``needles`` regexes: see
``patchkit.engine.rewrite.select``), and declares its anchors: qualified-name patterns
(``"Class.method"``, ``"*Experts._supports_current_device"``, a module-level assigned name) with
the number of edit sites expected under them, an int or a ``(low, high)`` range. The base
tracks the qualified scope, so a subclass writes ordinary ``leave_*`` methods, tests
``self.current_anchor`` (the anchor pattern enclosing the node) and at an edit site returns
``self.changed(new_node)`` or, where the change is already there, ``self.present(node)``.
Nothing here reads files, parses, or caches: that is ``patchkit.engine.rewrite.run``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import libcst as cst

from patchkit.engine.rewrite.select import AnchorSpec, Selector, from_counts, matches_any

NodeT = TypeVar("NodeT", bound=cst.CSTNode)
T = TypeVar("T")

_SCOPES = (cst.ClassDef, cst.FunctionDef)
_ASSIGNS = (cst.Assign, cst.AnnAssign)


@dataclass(frozen=True)
class _Frame:
    node: cst.CSTNode  # the original node that opened this scope
    qualname: str  # "Class.method"
    is_function: bool
    anchor: str | None  # the anchor pattern this scope matches, if any


@dataclass(frozen=True)
class SiteMark:
    """One edit site as the rewrite reported it, before it is tied to a file."""

    anchor: str  # the pattern
    qualname: str  # the definition matching it, innermost
    present: bool  # already there (True) or changed now (False)


class Rewrite(cst.CSTTransformer):
    """Base of every rewrite. Subclasses set ``path`` and ``anchors``; ``search`` and ``needles``
    let it find its code in other files."""

    path: ClassVar[str]  # repository-relative path of the file it was made on
    anchors: ClassVar[dict[str, int | tuple[int, int]]]  # pattern -> edit sites expected
    search: ClassVar[tuple[str, ...]] = ()  # globs of files the code may have moved to
    needles: ClassVar[tuple[str, ...]] = ()  # regexes a candidate file's text must contain

    def __init__(self) -> None:
        super().__init__()
        self._specs = from_counts(type(self).anchors)
        self._frames: list[_Frame] = []
        self.defined: Counter[str] = Counter()  # anchor -> definitions seen
        self.definitions: dict[str, list[str]] = {}  # anchor -> qualnames that matched it
        self.marks: list[SiteMark] = []
        self.stray_sites = 0  # edit sites reported outside every anchor (a bug in the rewrite)
        self.anchor_nodes: dict[str, cst.CSTNode] = {}  # first definition of each anchor
        exact = all(s.exact for s in self._specs)
        self._prefixes: set[str] | None = (
            {a.rsplit(".", i)[0] for a in self.anchors for i in range(1, a.count(".") + 1)}
            if exact
            else None  # a wildcard may match anywhere: nothing is pruned
        )

    @classmethod
    def selector(cls) -> Selector:
        return Selector(
            cls.__name__, cls.path, tuple(cls.search), tuple(cls.needles), from_counts(cls.anchors)
        )

    @classmethod
    def specs(cls) -> tuple[AnchorSpec, ...]:
        return from_counts(cls.anchors)

    # -- what a subclass reads -----------------------------------------------------------------
    @property
    def scope(self) -> str:
        """Qualified name of the innermost class, function or assigned name ("" at top)."""
        return self._frames[-1].qualname if self._frames else ""

    @property
    def current_anchor(self) -> str | None:
        """The pattern of the innermost anchor enclosing the node being visited, if any."""
        frame = self._anchor_frame()
        return frame.anchor if frame else None

    @property
    def current_definition(self) -> str | None:
        """The qualified name of the innermost definition matching an anchor, if any."""
        frame = self._anchor_frame()
        return frame.qualname if frame else None

    @property
    def in_anchor(self) -> bool:
        return self.current_anchor is not None

    @property
    def changed_sites(self) -> Counter[str]:
        return Counter(m.anchor for m in self.marks if not m.present)

    @property
    def present_sites(self) -> Counter[str]:
        return Counter(m.anchor for m in self.marks if m.present)

    def _anchor_frame(self) -> _Frame | None:
        for frame in reversed(self._frames):
            if frame.anchor is not None:
                return frame
        return None

    # -- what a subclass calls at an edit site -------------------------------------------------
    def changed(self, new_node: T) -> T:
        """Record an edit site changed here; return the replacement node."""
        self._mark(present=False)
        return new_node

    def present(self, node: T) -> T:
        """Record an edit site whose change is already in the code; return it unchanged."""
        self._mark(present=True)
        return node

    def _mark(self, *, present: bool) -> None:
        frame = self._anchor_frame()
        if frame is None or frame.anchor is None:
            self.stray_sites += 1
        else:
            self.marks.append(SiteMark(frame.anchor, frame.qualname, present))

    # -- scope tracking ------------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        qualname = self._scope_name(node)
        if qualname is None:
            return super().on_visit(node)
        spec = matches_any(self._specs, qualname)
        anchor = spec.pattern if spec else None
        self._frames.append(_Frame(node, qualname, isinstance(node, cst.FunctionDef), anchor))
        if anchor is not None:
            self.defined[anchor] += 1
            self.definitions.setdefault(anchor, []).append(qualname)
            self.anchor_nodes.setdefault(anchor, node)
        # Prune what cannot hold an anchor: visiting costs as much as parsing on large files.
        keep = self._prefixes is None or self.in_anchor or qualname in self._prefixes
        return super().on_visit(node) and keep

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
