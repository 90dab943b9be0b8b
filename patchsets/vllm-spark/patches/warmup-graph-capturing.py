"""vLLM PR #39483: warm up with ``is_graph_capturing`` so spec-decode kernels compile first.

In ``GPUModelRunner._warmup_and_capture`` the warmup ``self._dummy_run(...)`` inside the ``for``
loop (the call passing ``force_attention=``) runs without ``is_graph_capturing``, so the
speculative-decoding Triton kernels that only run while capturing compile during capture.
Pass ``is_graph_capturing=force_attention`` right after ``force_attention``.

Already present: that call has an ``is_graph_capturing`` keyword.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from patchkit.engine.rewrite import Rewrite

ANCHOR = "GPUModelRunner._warmup_and_capture"
DUMMY_RUN = m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name("_dummy_run")))


class WarmupGraphCapturing(Rewrite):
    path = "vllm/v1/worker/gpu_model_runner.py"
    search = ("vllm/v1/worker/**/*.py",)  # it follows the class if it moves
    anchors = {ANCHOR: 1}

    def __init__(self) -> None:
        super().__init__()
        self.loops = 0

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        self.loops -= 1
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if (
            self.current_anchor != ANCHOR
            or not self.loops
            or not m.matches(updated_node, DUMMY_RUN)
        ):
            return updated_node
        keywords = [arg.keyword.value if arg.keyword else None for arg in updated_node.args]
        if "force_attention" not in keywords:
            return updated_node
        if "is_graph_capturing" in keywords:
            return self.present(updated_node)
        return self.changed(_add_after(updated_node, keywords.index("force_attention")))


def _add_after(call: cst.Call, index: int) -> cst.Call:
    """Insert ``is_graph_capturing=<force_attention's value>`` after argument ``index``."""
    args = list(call.args)
    anchor_arg = args[index]
    comma = anchor_arg.comma
    if isinstance(comma, cst.MaybeSentinel):  # the last argument, no trailing comma
        args[index] = anchor_arg.with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
    new_arg = cst.Arg(
        value=anchor_arg.value,
        keyword=cst.Name("is_graph_capturing"),
        equal=anchor_arg.equal,
        comma=comma,
    )
    args.insert(index + 1, new_arg)
    return call.with_changes(args=args)
