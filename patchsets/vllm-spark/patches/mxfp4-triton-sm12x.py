"""vLLM #41477: let the MXFP4 Triton MoE kernels admit SM12x (RTX Blackwell, GB10/SM121).

In 0.19.0 the capability check ``(9, 0) <= cap < (11, 0)`` gates the OAI Triton MoE kernels in
three places: the MXFP4 backend oracle (``oracle/mxfp4.py``) and the two expert classes of
``gpt_oss_triton_kernels_moe.py``. Upstream keeps moving it: the experts file went to
``fused_moe/experts/`` (0.20.0), the oracle stopped checking itself and asks the expert classes
(0.21.0), and the two class checks were folded into one module-level helper (0.22.0). So the
rewrite looks in every file under ``fused_moe/`` with a ``(9, 0)`` in its text, and anchors
by what the gate is: the ``_supports_current_device`` of an OAI Triton expert class, a
module-level Triton ``..._supports_current_device`` helper, or an MXFP4 backend selector. Each
``(9, 0) <= X < (11, 0)`` inside them, one to three in all, gets the upper bound ``(13, 0)``;
an identical check in another kernel's class is left alone. The explanatory comment above the
0.19.0 class checks is updated to match.

Already present: the check's upper bound is ``(13, 0)`` or higher.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from patchkit.engine.rewrite import Rewrite

LOWER = (9, 0)
OLD_UPPER = (11, 0)
NEW_UPPER = (13, 0)
COMMENT_FIXES = (
    ("cap < (11,0)", "cap < (13,0)"),
    ("SM100+ (Blackwell)", "SM10x/SM12x (Blackwell)"),
)


class _CapabilityBound(Rewrite):
    """Raise the upper bound of ``(9, 0) <= cap < (11, 0)`` inside each anchor."""

    def __init__(self) -> None:
        super().__init__()
        self.site_in_statement = False

    def leave_Comparison(
        self, original_node: cst.Comparison, updated_node: cst.Comparison
    ) -> cst.Comparison:
        if not self.in_anchor or _int_tuple(updated_node.left) != LOWER:
            return updated_node
        for i, target in enumerate(updated_node.comparisons):
            upper = _int_tuple(target.comparator)
            if not isinstance(target.operator, cst.LessThan) or upper is None:
                continue
            if upper >= NEW_UPPER:
                return self.present(updated_node)
            if upper == OLD_UPPER:
                self.site_in_statement = True  # its comment is updated with it
                return self.changed(_raise_bound(updated_node, i))
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if not self.site_in_statement:
            return updated_node
        self.site_in_statement = False
        return updated_node.with_changes(leading_lines=_fix_comments(updated_node.leading_lines))


class TritonCapabilityGate(_CapabilityBound):
    path = "vllm/model_executor/layers/fused_moe/gpt_oss_triton_kernels_moe.py"  # as of 0.19.0
    search = ("vllm/model_executor/layers/fused_moe/**/*.py",)
    needles = (r"\(\s*9\s*,\s*0\s*,?\s*\)",)  # the lower bound, however formatted
    # 0.19.0: the oracle and two expert classes; 0.21.0: the classes; 0.22.0: one helper
    anchors = {
        "*OAITriton*._supports_current_device"
        "|*triton*_supports_current_device"
        "|select*mxfp4*_backend": (1, 3)
    }


def _int_tuple(node: cst.BaseExpression) -> tuple[int, ...] | None:
    if not isinstance(node, cst.Tuple):
        return None
    values = [e.value for e in node.elements]
    if not all(isinstance(v, cst.Integer) for v in values):
        return None
    return tuple(int(v.value) for v in values if isinstance(v, cst.Integer))


def _raise_bound(comparison: cst.Comparison, index: int) -> cst.Comparison:
    """Replace the major of the upper-bound tuple, keeping its formatting."""
    target = comparison.comparisons[index]
    bound = target.comparator
    assert isinstance(bound, cst.Tuple)
    first = bound.elements[0]
    major = first.value.with_changes(value=str(NEW_UPPER[0]))
    elements = [first.with_changes(value=major), *bound.elements[1:]]
    new_target = target.with_changes(comparator=bound.with_changes(elements=elements))
    comparisons = list(comparison.comparisons)
    comparisons[index] = new_target
    return comparison.with_changes(comparisons=comparisons)


def _fix_comments(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    fixed = []
    for line in lines:
        if line.comment is not None:
            text = line.comment.value
            for old, new in COMMENT_FIXES:
                text = text.replace(old, new)
            line = line.with_changes(comment=cst.Comment(text))
        fixed.append(line)
    return fixed
