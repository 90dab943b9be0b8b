"""Give SM12x (GB10, RTX Blackwell) the Blackwell ``selective_state_update`` block sizes.

``MambaMixer2.__init__`` sets ``self.is_blackwell`` from
``current_platform.is_device_capability_family(100)`` only; it is passed to
``selective_state_update``, which picks ``BLOCK_SIZE_M, num_warps = 32, 8`` for ``dstate > 64``
on Blackwell. Family 120 gets the same. The comment above is updated to match.

Already present: the assigned value already asks about family 120.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from patchkit.engine.rewrite import Rewrite

ANCHOR = "MambaMixer2.__init__"
FAMILY = m.Call(func=m.Attribute(attr=m.Name("is_device_capability_family")))
FAMILY_120 = m.Call(
    func=m.Attribute(attr=m.Name("is_device_capability_family")),
    args=[m.Arg(value=m.Integer("120")), m.ZeroOrMore()],
)
IS_BLACKWELL = m.Attribute(value=m.Name("self"), attr=m.Name("is_blackwell"))
# As ruff (vLLM's formatter, 88 columns) lays out ``family(100) or family(120)`` here.
NEW_VALUE = """current_platform.is_device_capability_family(
    100
) or current_platform.is_device_capability_family(120)"""


class SsuBlackwellSm12x(Rewrite):
    path = "vllm/model_executor/layers/mamba/mamba_mixer2.py"
    search = ("vllm/model_executor/layers/mamba/**/*.py",)  # it follows the class if it moves
    anchors = {ANCHOR: 1}

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if self.current_anchor != ANCHOR or len(updated_node.body) != 1:
            return updated_node
        assign = updated_node.body[0]
        if not isinstance(assign, cst.Assign) or not m.matches(
            assign, m.Assign(targets=[m.AssignTarget(target=IS_BLACKWELL)])
        ):
            return updated_node
        if m.findall(assign.value, FAMILY_120):
            return self.present(updated_node)
        if not m.matches(assign.value, FAMILY):
            return updated_node
        new_assign = assign.with_changes(value=cst.parse_expression(NEW_VALUE))
        lines = [_fix_comment(line) for line in updated_node.leading_lines]
        return self.changed(updated_node.with_changes(body=[new_assign], leading_lines=lines))


def _fix_comment(line: cst.EmptyLine) -> cst.EmptyLine:
    if line.comment is None or "Blackwell (SM100+)" not in line.comment.value:
        return line
    text = line.comment.value.replace("Blackwell (SM100+)", "Blackwell (SM100+, SM12x)")
    return line.with_changes(comment=cst.Comment(text))
