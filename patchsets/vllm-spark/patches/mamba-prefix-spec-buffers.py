"""vLLM #39809, bugs 1 and 2: mamba prefix caching ("all" mode) with speculative decoding.

1. ``__init__``: the decode CUDA-graph buffer ``state_indices_tensor_d`` has
   ``cdiv(max_model_len, block_size)`` columns, but with speculative decoding every request also
   owns ``num_speculative_blocks`` extra blocks: add them to ``max_num_blocks``.
2. ``_update_metadata_for_cudagraph_capture``: ``block_idx_last_scheduled_token`` and
   ``block_idx_last_computed_token`` are per request, yet sliced ``[: num_decode_tokens]``
   (requests x (1 + spec tokens)); slice them ``[:padded_bs]`` like ``state_indices_tensor_d``
   and zero the padded rows.

Already present: ``max_num_blocks`` mentions ``num_speculative_blocks``; a buffer is sliced by
``padded_bs``, whatever the formatting.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from patchkit.engine.rewrite import Rewrite

BUILDER = "BaseMambaAttentionMetadataBuilder"
INIT = f"{BUILDER}.__init__"
CAPTURE = f"{BUILDER}._update_metadata_for_cudagraph_capture"
BUFFERS = ("block_idx_last_scheduled_token", "block_idx_last_computed_token")

SPEC_BLOCKS = m.Attribute(attr=m.Name("num_speculative_blocks")) | m.Name("num_speculative_blocks")
NUM_DECODE_TOKENS = m.Attribute(value=m.Name("metadata"), attr=m.Name("num_decode_tokens"))


class MambaSpecBlocks(Rewrite):
    path = "vllm/v1/attention/backends/mamba_attn.py"
    search = ("vllm/v1/attention/**/*.py",)  # it follows the class if it moves
    anchors = {INIT: 1, CAPTURE: 2}

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if self.current_anchor != INIT or not _assigns_name(updated_node, "max_num_blocks"):
            return updated_node
        value = updated_node.value
        if m.findall(value, SPEC_BLOCKS):
            return self.present(updated_node)
        if not m.matches(value, m.Call(func=m.Name("cdiv"))):
            return updated_node
        return self.changed(updated_node.with_changes(value=_plus_spec_blocks(value)))

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        if self.current_anchor != CAPTURE or len(updated_node.body) != 1:
            return updated_node
        assign = updated_node.body[0]
        name = _buffer_assigned(assign)
        if name is None or not isinstance(assign, cst.Assign):
            return updated_node
        upper = _slice_upper(assign.value)
        if upper is None:
            return updated_node
        if m.matches(upper, m.Name("padded_bs")):
            return self.present(updated_node)
        if not m.matches(upper, NUM_DECODE_TOKENS):
            return updated_node
        sliced = updated_node.with_changes(body=[_slice_by_padded_bs(assign)])
        zero = cst.parse_statement(f"{name}[metadata.num_decodes :] = 0\n")
        assert isinstance(zero, cst.SimpleStatementLine)
        return self.changed(cst.FlattenSentinel([sliced, zero]))


def _assigns_name(node: cst.Assign, name: str) -> bool:
    return len(node.targets) == 1 and m.matches(node.targets[0].target, m.Name(name))


def _plus_spec_blocks(call: cst.BaseExpression) -> cst.BaseExpression:
    """``(\n    <call>\n    + self.kv_cache_spec.num_speculative_blocks\n)``, as ruff formats it."""
    call_code = cst.Module(body=[]).code_for_node(call).replace("\n", "\n    ")
    return cst.parse_expression(
        f"(\n    {call_code}\n    + self.kv_cache_spec.num_speculative_blocks\n)"
    )


def _buffer_assigned(statement: cst.BaseSmallStatement) -> str | None:
    """``X`` for ``X = self.X[...]`` where X is one of the two block-index buffers."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    if not isinstance(target, cst.Name) or target.value not in BUFFERS:
        return None
    buffer = m.Attribute(value=m.Name("self"), attr=m.Name(target.value))
    return target.value if m.matches(statement.value, m.Subscript(value=buffer)) else None


def _slice_upper(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The upper bound of ``buf[:upper]``; None for anything else."""
    if not isinstance(value, cst.Subscript) or len(value.slice) != 1:
        return None
    index = value.slice[0].slice
    if not isinstance(index, cst.Slice) or index.lower is not None or index.step is not None:
        return None
    return index.upper


def _slice_by_padded_bs(assign: cst.Assign) -> cst.Assign:
    subscript = assign.value
    assert isinstance(subscript, cst.Subscript)
    element = subscript.slice[0]
    index = element.slice
    assert isinstance(index, cst.Slice)
    new_index = index.with_changes(upper=cst.Name("padded_bs"), first_colon=cst.Colon())
    new_slice = [element.with_changes(slice=new_index)]
    return assign.with_changes(value=subscript.with_changes(slice=new_slice))
