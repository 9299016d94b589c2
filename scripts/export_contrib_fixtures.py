#!/usr/bin/python3
"""Write onnxcost's contrib-op (com.microsoft) LLM fixtures.

Run with Debian's interpreter (onnx 1.12 and numpy; no torch needed):

    /usr/bin/python3 scripts/export_contrib_fixtures.py            # -> testdata/models/contrib
    /usr/bin/python3 scripts/export_contrib_fixtures.py --only llama_int4_gqa,bert_ms_attention
    /usr/bin/python3 scripts/export_contrib_fixtures.py --tiny --out /tmp/contrib-tiny
    /usr/bin/python3 scripts/export_contrib_fixtures.py --list

The graphs are written node by node with onnx's make_node (no exporter), in the
layout that the tools people use write them:

- llama_*: onnxruntime-genai's model builder (src/python/py/models/builder.py
  and builders/base.py, class Model) for the CUDA execution provider: fp16
  io, GroupQueryAttention with packed QKV and rotary inside the op, and for
  int4 the builder's save-time MatMulNBitsQuantizer pass (MatMul ->
  MatMulNBits, initializers NAME_Q4 / NAME_scales / NAME_zero_points).
- bert_ms_attention: onnxruntime's transformers optimizer output for BERT
  (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu).
- bert_packed / bert_packed_mha: the same after convert_to_packing_mode.py
  (RemovePadding, PackedAttention or PackedMultiHeadAttention,
  RestorePadding): BERT serving without the padding.
- gpt2_mha_past / phi2_rotary_mha: decoders with MultiHeadAttention and a
  past cache, with the inputs in the builder's make_multi_head_attention
  slot order; the phi2 one also uses com.microsoft RotaryEmbedding.

Graph-only, as scripts/export_fixtures.py does it: every initializer over
SIZE_THRESHOLD bytes carries only its dims, dtype and an external-data
reference (location NAME.onnx.data, offset, length) into a data file that
does not exist. Offsets are those convert_model_to_external_data would write
(tensors back to back in initializer order, no padding), but the data is
never materialized, so a 1 GB embedding costs nothing. Small initializers
(norm weights of tiny models, shape constants) stay inline.

--tiny writes the same graphs at toy sizes with every weight inline and
seeded random values, so they can be executed by onnxruntime (they are not
committed). --tiny also writes NAME.feeds.json: the input shapes to run with.

Determinism: no clocks, no unordered iteration; two runs give identical bytes.
"""

import argparse
import json
import math
import os
import sys

import copy
import tempfile

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
from onnx import TensorProto, helper

SIZE_THRESHOLD = 1024  # bytes, as in export_fixtures.py
BASE_SEED = 20240901

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "testdata", "models", "contrib")

MS = "com.microsoft"
F16, F32, I64, I32, U8 = TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.UINT8
NP = {F16: np.float16, F32: np.float32, I64: np.int64, I32: np.int32, U8: np.uint8}


class G:
    """A graph under construction. Initializers over SIZE_THRESHOLD become
    external references (graph-only mode) unless weights=True."""

    def __init__(self, name, weights, seed):
        self.name = name
        self.weights = weights
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.ext_offset = 0
        self.consts = set()

    # -- tensors ---------------------------------------------------------
    def init(self, name, dtype, shape, fill=None):
        """fill: a callable returning the ndarray, or None for seeded random
        (floats ~ N(0, 0.02), uint8 uniform)."""
        shape = [int(d) for d in shape]
        itemsize = np.dtype(NP[dtype]).itemsize
        nbytes = int(np.prod(shape, dtype=np.int64)) * itemsize if shape else itemsize
        if not self.weights and nbytes > SIZE_THRESHOLD:
            t = TensorProto()
            t.name, t.data_type = name, dtype
            t.dims.extend(shape)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", self.name + ".onnx.data"),
                         ("offset", str(self.ext_offset)), ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            self.ext_offset += nbytes
            self.inits.append(t)
            return name
        if fill is not None:
            a = np.asarray(fill(), dtype=NP[dtype]).reshape(shape)
        elif dtype == U8:
            a = self.rng.integers(0, 256, size=shape, dtype=np.uint8)
        else:
            a = (self.rng.standard_normal(shape) * 0.02).astype(NP[dtype])
        self.inits.append(onnx.numpy_helper.from_array(a, name))
        return name

    def const(self, dtype, value):
        """The builder's "/model/constants/{DTYPE}/{value}" Constant nodes."""
        tag = {I64: "INT64", I32: "INT32", F16: "FLOAT16", F32: "FLOAT"}[dtype]
        name = "/model/constants/%s/%s" % (tag, value)
        if name not in self.consts:
            self.consts.add(name)
            arr = np.array(value, dtype=NP[dtype])
            self.nodes.append(helper.make_node(
                "Constant", [], [name], name=name.replace("constants", "constant_nodes"),
                value=onnx.numpy_helper.from_array(arr, name)))
        return name

    def node(self, op, inputs, outputs, name, domain="", **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain or None, **attrs))
        return outputs[0]

    def op(self, op, inputs, name, domain="", **attrs):
        """A one-output node whose output is NAME/output_0 (builder naming)."""
        return self.node(op, inputs, [name + "/output_0"], name, domain, **attrs)

    def input(self, name, dtype, shape):
        self.inputs.append(helper.make_tensor_value_info(name, dtype, shape))
        return name

    def output(self, name, dtype, shape):
        self.outputs.append(helper.make_tensor_value_info(name, dtype, shape))
        return name

    def model(self, opsets, ir_version, producer, doc):
        graph = helper.make_graph(self.nodes, "main_graph", self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                              producer_name=producer, doc_string=doc)
        m.ir_version = ir_version
        return m


# ---------------------------------------------------------------------------
# onnxruntime-genai model builder layout (builders/base.py, class Model)


def rope_cache(cfg, which):
    def f():
        hd = cfg["head"]
        inv = 1.0 / (cfg["theta"] ** (np.arange(0, hd, 2, dtype=np.int64).astype(np.float64) / hd))
        t = np.arange(cfg["max_pos"], dtype=np.float64)
        freqs = np.outer(t, inv)  # [max_pos, head/2]: the builder's emb[:, :head/2]
        return (np.cos(freqs) if which == "cos" else np.sin(freqs)).astype(np.float16)
    return f


def builder_linear(g, cfg, base, x, k, n, out=None):
    """The builder's make_matmul: float MatMul with weight NAME.weight [K, N]
    (name from the node path), or, for int4, what MatMulNBitsQuantizer turns
    it into: MatMulNBits NAME_Q4 with B [N, K/bs, bs/2] uint8, scales
    [N*K/bs] in the io dtype and (asymmetric) zero_points [N*ceil(K/bs/2)]."""
    name = base + "/MatMul"
    weight = name[1:].replace("/", ".") + ".weight"
    out = out or name + "/output_0"
    if cfg["quant"] is None:
        g.init(weight, F16, [k, n])
        return g.node("MatMul", [x, weight], [out], name)
    bs = cfg["quant"]["block_size"]
    kb = (k + bs - 1) // bs
    ins = [x, g.init(weight + "_Q4", U8, [n, kb, bs // 2]),
           g.init(weight + "_scales", F16, [n * kb], fill=lambda: np.full(n * kb, 0.002))]
    if not cfg["quant"]["symmetric"]:
        ins.append(g.init(weight + "_zero_points", U8, [n * ((kb + 1) // 2)],
                          fill=lambda: np.full(n * ((kb + 1) // 2), 0x88)))
    return g.node("MatMulNBits", ins, [out], name + "_Q4", MS, K=k, N=n, bits=4, block_size=bs,
                  accuracy_level=cfg["quant"]["accuracy_level"])


def build_llama(cfg, weights, seed, name):
    g = G(name, weights, seed)
    H, nh, nkv, hd, ff, V, L = (cfg[k] for k in ("hidden", "heads", "kv_heads", "head", "ff", "vocab", "layers"))
    ones = lambda n: (lambda: np.ones(n))

    ids = g.input("input_ids", I64, ["batch_size", "sequence_length"])
    mask = g.input("attention_mask", I64, ["batch_size", "total_sequence_length"])
    for i in range(L):
        for kv in ("key", "value"):
            g.input("past_key_values.%d.%s" % (i, kv), F16, ["batch_size", nkv, "past_sequence_length", hd])
    g.output("logits", F16, ["batch_size", "sequence_length", V])
    for i in range(L):
        for kv in ("key", "value"):
            g.output("present.%d.%s" % (i, kv), F16, ["batch_size", nkv, "total_sequence_length", hd])

    # make_embedding
    if cfg["quant"] is not None and cfg["quant"].get("embedding"):
        # GatherBlockQuantized in the uint8 form make_embedding writes for
        # quantized embeddings: data [vocab, hidden*bits/8], block-wise
        # scales along the hidden axis.
        bs = cfg["quant"]["block_size"]
        nb = H // bs
        ins = [g.init("model.embed_tokens.weight_Q4", U8, [V, H // 2]), ids,
               g.init("model.embed_tokens.weight_scales", F16, [V, nb], fill=lambda: np.full((V, nb), 0.002))]
        if not cfg["quant"]["symmetric"]:
            ins.append(g.init("model.embed_tokens.weight_zero_points", U8, [V, (nb + 1) // 2],
                              fill=lambda: np.full((V, (nb + 1) // 2), 0x88)))
        x = g.op("GatherBlockQuantized", ins, "/model/embed_tokens/GatherBlockQuantized", MS,
                 bits=4, block_size=bs, gather_axis=0, quantize_axis=1)
    else:
        x = g.op("Gather", [g.init("model.embed_tokens.weight", F16, [V, H]), ids], "/model/embed_tokens/Gather")

    # make_attention_mask_reformatting_for_gqa
    mb = "/model/attn_mask_reformat/attn_mask_subgraph"
    rs = g.op("ReduceSum", [mask, g.const(I64, [1])], mb + "/ReduceSum", keepdims=0)
    sub = g.op("Sub", [rs, g.const(I64, [1])], mb + "/Sub")
    seqlens_k = g.op("Cast", [sub], mb + "/Sub/Cast", to=I32)
    shp = g.op("Shape", [mask], mb + "/Shape")
    gat = g.op("Gather", [shp, g.const(I64, 1)], mb + "/Gather", axis=0)
    total_len = g.op("Cast", [gat], mb + "/Gather/Cast", to=I32)

    cos = g.init("cos_cache", F16, [cfg["max_pos"], hd // 2], fill=rope_cache(cfg, "cos"))
    sin = g.init("sin_cache", F16, [cfg["max_pos"], hd // 2], fill=rope_cache(cfg, "sin"))

    eps = cfg["eps"]
    if cfg.get("fused"):
        return fused_llama_layers(g, cfg, x, seqlens_k, total_len, cos, sin)
    root, skip = x, x
    for i in range(L + 1):
        lp = "/model/layers.%d" % i
        loc = "input" if i < L else "final_norm"
        w = g.init("model.layers.%d.%s_layernorm.weight" % (i, loc), F16, [H], fill=ones(H))
        out0 = "%s/%s_layernorm/output_0" % (lp, loc)
        out3 = "%s/%s_layernorm/output_3" % (lp, loc)
        if i == 0:
            g.node("SimplifiedLayerNormalization", [root, w], [out0], "%s/%s_layernorm/LayerNorm" % (lp, loc),
                   axis=-1, epsilon=eps, stash_type=1)
        elif i < L:
            g.node("SkipSimplifiedLayerNormalization", [root, skip, w], [out0, "", "", out3],
                   "%s/%s_layernorm/SkipLayerNorm" % (lp, loc), MS, epsilon=eps)
            root = out3
        else:
            g.node("SkipSimplifiedLayerNormalization", [root, skip, w], [out0],
                   "%s/%s_layernorm/SkipLayerNorm" % (lp, loc), MS, epsilon=eps)
            builder_linear(g, cfg, "/lm_head", out0, H, V, out="logits")
            break

        # make_attention: packed QKV MatMul, GQA with rotary inside
        qkv = builder_linear(g, cfg, lp + "/attn/qkv_proj", out0, H, (nh + 2 * nkv) * hd)
        attn = lp + "/attn/GroupQueryAttention"
        g.node("GroupQueryAttention",
               [qkv, "", "", "past_key_values.%d.key" % i, "past_key_values.%d.value" % i,
                seqlens_k, total_len, cos, sin],
               [attn + "/output_0", "present.%d.key" % i, "present.%d.value" % i], attn, MS,
               num_heads=nh, kv_num_heads=nkv, scale=float(1 / np.sqrt(hd)), local_window_size=-1,
               softcap=0.0, do_rotary=1, rotary_interleaved=0)
        o = builder_linear(g, cfg, lp + "/attn/o_proj", attn + "/output_0", nh * hd, H)

        # post-attention SkipSimplifiedLayerNorm
        w = g.init("model.layers.%d.post_attention_layernorm.weight" % i, F16, [H], fill=ones(H))
        p0, p3 = lp + "/post_attention_layernorm/output_0", lp + "/post_attention_layernorm/output_3"
        g.node("SkipSimplifiedLayerNormalization", [root, o, w], [p0, "", "", p3],
               lp + "/post_attention_layernorm/SkipLayerNorm", MS, epsilon=eps)
        root = p3

        # make_mlp_proj with SiLU as make_activation_with_mul writes it
        gate = builder_linear(g, cfg, lp + "/mlp/gate_proj", p0, H, ff)
        up = builder_linear(g, cfg, lp + "/mlp/up_proj", p0, H, ff)
        sig = g.op("Sigmoid", [gate], lp + "/mlp/act_fn/Sigmoid")
        act = g.op("Mul", [gate, sig], lp + "/mlp/act_fn/Mul")
        prod = g.op("Mul", [act, up], lp + "/mlp/Mul")
        skip = builder_linear(g, cfg, lp + "/mlp/down_proj", prod, ff, H)

    doc = "graph-only fixture in the onnxruntime-genai model builder's CUDA %s layout" % (
        "int4" if cfg["quant"] else "fp16")
    return g.model([("", 21), (MS, 1)], 10, "onnxruntime-genai", doc)


def nbits_weight(g, cfg, base, k, n):
    """A symmetric int4 weight's B [N, K/bs, bs/2] and scales [N*K/bs], as
    builder_linear writes them for MatMulNBits."""
    bs = cfg["quant"]["block_size"]
    kb = (k + bs - 1) // bs
    weight = base[1:].replace("/", ".") + ".MatMul.weight"
    return [g.init(weight + "_Q4", U8, [n, kb, bs // 2]),
            g.init(weight + "_scales", F16, [n * kb], fill=lambda: np.full(n * kb, 0.002))]


def fused_llama_layers(g, cfg, x, seqlens_k, total_len, cos, sin):
    """build_llama's layers with the decoder's int4 fusions of onnxruntime's
    contrib ops (ContribOperators.md: MatMulNBitsQkv, MatMulNBitsMlp): each
    layer's input RMS norm (SkipSimplifiedLayerNormalization past the
    first) and its Q, K, V projections are one MatMulNBitsQkv, giving Q, K,
    V and the residual sum; GroupQueryAttention takes them apart; the
    post-attention norm with the gate and up projections and SiLU(gate)·up
    is one MatMulNBitsMlp; o_proj and down_proj stay MatMulNBits."""
    H, nh, nkv, hd, ff, V, L = (cfg[k] for k in ("hidden", "heads", "kv_heads", "head", "ff", "vocab", "layers"))
    bs, eps = cfg["quant"]["block_size"], cfg["eps"]
    ones = lambda n: (lambda: np.ones(n))
    root, skip = x, ""
    for i in range(L):
        lp = "/model/layers.%d" % i
        w = g.init("model.layers.%d.input_layernorm.weight" % i, F16, [H], fill=ones(H))
        qkv = lp + "/attn/MatMulNBitsQkv"
        outs = [qkv + "/output_%d" % j for j in range(3)] + ([qkv + "/output_3"] if skip else [])
        ins = [root, skip, w]
        for proj, n in (("q_proj", nh * hd), ("k_proj", nkv * hd), ("v_proj", nkv * hd)):
            ins += nbits_weight(g, cfg, lp + "/attn/" + proj, H, n) + [""]
        g.node("MatMulNBitsQkv", ins, outs, qkv, MS, K=H, Nq=nh * hd, Nkv=nkv * hd, bits=4, block_size=bs,
               accuracy_level=cfg["quant"]["accuracy_level"], epsilon=eps)
        if skip:
            root = outs[3]
        attn = lp + "/attn/GroupQueryAttention"
        g.node("GroupQueryAttention",
               outs[:3] + ["past_key_values.%d.key" % i, "past_key_values.%d.value" % i, seqlens_k, total_len, cos, sin],
               [attn + "/output_0", "present.%d.key" % i, "present.%d.value" % i], attn, MS,
               num_heads=nh, kv_num_heads=nkv, scale=float(1 / np.sqrt(hd)), local_window_size=-1,
               softcap=0.0, do_rotary=1, rotary_interleaved=0)
        o = builder_linear(g, cfg, lp + "/attn/o_proj", attn + "/output_0", nh * hd, H)
        w = g.init("model.layers.%d.post_attention_layernorm.weight" % i, F16, [H], fill=ones(H))
        mlp = lp + "/mlp/MatMulNBitsMlp"
        ins = [root, o, w] + nbits_weight(g, cfg, lp + "/mlp/gate_proj", H, ff) + [""] + \
            nbits_weight(g, cfg, lp + "/mlp/up_proj", H, ff) + [""]
        g.node("MatMulNBitsMlp", ins, [mlp + "/output_0", mlp + "/output_1"], mlp, MS, K=H, N=ff, bits=4,
               block_size=bs, accuracy_level=cfg["quant"]["accuracy_level"], activation="silu", epsilon=eps)
        root = mlp + "/output_1"
        skip = builder_linear(g, cfg, lp + "/mlp/down_proj", mlp + "/output_0", ff, H)
    lp = "/model/layers.%d" % L
    w = g.init("model.layers.%d.final_norm_layernorm.weight" % L, F16, [H], fill=ones(H))
    out0 = lp + "/final_norm_layernorm/output_0"
    g.node("SkipSimplifiedLayerNormalization", [root, skip, w], [out0], lp + "/final_norm_layernorm/SkipLayerNorm", MS, epsilon=eps)
    builder_linear(g, cfg, "/lm_head", out0, H, V, out="logits")
    return g.model([("", 21), (MS, 1)], 10, "onnxruntime-genai",
                   "graph-only fixture: the builder's int4 CUDA layout with MatMulNBitsQkv and MatMulNBitsMlp fusions")


# ---------------------------------------------------------------------------
# onnxruntime transformers optimizer layout for BERT


def build_bert(cfg, weights, seed, name):
    g = G(name, weights, seed)
    H, nh, ff, V, L, P = (cfg[k] for k in ("hidden", "heads", "ff", "vocab", "layers", "max_pos"))
    ones = lambda n: (lambda: np.ones(n))
    dims = ["batch_size", "sequence_length"]
    ids = g.input("input_ids", I64, dims)
    am = g.input("attention_mask", I64, dims)
    tt = g.input("token_type_ids", I64, dims)
    g.output("last_hidden_state", F32, dims + [H])

    # fusion_utils.cast_input_to_int32: Cast the int64 graph inputs for EmbedLayerNormalization
    ids32 = g.node("Cast", [ids], ["input_ids_int32"], "Cast_input_ids", to=I32)
    tt32 = g.node("Cast", [tt], ["token_type_ids_int32"], "Cast_token_type_ids", to=I32)
    am32 = g.node("Cast", [am], ["attention_mask_int32"], "Cast_attention_mask", to=I32)
    x, mask_index = "EmbedLayerNormalization_0_output", "EmbedLayerNormalization_0_mask_index"
    g.node("EmbedLayerNormalization",
           [ids32, tt32,
            g.init("bert.embeddings.word_embeddings.weight", F32, [V, H]),
            g.init("bert.embeddings.position_embeddings.weight", F32, [P, H]),
            g.init("bert.embeddings.token_type_embeddings.weight", F32, [cfg["type_vocab"], H]),
            g.init("bert.embeddings.LayerNorm.weight", F32, [H], fill=ones(H)),
            g.init("bert.embeddings.LayerNorm.bias", F32, [H]),
            am32],
           [x, mask_index], "EmbedLayerNormalization_0", MS, epsilon=1e-12)

    # convert_to_packing_mode.py: RemovePadding after the embedding (its
    # mask_index gives each sequence's token count), the attention nodes
    # replaced by their packed forms, RestorePadding after the last
    # SkipLayerNormalization.
    packing = cfg.get("packing")
    if packing:
        x_in = x
        x, off, cum = x_in + "_no_padding", x_in + "_token_offset", x_in + "_cumulated_seq_len"
        g.node("RemovePadding", [x_in, mask_index], [x, off, cum, x_in + "_max_seq_len"], "RemovePadding_0", MS)

    for i in range(L):
        p = "bert.encoder.layer.%d." % i
        if packing == "mha":
            # The optimizer's MultiHeadAttention form: Q, K and V MatMuls,
            # their biases added inside the attention op.
            qkv = [g.node("MatMul", [x, g.init(p + "attention.self.%s.weight" % t, F32, [H, H])],
                          ["MatMul_%s_%d_output" % (t, i)], "MatMul_%s_%d" % (t, i)) for t in ("query", "key", "value")]
            att = g.node("PackedMultiHeadAttention",
                         qkv + [g.init(p + "attention.self.qkv.bias", F32, [3 * H]), off, cum],
                         ["Attention_%d_output" % i], "PackedMultiHeadAttention_%d" % i, MS, num_heads=nh)
        elif packing:
            att = g.node("PackedAttention",
                         [x, g.init(p + "attention.self.qkv.weight", F32, [H, 3 * H]),
                          g.init(p + "attention.self.qkv.bias", F32, [3 * H]), off, cum],
                         ["Attention_%d_output" % i], "PackedAttention_%d" % i, MS, num_heads=nh)
        else:
            att = g.node("Attention",
                         [x, g.init(p + "attention.self.qkv.weight", F32, [H, 3 * H]),
                          g.init(p + "attention.self.qkv.bias", F32, [3 * H]), mask_index],
                         ["Attention_%d_output" % i], "Attention_%d" % i, MS, num_heads=nh)
        dense = g.node("MatMul", [att, g.init(p + "attention.output.dense.weight", F32, [H, H])],
                       ["MatMul_attn_out_%d_output" % i], "MatMul_attn_out_%d" % i)
        x1 = g.node("SkipLayerNormalization",
                    [dense, x, g.init(p + "attention.output.LayerNorm.weight", F32, [H], fill=ones(H)),
                     g.init(p + "attention.output.LayerNorm.bias", F32, [H]),
                     g.init(p + "attention.output.dense.bias", F32, [H])],
                    ["SkipLayerNorm_%d_output" % (2 * i)], "SkipLayerNorm_%d" % (2 * i), MS, epsilon=1e-12)
        inter = g.node("MatMul", [x1, g.init(p + "intermediate.dense.weight", F32, [H, ff])],
                       ["MatMul_intermediate_%d_output" % i], "MatMul_intermediate_%d" % i)
        gelu = g.node("BiasGelu", [inter, g.init(p + "intermediate.dense.bias", F32, [ff])],
                      ["BiasGelu_%d_output" % i], "BiasGelu_%d" % i, MS)
        out = g.node("MatMul", [gelu, g.init(p + "output.dense.weight", F32, [ff, H])],
                     ["MatMul_output_%d_output" % i], "MatMul_output_%d" % i)
        last = "last_hidden_state_restore_input" if packing else "last_hidden_state"
        x = g.node("SkipLayerNormalization",
                   [out, x1, g.init(p + "output.LayerNorm.weight", F32, [H], fill=ones(H)),
                    g.init(p + "output.LayerNorm.bias", F32, [H]),
                    g.init(p + "output.dense.bias", F32, [H])],
                   [last if i == L - 1 else "SkipLayerNorm_%d_output" % (2 * i + 1)],
                   "SkipLayerNorm_%d" % (2 * i + 1), MS, epsilon=1e-12)
    if packing:
        g.node("RestorePadding", [x, off], ["last_hidden_state"], "RestorePadding_0", MS)
    return g.model([("", 17), (MS, 1)], 8, "onnxruntime.transformers",
                   "graph-only fixture in the onnxruntime transformers optimizer's BERT layout")


# ---------------------------------------------------------------------------
# Decoders with MultiHeadAttention and a past cache


def build_mha_decoder(cfg, weights, seed, name):
    """GPT-2 (learned positions, sequential block) or Phi-2 (RotaryEmbedding,
    parallel attention + MLP): fp16, LayerNorm with bias, biased Linear
    layers, FastGelu with bias, MultiHeadAttention(q, k, v, bias,
    key_padding_mask, -, past_key, past_value) with unidirectional=1."""
    g = G(name, weights, seed)
    H, nh, hd, ff, V, L = (cfg[k] for k in ("hidden", "heads", "head", "ff", "vocab", "layers"))
    phi = cfg["style"] == "phi"
    ones = lambda n: (lambda: np.ones(n))
    ids = g.input("input_ids", I64, ["batch_size", "sequence_length"])
    mask = g.input("attention_mask", I64, ["batch_size", "total_sequence_length"])
    pos = g.input("position_ids", I64, ["batch_size", "sequence_length"])
    for i in range(L):
        for kv in ("key", "value"):
            g.input("past_key_values.%d.%s" % (i, kv), F16, ["batch_size", nh, "past_sequence_length", hd])
    g.output("logits", F16, ["batch_size", "sequence_length", V])
    for i in range(L):
        for kv in ("key", "value"):
            g.output("present.%d.%s" % (i, kv), F16, ["batch_size", nh, "total_sequence_length", hd])

    def linear(base, x, k, n, bias=True):
        w = base[1:].replace("/", ".") + ".MatMul.weight"
        y = g.op("MatMul", [x, g.init(w, F16, [k, n])], base + "/MatMul")
        if not bias:
            return y
        return g.op("Add", [y, g.init(base[1:].replace("/", ".") + ".Add.bias", F16, [n])], base + "/Add")

    emb = g.op("Gather", [g.init("model.embed_tokens.weight", F16, [V, H]), ids], "/model/embed_tokens/Gather")
    key_mask = g.op("Cast", [mask], "/model/attn_mask_reformat/Cast", to=I32)
    if phi:
        cos = g.init("cos_cache", F16, [cfg["max_pos"], cfg["rotary_dim"] // 2],
                     fill=rope_cache(dict(cfg, head=cfg["rotary_dim"]), "cos"))
        sin = g.init("sin_cache", F16, [cfg["max_pos"], cfg["rotary_dim"] // 2],
                     fill=rope_cache(dict(cfg, head=cfg["rotary_dim"]), "sin"))
        root, skip = emb, None
    else:
        wpe = g.op("Gather", [g.init("model.embed_positions.weight", F16, [cfg["max_pos"], H]), pos],
                   "/model/embed_positions/Gather")
        root, skip = emb, wpe

    for i in range(L + 1):
        lp = "/model/layers.%d" % i
        loc = "input" if i < L else "final_norm"
        w = g.init("model.layers.%d.%s_layernorm.weight" % (i, loc), F16, [H], fill=ones(H))
        b = g.init("model.layers.%d.%s_layernorm.bias" % (i, loc), F16, [H])
        out0 = "%s/%s_layernorm/output_0" % (lp, loc)
        out3 = "%s/%s_layernorm/output_3" % (lp, loc)
        if skip is None:
            g.node("LayerNormalization", [root, w, b], [out0], "%s/%s_layernorm/LayerNorm" % (lp, loc),
                   axis=-1, epsilon=1e-5, stash_type=1)
        elif i < L:
            g.node("SkipLayerNormalization", [root, skip, w, b], [out0, "", "", out3],
                   "%s/%s_layernorm/SkipLayerNorm" % (lp, loc), MS, epsilon=1e-5)
            root = out3
        else:
            g.node("SkipLayerNormalization", [root, skip, w, b], [out0],
                   "%s/%s_layernorm/SkipLayerNorm" % (lp, loc), MS, epsilon=1e-5)
            y = g.op("MatMul", [out0, g.init("lm_head.MatMul.weight", F16, [H, V])], "/lm_head/MatMul")
            if phi:
                g.node("Add", [y, g.init("lm_head.Add.bias", F16, [V])], ["logits"], "/lm_head/Add")
            else:
                g.nodes[-1].output[0] = "logits"
            break

        q = linear(lp + "/attn/q_proj", out0, H, H, bias=phi)
        k = linear(lp + "/attn/k_proj", out0, H, H, bias=phi)
        v = linear(lp + "/attn/v_proj", out0, H, H, bias=phi)
        mha_bias = ""
        if phi:
            q = g.op("RotaryEmbedding", [q, pos, cos, sin], lp + "/attn/q_rotary/RotaryEmbedding", MS,
                     interleaved=0, num_heads=nh, rotary_embedding_dim=cfg["rotary_dim"])
            k = g.op("RotaryEmbedding", [k, pos, cos, sin], lp + "/attn/k_rotary/RotaryEmbedding", MS,
                     interleaved=0, num_heads=nh, rotary_embedding_dim=cfg["rotary_dim"])
        else:
            # GPT-2's c_attn bias, packed [3*hidden] into the MHA bias input
            mha_bias = g.init("model.layers.%d.attn.qkv_proj.bias" % i, F16, [3 * H])
        attn = lp + "/attn/MultiHeadAttention"
        g.node("MultiHeadAttention",
               [q, k, v, mha_bias, key_mask, "", "past_key_values.%d.key" % i, "past_key_values.%d.value" % i],
               [attn + "/output_0", "present.%d.key" % i, "present.%d.value" % i], attn, MS,
               num_heads=nh, scale=float(1 / np.sqrt(hd)), unidirectional=1)
        o = linear(lp + "/attn/o_proj", attn + "/output_0", H, H, bias=phi)
        if phi:
            # parallel MLP on the same LayerNorm output; residual Add (phi.py PhiModel.make_layer)
            fc1 = g.op("MatMul", [out0, g.init("model.layers.%d.mlp.fc1.MatMul.weight" % i, F16, [H, ff])],
                       lp + "/mlp/fc1/MatMul")
            act = g.op("FastGelu", [fc1, g.init("model.layers.%d.mlp.fc1.bias" % i, F16, [ff])],
                       lp + "/mlp/act_fn/FastGelu", MS)
            fc2 = linear(lp + "/mlp/fc2", act, ff, H)
            skip = g.op("Add", [o, fc2], lp + "/residual_add/Add")
            continue
        w = g.init("model.layers.%d.post_attention_layernorm.weight" % i, F16, [H], fill=ones(H))
        b = g.init("model.layers.%d.post_attention_layernorm.bias" % i, F16, [H])
        ob = g.init("model.layers.%d.attn.o_proj.bias" % i, F16, [H])
        p0, p3 = lp + "/post_attention_layernorm/output_0", lp + "/post_attention_layernorm/output_3"
        g.node("SkipLayerNormalization", [root, o, w, b, ob], [p0, "", "", p3],
               lp + "/post_attention_layernorm/SkipLayerNorm", MS, epsilon=1e-5)
        root = p3
        fc = g.op("MatMul", [p0, g.init("model.layers.%d.mlp.fc1.MatMul.weight" % i, F16, [H, ff])],
                  lp + "/mlp/fc1/MatMul")
        act = g.op("FastGelu", [fc, g.init("model.layers.%d.mlp.fc1.bias" % i, F16, [ff])],
                   lp + "/mlp/act_fn/FastGelu", MS)
        skip = linear(lp + "/mlp/fc2", act, ff, H)

    return g.model([("", 17), (MS, 1)], 8, "onnxcost contrib fixtures",
                   "graph-only %s decoder with com.microsoft MultiHeadAttention and a past cache" % cfg["style"])


# ---------------------------------------------------------------------------

LLAMA2 = dict(hidden=4096, heads=32, kv_heads=32, head=128, ff=11008, vocab=32000, layers=2,
              max_pos=4096, theta=10000.0, eps=1e-5)
LLAMA3 = dict(hidden=4096, heads=32, kv_heads=8, head=128, ff=14336, vocab=128256, layers=2,
              max_pos=8192, theta=500000.0, eps=1e-5)
TINY_LLAMA = dict(hidden=128, heads=4, kv_heads=2, head=32, ff=256, vocab=512, layers=2,
                  max_pos=64, theta=10000.0, eps=1e-5)
INT4_SYM32 = dict(block_size=32, symmetric=True, accuracy_level=0)
INT4_ASYM128 = dict(block_size=128, symmetric=False, accuracy_level=4, embedding=True)

BERT_BASE = dict(hidden=768, heads=12, ff=3072, vocab=30522, layers=2, max_pos=512, type_vocab=2)
TINY_BERT = dict(hidden=64, heads=4, ff=128, vocab=256, layers=2, max_pos=32, type_vocab=2)
GPT2 = dict(style="gpt2", hidden=768, heads=12, head=64, ff=3072, vocab=50257, layers=2, max_pos=1024)
TINY_GPT2 = dict(style="gpt2", hidden=64, heads=4, head=16, ff=256, vocab=256, layers=2, max_pos=64)
PHI2 = dict(style="phi", hidden=2560, heads=32, head=80, ff=10240, vocab=51200, layers=2, max_pos=2048,
            rotary_dim=32, theta=10000.0)
TINY_PHI2 = dict(style="phi", hidden=64, heads=4, head=16, ff=256, vocab=256, layers=2, max_pos=64,
                 rotary_dim=8, theta=10000.0)

# name, builder, full config, tiny config, doc
FIXTURES = [
    ("llama_int4_gqa", build_llama, dict(LLAMA2, quant=INT4_SYM32), dict(TINY_LLAMA, quant=INT4_SYM32),
     "LLaMA-2-7B shape, 2 layers, int4 MatMulNBits (block 32, symmetric), GQA"),
    ("llama3_int4_gqa", build_llama, dict(LLAMA3, quant=INT4_ASYM128), dict(TINY_LLAMA, quant=INT4_ASYM128),
     "LLaMA-3-8B shape (8 kv heads), 2 layers, int4 block 128 with zero points, GatherBlockQuantized"),
    ("llama_fp16_gqa", build_llama, dict(LLAMA2, quant=None), dict(TINY_LLAMA, quant=None),
     "LLaMA-2-7B shape, 2 layers, fp16 MatMul, GQA"),
    ("bert_ms_attention", build_bert, BERT_BASE, TINY_BERT,
     "BERT-base, 2 layers, EmbedLayerNormalization + Attention + SkipLayerNormalization + BiasGelu (fp32)"),
    ("gpt2_mha_past", build_mha_decoder, GPT2, TINY_GPT2,
     "GPT-2 small, 2 layers, fp16, MultiHeadAttention with past_key/past_value"),
    ("phi2_rotary_mha", build_mha_decoder, PHI2, TINY_PHI2,
     "Phi-2 shape, 2 layers, fp16, RotaryEmbedding (partial, 32 of 80) + MultiHeadAttention with past"),
    # Last, so that the ones above keep their seeds. onnxruntime runs the
    # packed ops on CUDA only: their --tiny forms do not run on the CPU.
    ("bert_packed", build_bert, dict(BERT_BASE, packing="attention"), dict(TINY_BERT, packing="attention"),
     "bert_ms_attention in onnxruntime's packing mode: RemovePadding, PackedAttention, RestorePadding"),
    ("bert_packed_mha", build_bert, dict(BERT_BASE, packing="mha"), dict(TINY_BERT, packing="mha"),
     "BERT-base with Q/K/V MatMuls in packing mode: RemovePadding, PackedMultiHeadAttention, RestorePadding"),
    ("llama_int4_fused", build_llama, dict(LLAMA2, quant=INT4_SYM32, fused=True), dict(TINY_LLAMA, quant=INT4_SYM32, fused=True),
     "llama_int4_gqa with the RMS norms and Q/K/V, gate/up projections fused: MatMulNBitsQkv, MatMulNBitsMlp"),
]


def feeds(build, cfg):
    """Input shapes for running a tiny model: batch 1, 3 new tokens, 2 past."""
    if build is build_bert:
        return {"input_ids": [1, 5], "attention_mask": [1, 5], "token_type_ids": [1, 5]}
    nkv = cfg.get("kv_heads", cfg["heads"])
    f = {"input_ids": [1, 3], "attention_mask": [1, 5]}
    if build is build_mha_decoder:
        f["position_ids"] = [1, 3]
    for i in range(cfg["layers"]):
        for kv in ("key", "value"):
            f["past_key_values.%d.%s" % (i, kv)] = [1, nkv, 2, cfg["head"]]
    return f


def check(m, name):
    """onnx.checker.check_model (full_check=False) on a copy saved in a
    temporary folder next to a sparse, zero-length-on-disk NAME.onnx.data of
    the right size (the checker wants referenced external files to exist).
    Two edits for the checker only, never written out:
    SimplifiedLayerNormalization (an onnxruntime op registered in the ONNX
    domain) is moved to com.microsoft, which the checker does not look up;
    and where this onnx predates opset 21 (Debian's 1.12 stops at 17),
    opset 21 / IR 10 are lowered to 17 / 8. The ops used here are the same
    in opsets 17 and 21."""
    c = copy.deepcopy(m)
    for n in c.graph.node:
        if n.domain == "" and n.op_type == "SimplifiedLayerNormalization":
            n.domain = MS
    if onnx.defs.onnx_opset_version() < 21:
        c.ir_version = min(c.ir_version, 8)
        for o in c.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = min(o.version, onnx.defs.onnx_opset_version())
    size = 0
    for t in c.graph.initializer:
        if t.data_location == TensorProto.EXTERNAL:
            kv = {e.key: e.value for e in t.external_data}
            size = max(size, int(kv["offset"]) + int(kv["length"]))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".onnx")
        with open(path, "wb") as f:
            f.write(c.SerializeToString())
        if size:
            with open(os.path.join(tmp, name + ".onnx.data"), "wb") as f:
                f.truncate(size)
        onnx.checker.check_model(path, full_check=False)


def summary(m):
    ops = {}
    for n in m.graph.node:
        key = ("%s:" % n.domain if n.domain else "") + n.op_type
        ops[key] = ops.get(key, 0) + 1
    params = 0
    for t in m.graph.initializer:
        params += int(np.prod(list(t.dims), dtype=np.int64)) if t.dims else 1
    return ops, params


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="")
    ap.add_argument("--tiny", action="store_true", help="toy sizes with inline weights (runnable; do not commit)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for name, _, _, _, doc in FIXTURES:
            print("%-20s %s" % (name, doc))
        return 0
    only = [s for s in a.only.split(",") if s]
    unknown = set(only) - {f[0] for f in FIXTURES}
    if unknown:
        print("unknown fixture(s): %s" % ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    for idx, (name, build, full, tiny, _) in enumerate(FIXTURES):
        if only and name not in only:
            continue
        cfg = tiny if a.tiny else full
        m = build(cfg, a.tiny, BASE_SEED + idx, name)
        check(m, name)
        data = m.SerializeToString()
        path = os.path.join(a.out, name + ".onnx")
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        if a.tiny:
            with open(os.path.join(a.out, name + ".feeds.json"), "w") as f:
                json.dump(feeds(build, cfg), f, indent=1, sort_keys=True)
                f.write("\n")
        ops, params = summary(m)
        ext = sum(1 for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL)
        print("%-18s %8d bytes %4d nodes %3d inits (%d ext) %14s params  %s" % (
            name, len(data), len(m.graph.node), len(m.graph.initializer), ext, "{:,}".format(params),
            " ".join("%s:%d" % kv for kv in sorted(ops.items()))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
