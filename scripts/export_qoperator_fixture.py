#!/usr/bin/python3
"""Write testdata/models/qoperator/qop_cnn.onnx: a small int8 CNN in
onnxruntime's QOperator format, the form its static quantizer writes with
quant_format=QOperator and the ONNX Model Zoo's ...-int8.onnx vision models
take. Every quantized op of that format is in it at least once:

- standard: QuantizeLinear, QLinearConv, DequantizeLinear;
- com.microsoft: QLinearSigmoid and QLinearMul (a swish, as EfficientNet-Lite
  int8), QLinearConcat (an inception-style join), QLinearAveragePool,
  QLinearLeakyRelu, QLinearAdd (a residual), QLinearConv with channels_last
  (what onnxruntime's NHWC transformer writes), QLinearGlobalAveragePool,
  QGemm (the classifier, an int32 bias), QLinearSoftmax and QLinearWhere.

Run with Debian's interpreter (onnx 1.12 and numpy):

    /usr/bin/python3 scripts/export_qoperator_fixture.py [--out DIR]

It also writes qdq_cnn.onnx (the same kind of CNN in the QDQ format, standard ops between
QuantizeLinear and DequantizeLinear, float biases), qdq_attn.onnx (a self-attention block in the
QDQ format), twins.onnx (onnxruntime's com.microsoft QuantizeLinear,
DequantizeLinear, Pad, Trilu, GridSample and GatherND), qbert.onnx, one int8 BERT encoder layer as quantize_dynamic
writes it (QEmbedLayerNormalization, QAttention, MatMulInteger, DynamicQuantizeMatMul),
moe_ffn.onnx, a sparse decoder's expert FFNs (com.microsoft MoE and QMoE),
and qlstm.onnx, two LSTM layers as quantize_dynamic writes them
(com.microsoft DynamicQuantizeLSTM).

The weights are seeded random 8-bit values, inline (the file is a few KB), so
onnxruntime runs it: testdata/models/qoperator/record_ort.js records the
shapes its CPU provider gives every value and a profile
(calib/profile/testdata/fixtures/ort_qop_cnn.json.gz). The batch is the
symbol N. Deterministic: two runs write identical bytes.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


class Graph:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits = [], []
        self.n = 0

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def scale(self, name, v):
        return self.init(name, np.array(v, np.float32))

    def zp(self, name, v=128):
        return self.init(name, np.array(v, np.uint8))

    def weight(self, name, shape, dtype=np.uint8):
        lo, hi = (100, 156) if dtype == np.uint8 else (-28, 28)
        return self.init(name, self.rng.randint(lo, hi, size=shape).astype(dtype))

    def model(self, name, inputs, outputs):
        """The graph as a model of opset 13 and com.microsoft 1."""
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)],
                              producer_name="onnxcost scripts/export_qoperator_fixture.py")
        m.ir_version = 7
        return m

    def node(self, op, ins, out, domain="", **attrs):
        self.n += 1
        self.nodes.append(helper.make_node(op, ins, [out], name="%s_%d" % (op, self.n), domain=domain, **attrs))
        return out

    def qconv(self, x, xs, cin, cout, k, stride, name, domain="", **attrs):
        w = self.weight(name + "_w", (cout, cin, k, k))
        b = self.init(name + "_b", self.rng.randint(-64, 64, size=cout).astype(np.int32))
        ys = self.scale(name + "_ys", 0.05)
        return self.node("QLinearConv", [x, xs, "z", w, self.scale(name + "_ws", 0.01), "z", ys, "z", b], name, domain,
                         kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride], **attrs), ys


def build():
    g = Graph(seed=20261201)
    g.zp("z")
    x = "x"
    xs = g.scale("x_scale", 0.02)
    xq = g.node("QuantizeLinear", [x, xs, "z"], "xq")
    stem, ss = g.qconv(xq, xs, 3, 16, 3, 2, "stem")
    sig_s = g.scale("sig_s", 1 / 255.0)
    sig = g.node("QLinearSigmoid", [stem, ss, "z", sig_s, "z"], "stem_sig", MS)
    sw_s = g.scale("swish_s", 0.05)
    sw = g.node("QLinearMul", [stem, ss, "z", sig, sig_s, "z", sw_s, "z"], "swish", MS)
    a, a_s = g.qconv(sw, sw_s, 16, 16, 1, 1, "branch_a")
    b, b_s = g.qconv(sw, sw_s, 16, 8, 3, 1, "branch_b")
    cat_s = g.scale("cat_s", 0.05)
    cat = g.node("QLinearConcat", [cat_s, "z", a, a_s, "z", b, b_s, "z"], "concat", MS, axis=1)
    pool = g.node("QLinearAveragePool", [cat, cat_s, "z", cat_s, "z"], "pool", MS, kernel_shape=[2, 2], strides=[2, 2])
    lr_s = g.scale("leaky_s", 0.05)
    lr = g.node("QLinearLeakyRelu", [pool, cat_s, "z", lr_s, "z"], "leaky", MS, alpha=0.1)
    c, c_s = g.qconv(lr, lr_s, 24, 24, 3, 1, "res")
    add_s = g.scale("add_s", 0.08)
    res = g.node("QLinearAdd", [lr, lr_s, "z", c, c_s, "z", add_s, "z"], "residual", MS)
    nhwc = g.node("Transpose", [res], "res_nhwc", perm=[0, 2, 3, 1])
    down, d_s = g.qconv(nhwc, add_s, 24, 32, 3, 2, "down_nhwc", MS, channels_last=1)
    nchw = g.node("Transpose", [down], "down", perm=[0, 3, 1, 2])
    gap_s = g.scale("gap_s", 0.05)
    gap = g.node("QLinearGlobalAveragePool", [nchw, d_s, "z", gap_s, "z"], "gap", MS, channels_last=0)
    flat = g.node("Flatten", [gap], "flat", axis=1)
    fc_w = g.weight("fc_w", (10, 32), np.int8)
    fc_b = g.init("fc_b", g.rng.randint(-256, 256, size=10).astype(np.int32))
    logit_s = g.scale("logit_s", 0.1)
    logits = g.node("QGemm", [flat, gap_s, "z", fc_w, g.scale("fc_ws", 0.01), g.init("fc_wz", np.array(0, np.int8)),
                              fc_b, logit_s, "z"], "logits", MS, transB=1)
    prob_s = g.scale("prob_s", 1 / 255.0)
    prob = g.node("QLinearSoftmax", [logits, logit_s, "z", prob_s, "z"], "prob", MS, axis=-1, opset=13)
    keep = g.init("keep", np.array([True, True, False, True, True, True, False, True, True, True]))
    floor = g.init("floor", np.full(10, 128, np.uint8))
    masked = g.node("QLinearWhere", [keep, prob, prob_s, "z", floor, prob_s, "z", prob_s, "z"], "masked", MS)
    g.node("DequantizeLinear", [masked, prob_s, "z"], "y")
    return g.model("qop_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 64, 64])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])])


def build_qdq():
    """qdq_cnn.onnx: a small int8 CNN in the QDQ format (standard ops only: each float op between a
    DequantizeLinear per input and a QuantizeLinear on its output, int8 weights through their own
    DequantizeLinear), what onnxruntime's static quantizer writes by default and what QAT exports
    take. Its Convs and Gemm keep float biases, which onnxruntime quantizes itself
    (bias_quantization.cc: an inserted "<node>_bias_dq"), and one DequantizeLinear feeds two nodes (a
    residual), which it duplicates ("<dq>/duplicated"); its MaxPool has no Q/DQ of its own, which
    it adds ("<tensor>_q", "<tensor>_dq"); at level all it fuses the groups into
    QLinearConv and friends and runs one convolution channels-last between its own transposes."""
    g = Graph(seed=20261204)
    g.zp("z")
    g.init("wz", np.array(0, np.int8))

    def dq(x, xs):
        return g.node("DequantizeLinear", [x, xs, "z"], x + "_f")

    def q(y, name, v=0.05):
        ys = g.scale(name + "_s", v)
        return g.node("QuantizeLinear", [y, ys, "z"], name), ys

    def conv(xf, cin, cout, k, stride, name):
        w = g.node("DequantizeLinear", [g.weight(name + "_w", (cout, cin, k, k), np.int8), g.scale(name + "_ws", 0.01), "wz"],
                   name + "_wf")
        b = g.init(name + "_b", (g.rng.randn(cout) * 0.1).astype(np.float32))
        return g.node("Conv", [xf, w, b], name + "_y", kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride])

    xs = g.scale("x_scale", 0.02)
    xq = g.node("QuantizeLinear", ["x", xs, "z"], "xq")
    stem, ss = q(g.node("Relu", [conv(dq(xq, xs), 3, 16, 3, 2, "stem")], "stem_relu"), "stem_q")
    stem_f = dq(stem, ss)  # read by the next conv and by the residual add: one DequantizeLinear, two nodes
    a, a_s = q(g.node("Relu", [conv(stem_f, 16, 16, 3, 1, "block_a")], "block_a_relu"), "block_a_q")
    b, b_s = q(conv(dq(a, a_s), 16, 16, 3, 1, "block_b"), "block_b_q")
    r, r_s = q(g.node("Add", [dq(b, b_s), stem_f], "residual_y"), "residual", 0.08)
    # No Q/DQ after the MaxPool, as the quantizer leaves it: onnxruntime's QDQ propagation inserts
    # them ("<tensor>_q", "<tensor>_dq", "<tensor>_dq1": two readers).
    pool_f = g.node("MaxPool", [dq(r, r_s)], "pool_y", kernel_shape=[2, 2], strides=[2, 2])
    c, c_s = q(conv(pool_f, 16, 24, 1, 1, "expand"), "expand_q")
    cat, cat_s = q(g.node("Concat", [dq(c, c_s), pool_f], "concat_y", axis=1), "concat", 0.08)
    gap, gap_s = q(g.node("GlobalAveragePool", [dq(cat, cat_s)], "gap_y"), "gap")
    flat = g.node("Flatten", [dq(gap, gap_s)], "flat", axis=1)
    fc_w = g.node("DequantizeLinear", [g.weight("fc_w", (10, 40), np.int8), g.scale("fc_ws", 0.01), "wz"], "fc_wf")
    g.node("Gemm", [flat, fc_w, g.init("fc_b", (g.rng.randn(10) * 0.1).astype(np.float32))], "y", transB=1)
    return g.model("qdq_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 64, 64])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])])


def build_qdq_attn():
    """qdq_attn.onnx: one self-attention block in the QDQ format (hidden 32, sequence 16, one
    head; the quantizer's form for a transformer: int8 weights through DequantizeLinear, Q/DQ
    after each MatMul, Add, Softmax and LayerNormalization), whose key Transpose has no Q/DQ of
    its own: onnxruntime's QDQ propagation adds a pair after it ("kt_q", "kt_dq"), and onnxcost's
    plan folds the Transpose into the scores' MatMul."""
    g = Graph(seed=20261205)
    g.init("wz", np.array(0, np.int8))
    g.init("az", np.array(0, np.int8))

    def qdq(x, name, v=0.05):
        xs = g.scale(name + "_s", v)
        q = g.node("QuantizeLinear", [x, xs, "az"], name + "_q")
        return g.node("DequantizeLinear", [q, xs, "az"], name + "_f")

    def linear(x, din, dout, name):
        w = g.node("DequantizeLinear", [g.weight(name + "_w", (din, dout), np.int8), g.scale(name + "_ws", 0.01), "wz"],
                   name + "_wf")
        y = g.node("MatMul", [x, w], name + "_mm")
        return g.node("Add", [y, g.init(name + "_b", (g.rng.randn(dout) * 0.1).astype(np.float32))], name + "_y")

    d = 32
    x = qdq("x", "in", 0.02)
    q, k, v = (qdq(linear(x, d, d, n), n + "_a") for n in ("q", "k", "v"))
    kt = g.node("Transpose", [k], "kt", perm=[0, 2, 1])
    p = qdq(g.node("Softmax", [qdq(g.node("MatMul", [q, kt], "scores"), "scores_a")], "probs", axis=-1), "probs_a", 1 / 255.0)
    ctx = qdq(g.node("MatMul", [p, v], "context"), "context_a")
    res = qdq(g.node("Add", [qdq(linear(ctx, d, d, "o"), "o_a"), x], "residual"), "residual_a", 0.08)
    ln = g.node("LayerNormalization", [res, g.init("ln_g", np.ones(d, np.float32)), g.init("ln_b", np.zeros(d, np.float32))],
                "ln", axis=-1)
    h = qdq(g.node("Relu", [linear(qdq(ln, "ln_a"), d, 4 * d, "fc1")], "fc1_relu"), "fc1_a")
    y = linear(h, 4 * d, d, "fc2")
    m = g.model("qdq_attn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, d])],
                [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["N", 16, d])])
    m.opset_import[0].version = 17  # LayerNormalization
    return m


def build_bert():
    """One int8 BERT encoder layer as onnxruntime's quantize_dynamic writes it
    for a model its transformers optimizer fused: QEmbedLayerNormalization,
    DynamicQuantizeLinear into QAttention, the attention output Linear in
    quantize_dynamic's raw form (DynamicQuantizeLinear, MatMulInteger, Cast,
    the scales' Mul, the bias Add), SkipLayerNormalization, and the FFN as
    DynamicQuantizeMatMul, FastGelu, DynamicQuantizeMatMul. Batch N and
    sequence S are symbols; hidden 32, 4 heads, FFN 64."""
    g = Graph(seed=20261202)
    hid, ffn, vocab, npos = 32, 64, 50, 32
    ids, seg, mask = "input_ids", "segment_ids", "input_mask"

    def q8(name, shape):
        return g.weight(name, shape, np.uint8)

    scales = [g.scale("emb_%s_s" % k, 0.02) for k in ("word", "pos", "seg", "gamma", "beta")]
    zps = [g.zp("emb_%s_z" % k) for k in ("word", "pos", "seg", "gamma", "beta")]
    g.nodes.append(helper.make_node(
        "QEmbedLayerNormalization",
        [ids, seg, q8("word_q", (vocab, hid)), q8("pos_q", (npos, hid)), q8("seg_q", (2, hid)), q8("gamma_q", (hid,)),
         q8("beta_q", (hid,)), mask] + scales + zps,
        ["emb", "mask_index"], name="QEmbedLayerNormalization_1", domain=MS, epsilon=1e-12))

    def dyn_quant(x, tag):
        g.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [x + "_q", x + "_s", x + "_z"], name="DQL_" + tag))
        return x + "_q", x + "_s", x + "_z"

    xq, xs, xz = dyn_quant("emb", "emb")
    g.nodes.append(helper.make_node(
        "QAttention",
        [xq, g.weight("qkv_w", (hid, 3 * hid), np.int8), g.init("qkv_b", g.rng.uniform(-0.1, 0.1, 3 * hid).astype(np.float32)),
         xs, g.scale("qkv_ws", 0.01), "mask_index", xz, g.init("qkv_wz", np.array(0, np.int8))],
        ["att"], name="QAttention_1", domain=MS, num_heads=4))
    aq, a_s, az = dyn_quant("att", "att")
    wo_z = g.init("wo_z", np.array(0, np.int8))
    mm = g.node("MatMulInteger", [aq, g.weight("wo_q", (hid, hid), np.int8), az, wo_z], "att_mm")
    f = g.node("Cast", [mm], "att_mm_f", to=TensorProto.FLOAT)
    sc = g.node("Mul", [a_s, g.scale("wo_s", 0.01)], "att_scale")
    y = g.node("Mul", [f, sc], "att_proj")
    y = g.node("Add", [y, g.init("wo_b", g.rng.uniform(-0.1, 0.1, hid).astype(np.float32))], "att_out")

    def ln(tag):
        return (g.init(tag + "_g", np.ones(hid, np.float32)), g.init(tag + "_b", np.zeros(hid, np.float32)))

    g1, b1 = ln("ln1")
    g.nodes.append(helper.make_node("SkipLayerNormalization", [y, "emb", g1, b1], ["ln1"], name="SkipLayerNorm_1",
                                    domain=MS, epsilon=1e-12))
    h = g.node("DynamicQuantizeMatMul", ["ln1", g.weight("w1_q", (hid, ffn), np.int8), g.scale("w1_s", 0.01),
                                         g.init("w1_z", np.array(0, np.int8)),
                                         g.init("w1_b", g.rng.uniform(-0.1, 0.1, ffn).astype(np.float32))], "ffn1", MS)
    a = g.node("FastGelu", [h], "gelu", MS)
    o = g.node("DynamicQuantizeMatMul", [a, g.weight("w2_q", (ffn, hid), np.int8), g.scale("w2_s", 0.01),
                                         g.init("w2_z", np.array(0, np.int8))], "ffn2", MS)
    g2, b2 = ln("ln2")
    g.nodes.append(helper.make_node("SkipLayerNormalization", [o, "ln1", g2, b2], ["y"], name="SkipLayerNorm_2",
                                    domain=MS, epsilon=1e-12))
    return g.model("qbert_layer", [helper.make_tensor_value_info(v, TensorProto.INT32, ["N", "S"]) for v in (ids, seg, mask)],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", hid])])


def build_moe():
    """Two sparse expert FFNs as onnxruntime-genai's builder writes a
    Mixtral- or Phi-MoE-style decoder's: the router a MatMul, then
    com.microsoft MoE (4 experts, top 2, SwiGLU with fc1 and its gate fused,
    biases) with a residual Add, then QMoE (4-bit experts with per-channel
    scales, top 2, SwiGLU fused). Tokens are N·S (batch N, sequence S)."""
    g = Graph(seed=20261203)
    hid, inter, nexp = 16, 32, 4
    g.nodes.append(helper.make_node("Shape", ["x"], ["x_shape"], name="Shape_0"))
    rows = g.node("Reshape", ["x", g.init("rows_shape", np.array([-1, hid], np.int64))], "rows")

    def router(x, tag):
        return g.node("MatMul", [x, g.init(tag + "_gate", g.rng.uniform(-1, 1, (hid, nexp)).astype(np.float32))], tag + "_logits")

    def f32(name, shape, scale=0.1):
        return g.init(name, (g.rng.uniform(-1, 1, shape) * scale).astype(np.float32))

    moe = g.node("MoE", [rows, router(rows, "moe"), f32("moe_w1", (nexp, 2 * inter, hid)), f32("moe_b1", (nexp, 2 * inter)),
                         f32("moe_w2", (nexp, hid, inter))], "moe_out", MS,
                 k=2, activation_type="swiglu", swiglu_fusion=1, normalize_routing_weights=1)
    res = g.node("Add", [rows, moe], "residual")
    q = g.node("QMoE", [res, router(res, "qmoe"), g.weight("qmoe_w1", (nexp, 2 * inter, hid // 2)),
                        g.init("qmoe_s1", np.full((nexp, 2 * inter), 0.01, np.float32)), "",
                        g.weight("qmoe_w2", (nexp, hid, inter // 2)), g.init("qmoe_s2", np.full((nexp, hid), 0.01, np.float32))],
               "qmoe_out", MS, k=2, activation_type="swiglu", swiglu_fusion=1, expert_weight_bits=4)
    g.node("Reshape", [q, "x_shape"], "y")
    return g.model("moe_ffn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", hid])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", hid])])


def build_twins():
    """onnxruntime's com.microsoft twins of standard ops: 16-bit
    QuantizeLinear/DequantizeLinear (what its quantizer writes for A16
    models and with UseQDQContribOps), then Pad, Trilu, GridSample and
    GatherND as older exporters wrote them in its domain."""
    g = Graph(seed=20261204)
    q = g.node("QuantizeLinear", ["x", g.scale("x_scale", 0.001), g.init("x_zp", np.array(32768, np.uint16))], "x_q", MS)
    d = g.node("DequantizeLinear", [q, "x_scale", "x_zp"], "x_dq", MS)
    p = g.node("Pad", [d, g.init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], "padded", MS)
    t = g.node("Trilu", [p], "upper", MS, upper=1)
    s = g.node("GridSample", [t, "grid"], "sampled", MS, align_corners=0)
    g.node("GatherND", [s, g.init("first", np.array([[0]], np.int64))], "y", MS)
    return g.model("twins", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8]),
                             helper.make_tensor_value_info("grid", TensorProto.FLOAT, ["N", 6, 6, 2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])])


def build_qlstm():
    """Two LSTM layers as onnxruntime's quantize_dynamic writes them
    (quantization/operators/lstm.py): DynamicQuantizeLSTM, the 8-bit
    weights transposed to W [dirs, input, 4*hidden] and R [dirs, hidden,
    4*hidden], then W_scale, W_zero_point, R_scale, R_zero_point. A
    bidirectional layer (input 8, hidden 16, a bias) with per-channel
    scales [2, 64]; its Y [S, 2, N, 16] transposed and reshaped to
    [S, N, 32]; a forward layer with per-tensor scales [1] giving only
    Y_h and Y_c. The sequence is S, the batch N."""
    g = Graph(seed=20261205)
    hid = 16

    def qlstm(x, inp, dirs, per_channel, outs, name, **attrs):
        w = g.weight(name + "_W", (dirs, inp, 4 * hid), np.int8)
        r = g.weight(name + "_R", (dirs, hid, 4 * hid), np.int8)
        b = g.init(name + "_B", (g.rng.uniform(-1, 1, (dirs, 8 * hid)) * 0.1).astype(np.float32))
        qshape = (dirs, 4 * hid) if per_channel else (dirs,)
        q = [g.init(name + "_W_scale", np.full(qshape, 0.01, np.float32)), g.init(name + "_W_zero_point", np.zeros(qshape, np.int8)),
             g.init(name + "_R_scale", np.full(qshape, 0.01, np.float32)), g.init(name + "_R_zero_point", np.zeros(qshape, np.int8))]
        g.nodes.append(helper.make_node("DynamicQuantizeLSTM", [x, w, r, b, "", "", "", ""] + q, outs, name=name, domain=MS,
                                        hidden_size=hid, **attrs))

    qlstm("x", 8, 2, True, ["y1"], "lstm_1_quant", direction="bidirectional")
    t = g.node("Transpose", ["y1"], "y1_t", perm=[0, 2, 1, 3])
    h = g.node("Reshape", [t, g.init("merge_dirs", np.array([0, 0, -1], np.int64))], "h1")
    qlstm(h, 2 * hid, 1, False, ["", "y_h", "y_c"], "lstm_2_quant")
    return g.model("qlstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", "N", 8])],
                   [helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [1, "N", hid]),
                    helper.make_tensor_value_info("y_c", TensorProto.FLOAT, [1, "N", hid])])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "testdata", "models", "qoperator"))
    ap.add_argument("--all-outputs", action="store_true",
                    help="make every node's output a graph output (for record_ort.js, which reads their shapes; not committed)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for base, m in (("qop_cnn", build()), ("qbert", build_bert()), ("moe_ffn", build_moe()), ("twins", build_twins()),
                    ("qlstm", build_qlstm()), ("qdq_cnn", build_qdq()), ("qdq_attn", build_qdq_attn())):
        onnx.checker.check_model(m)
        name = base + ".onnx"
        if a.all_outputs:
            del m.graph.output[:]
            m.graph.output.extend(helper.make_empty_tensor_value_info(o) for n in m.graph.node for o in n.output if o)
            name = base + "_all_outputs.onnx"
        path = os.path.join(a.out, name)
        onnx.save(m, path)
        print(path, os.path.getsize(path), "bytes,", len(m.graph.node), "nodes")


if __name__ == "__main__":
    main()
