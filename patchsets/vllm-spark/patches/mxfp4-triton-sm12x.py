"""vLLM #41477: let the MXFP4 Triton MoE kernels admit SM12x (RTX Blackwell, GB10/SM121).

The capability check ``(9, 0) <= cap < (11, 0)`` appears byte-identical in the MXFP4 backend
oracle and in two expert classes of ``gpt_oss_triton_kernels_moe.py``; each is anchored by its
qualified name and its upper bound becomes ``(13, 0)``. The explanatory comment above the two
class checks is updated to match.

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


class OracleCheck(_CapabilityBound):
    path = "vllm/model_executor/layers/fused_moe/oracle/mxfp4.py"
    anchors = {"select_mxfp4_moe_backend": 1}


class ExpertsCheck(_CapabilityBound):
    path = "vllm/model_executor/layers/fused_moe/gpt_oss_triton_kernels_moe.py"
    anchors = {
        "BaseOAITritonExperts._supports_current_device": 1,
        "OAITritonMxfp4ExpertsMonolithic._supports_current_device": 1,
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
