"""Build the fp32 BERT encoder of all-MiniLM-L6-v2 as an ONNX graph, from its weights alone.

The node pattern deliberately mirrors what a PyTorch export of BertModel produces, so that
onnxruntime's transformer optimizer recognises it and fuses Attention, SkipLayerNormalization,
Gelu and EmbedLayerNormalization. Pooling (mean over the attention mask, then L2) is done inside
the graph, so one `session.run` yields the sentence vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is a standard op from 17 on
IR_VERSION = 8


@dataclass(frozen=True, slots=True)
class BertConfig:
    hidden: int
    heads: int
    layers: int
    max_positions: int
    layer_norm_eps: float

    @classmethod
    def from_hf(cls, config: dict[str, object]) -> BertConfig:
        def num(key: str) -> int:
            value = config[key]
            assert isinstance(value, int), key
            return value

        eps = config.get("layer_norm_eps", 1e-12)
        assert isinstance(eps, float)
        return cls(
            hidden=num("hidden_size"),
            heads=num("num_attention_heads"),
            layers=num("num_hidden_layers"),
            max_positions=num("max_position_embeddings"),
            layer_norm_eps=eps,
        )


class _Graph:
    """Tiny builder: unique names, initializers, nodes."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.array(value, order="C"), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        self._count += 1
        name = f"{op_type}_{self._count}"
        out = f"{name}_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out


def build_bert_graph(weights: dict[str, np.ndarray], cfg: BertConfig) -> onnx.ModelProto:
    """The encoder with outputs `last_hidden_state` [b, s, h] and `sentence_embedding` [b, h]."""
    g = _Graph()
    f32 = np.float32
    i64 = np.int64
    head_size = cfg.hidden // cfg.heads

    def w(name: str) -> str:
        return g.const(name, weights[name].astype(f32))

    def w_t(name: str) -> str:  # torch Linear stores [out, in]; MatMul wants [in, out]
        return g.const(name + "_t", weights[name].astype(f32).T)

    def linear(x: str, prefix: str) -> str:
        return g.op("Add", [g.op("MatMul", [x, w_t(prefix + ".weight")]), w(prefix + ".bias")])

    def layer_norm(x: str, prefix: str) -> str:
        return g.op(
            "LayerNormalization",
            [x, w(prefix + ".weight"), w(prefix + ".bias")],
            axis=-1,
            epsilon=cfg.layer_norm_eps,
        )

    # Shared constants
    zero = g.const("c_zero_1d", np.array([0], dtype=i64))
    one_1d = g.const("c_one_1d", np.array([1], dtype=i64))
    one_scalar = g.const("c_one_scalar", np.array(1, dtype=i64))
    axis1 = g.const("c_axis1", np.array([1], dtype=i64))
    axis2 = g.const("c_axis2", np.array([2], dtype=i64))
    heads_shape = g.const("c_heads_shape", np.array([0, 0, cfg.heads, head_size], dtype=i64))
    merged_shape = g.const("c_merged_shape", np.array([0, 0, cfg.hidden], dtype=i64))
    f_one = g.const("c_f_one", np.array(1.0, dtype=f32))
    f_mask = g.const("c_f_mask", np.array(-10000.0, dtype=f32))
    f_scale = g.const("c_f_scale", np.array(np.sqrt(head_size), dtype=f32))
    f_sqrt2 = g.const("c_f_sqrt2", np.array(np.sqrt(2.0), dtype=f32))
    f_half = g.const("c_f_half", np.array(0.5, dtype=f32))
    f_tiny = g.const("c_f_tiny", np.array(1e-9, dtype=f32))
    f_eps = g.const("c_f_eps", np.array(1e-12, dtype=f32))

    # Embeddings: word + token type + position, then LayerNorm (BERT export pattern)
    word = g.op("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"])
    ttype = g.op("Gather", [w("embeddings.token_type_embeddings.weight"), "token_type_ids"])
    word_tt = g.op("Add", [word, ttype])
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), one_scalar], axis=0)
    pos_end = g.op("Unsqueeze", [seq_len, zero])
    positions = g.const("position_ids", np.arange(cfg.max_positions, dtype=i64)[None, :])
    pos_ids = g.op("Slice", [positions, zero, pos_end, one_1d, one_1d])
    pos = g.op("Gather", [w("embeddings.position_embeddings.weight"), pos_ids])
    hidden = layer_norm(g.op("Add", [word_tt, pos]), "embeddings.LayerNorm")

    # Additive attention mask: (1 - mask) * -10000, broadcast over heads and query positions
    mask4 = g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", axis1]), axis2])
    mask_f = g.op("Cast", [mask4], to=TensorProto.FLOAT)
    mask_add = g.op("Mul", [g.op("Sub", [f_one, mask_f]), f_mask])

    for i in range(cfg.layers):
        p = f"encoder.layer.{i}."

        def heads(x: str, perm: list[int]) -> str:
            return g.op("Transpose", [g.op("Reshape", [x, heads_shape])], perm=perm)

        q = heads(linear(hidden, p + "attention.self.query"), [0, 2, 1, 3])
        k = heads(linear(hidden, p + "attention.self.key"), [0, 2, 3, 1])
        v = heads(linear(hidden, p + "attention.self.value"), [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), f_scale]), mask_add])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merged_shape])
        attn = linear(ctx, p + "attention.output.dense")
        hidden = layer_norm(g.op("Add", [attn, hidden]), p + "attention.output.LayerNorm")

        inter = linear(hidden, p + "intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [inter, f_sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inter, g.op("Add", [erf, f_one])]), f_half])
        out = linear(gelu, p + "output.dense")
        hidden = layer_norm(g.op("Add", [out, hidden]), p + "output.LayerNorm")

    # Mean pooling over real tokens, then L2 normalisation (sentence-transformers' recipe)
    tok_mask = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", axis2])], to=TensorProto.FLOAT)
    summed = g.op("ReduceSum", [g.op("Mul", [hidden, tok_mask]), axis1], keepdims=0)
    counts = g.op("Max", [g.op("ReduceSum", [tok_mask, axis1], keepdims=0), f_tiny])
    mean = g.op("Div", [summed, counts])
    sq = g.op("ReduceSum", [g.op("Mul", [mean, mean]), axis1], keepdims=1)
    sentence = g.op("Div", [mean, g.op("Max", [g.op("Sqrt", [sq]), f_eps])])

    g.nodes.append(helper.make_node("Identity", [hidden], ["last_hidden_state"], name="out_hidden"))
    g.nodes.append(
        helper.make_node("Identity", [sentence], ["sentence_embedding"], name="out_sent")
    )

    dims = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, dims)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    outputs = [
        helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, cfg.hidden]),
        helper.make_tensor_value_info(
            "sentence_embedding", TensorProto.FLOAT, ["batch", cfg.hidden]
        ),
    ]
    graph = helper.make_graph(g.nodes, "minilm", inputs, outputs, initializer=g.inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="code-compass",
        producer_version="1",
    )
    model.ir_version = IR_VERSION
    return model
