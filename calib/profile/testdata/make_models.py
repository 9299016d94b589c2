#!/usr/bin/python3
"""Writes the small models (weights included) that profile_ort.js runs
under onnxruntime to record the real profiles in this directory.

Run: /usr/bin/python3 make_models.py   (onnx 1.12, numpy; deterministic:
fixed seed, fixed node names in torch.onnx's scope style).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20240601)


class Graph:
    """Collects nodes and initializers with torch.onnx-style names."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def w(self, name, shape, scale=0.1):
        arr = (RNG.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def c(self, name, value, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def n(self, op, name, inputs, **attrs):
        out = name + "_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out


def save(g, name, inp, out, in_shape, out_shape, named=True, opset=17):
    if not named:
        for n in g.nodes:
            n.name = ""
    graph = helper.make_graph(
        g.nodes, name,
        [helper.make_tensor_value_info(inp, TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
        g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="onnxcost-calib-profile")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(HERE, "models", name + ".onnx")
    onnx.save(model, path)
    print(path, os.path.getsize(path), "bytes,", len(g.nodes), "nodes")


def conv_bn(g, scope, x, cin, cout, relu=True):
    """Conv (with bias) + BatchNormalization (+ Relu), as torch exports a
    conv layer in training-mode export (BN left unfolded)."""
    y = g.n("Conv", f"/{scope}/conv/Conv",
            [x, g.w(f"{scope}.conv.weight", [cout, cin, 3, 3]), g.w(f"{scope}.conv.bias", [cout])],
            kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    bn = [g.c(f"{scope}.bn.{k}", v) for k, v in (
        ("weight", np.ones(cout)), ("bias", np.zeros(cout)),
        ("running_mean", RNG.standard_normal(cout) * 0.1), ("running_var", np.ones(cout)))]
    y = g.n("BatchNormalization", f"/{scope}/bn/BatchNormalization", [y] + bn, epsilon=1e-5)
    if relu:
        y = g.n("Relu", f"/{scope}/relu/Relu", [y])
    return y


def cnn():
    """A ResNet-like CNN: stem, one residual block, pool, classifier."""
    g = Graph()
    x = conv_bn(g, "stem", "input", 3, 16)
    x = g.n("MaxPool", "/pool/MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    y = conv_bn(g, "layer1/layer1.0/a", x, 16, 16)
    y = conv_bn(g, "layer1/layer1.0/b", y, 16, 16, relu=False)
    x = g.n("Add", "/layer1/layer1.0/Add", [y, x])
    x = g.n("Relu", "/layer1/layer1.0/relu/Relu", [x])
    x = g.n("GlobalAveragePool", "/avgpool/GlobalAveragePool", [x])
    x = g.n("Flatten", "/Flatten", [x], axis=1)
    x = g.n("Gemm", "/fc/Gemm", [x, g.w("fc.weight", [10, 16]), g.w("fc.bias", [10])],
            transB=1)
    save(g, "cnn", "input", x, [1, 3, 64, 64], [1, 10])


def dense():
    """A DenseNet-like block: two convolutions' outputs
    concatenated, then BatchNormalization + Relu with no convolution
    before them to fold into, a 1x1 transition convolution and a pool.
    On the CPU onnxruntime's NCHWc transformer runs that BatchNormalization
    as a Conv named after its output ("<output>_bn_nchwc")."""
    g = Graph()
    a = g.n("Conv", "/stem/Conv", ["input", g.w("stem.weight", [32, 3, 3, 3])],
            kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    a = g.n("Relu", "/stem/Relu", [a])
    b = g.n("Conv", "/block/conv1/Conv", [a, g.w("block.conv1.weight", [32, 32, 3, 3])],
            kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    c = g.n("Conv", "/block/conv2/Conv", [a, g.w("block.conv2.weight", [32, 32, 1, 1])],
            kernel_shape=[1, 1])
    x = g.n("Concat", "/block/Concat", [b, c], axis=1)
    bn = [g.c(f"trans.norm.{k}", v) for k, v in (
        ("weight", np.ones(64)), ("bias", np.zeros(64)),
        ("running_mean", RNG.standard_normal(64) * 0.1), ("running_var", np.ones(64)))]
    x = g.n("BatchNormalization", "/trans/norm/BatchNormalization", [x] + bn, epsilon=1e-5)
    x = g.n("Relu", "/trans/relu/Relu", [x])
    x = g.n("Conv", "/trans/conv/Conv", [x, g.w("trans.conv.weight", [32, 64, 1, 1])],
            kernel_shape=[1, 1])
    x = g.n("AveragePool", "/trans/pool/AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
    # Opset 13, as torchvision's DenseNet exports: the NCHWc transformer
    # takes BatchNormalization 7 and 9 only.
    save(g, "dense", "input", x, [1, 3, 32, 32], [1, 32, 16, 16], opset=13)


def half():
    """An fp16 MLP block with onnxruntime's own FastGelu (com.microsoft).
    The CPU provider runs fp16 through fp32 kernels: onnxruntime inserts
    Casts named "InsertedPrecisionFreeCast_<tensor>" around them and, with
    no fp16 FastGelu kernel, inlines FastGelu's function body as Mul, Add
    and Tanh nodes with generated names."""
    d, ff = 64, 256
    g = Graph()

    def w16(name, shape):
        arr = (RNG.standard_normal(shape) * 0.1).astype(np.float16)
        g.inits.append(numpy_helper.from_array(arr, name))
        return name

    h = g.n("LayerNormalization", "/ln/LayerNormalization",
            ["input", w16("ln.weight", [d]), w16("ln.bias", [d])], axis=-1)
    h = g.n("MatMul", "/fc1/MatMul", [h, w16("fc1.weight", [d, ff])])
    g.nodes.append(helper.make_node("FastGelu", [h, w16("fc1.bias", [ff])], ["/act/FastGelu_output_0"],
                                    name="/act/FastGelu", domain="com.microsoft"))
    h = g.n("MatMul", "/fc2/MatMul", ["/act/FastGelu_output_0", w16("fc2.weight", [ff, d])])
    x = g.n("Add", "/Add", ["input", h])
    graph = helper.make_graph(
        g.nodes, "half",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT16, [1, 8, d])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT16, [1, 8, d])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="onnxcost-calib-profile")
    model.ir_version = 8
    path = os.path.join(HERE, "models", "half.onnx")
    onnx.save(model, path)
    print(path, os.path.getsize(path), "bytes,", len(g.nodes), "nodes")


def linear(g, scope, x, din, dout):
    y = g.n("MatMul", f"/{scope}/MatMul", [x, g.w(f"{scope}.weight", [din, dout])])
    return g.n("Add", f"/{scope}/Add", [y, g.w(f"{scope}.bias", [dout], 0.01)])


def layernorm_decomposed(g, scope, x, d):
    """LayerNorm as older exporters wrote it (ORT fuses it back)."""
    mean = g.n("ReduceMean", f"/{scope}/ReduceMean", [x], axes=[-1])
    diff = g.n("Sub", f"/{scope}/Sub", [x, mean])
    sq = g.n("Pow", f"/{scope}/Pow", [diff, g.c(f"{scope}.two", 2.0)])
    var = g.n("ReduceMean", f"/{scope}/ReduceMean_1", [sq], axes=[-1])
    var = g.n("Add", f"/{scope}/Add", [var, g.c(f"{scope}.eps", 1e-5)])
    std = g.n("Sqrt", f"/{scope}/Sqrt", [var])
    y = g.n("Div", f"/{scope}/Div", [diff, std])
    y = g.n("Mul", f"/{scope}/Mul", [y, g.c(f"{scope}.weight", np.ones(d))])
    return g.n("Add", f"/{scope}/Add_1", [y, g.c(f"{scope}.bias", np.zeros(d))])


def gelu_erf(g, scope, x):
    """Gelu written with Erf, as torch exports nn.GELU before opset 20."""
    y = g.n("Div", f"/{scope}/Div", [x, g.c(f"{scope}.sqrt2", 1.4142135)])
    y = g.n("Erf", f"/{scope}/Erf", [y])
    y = g.n("Add", f"/{scope}/Add", [y, g.c(f"{scope}.one", 1.0)])
    y = g.n("Mul", f"/{scope}/Mul", [x, y])
    return g.n("Mul", f"/{scope}/Mul_1", [y, g.c(f"{scope}.half", 0.5)])


def attention(g, x, s, d, heads):
    hd = d // heads
    shape = g.c("attn.shape", [1, s, heads, hd], np.int64)
    back = g.c("attn.shape_back", [1, s, d], np.int64)

    def split(name, t, perm):
        t = g.n("Reshape", f"/attn/{name}/Reshape", [t, shape])
        return g.n("Transpose", f"/attn/{name}/Transpose", [t], perm=perm)

    q = split("q", linear(g, "attn/q", x, d, d), [0, 2, 1, 3])
    k = split("k", linear(g, "attn/k", x, d, d), [0, 2, 3, 1])
    v = split("v", linear(g, "attn/v", x, d, d), [0, 2, 1, 3])
    a = g.n("MatMul", "/attn/MatMul", [q, k])
    a = g.n("Div", "/attn/Div", [a, g.c("attn.scale", float(np.sqrt(hd)))])
    a = g.n("Softmax", "/attn/Softmax", [a], axis=-1)
    o = g.n("MatMul", "/attn/MatMul_1", [a, v])
    o = g.n("Transpose", "/attn/Transpose", [o], perm=[0, 2, 1, 3])
    o = g.n("Reshape", "/attn/Reshape", [o, back])
    return linear(g, "attn/out", o, d, d)


def transformer(name="transformer", named=True):
    """One pre-LN transformer block: decomposed LayerNorm, attention,
    residual, LayerNormalization, MLP with Erf Gelu, residual. Unnamed
    (named=False), its nodes carry the names onnxruntime generates."""
    s, d, heads, ff = 32, 64, 4, 128
    g = Graph()
    h = layernorm_decomposed(g, "ln1", "input", d)
    x = g.n("Add", "/Add", ["input", attention(g, h, s, d, heads)])
    h = g.n("LayerNormalization", "/ln2/LayerNormalization",
            [x, g.c("ln2.weight", np.ones(d)), g.c("ln2.bias", np.zeros(d))], axis=-1)
    h = linear(g, "mlp/fc1", h, d, ff)
    h = gelu_erf(g, "mlp/act", h)
    h = linear(g, "mlp/fc2", h, ff, d)
    x = g.n("Add", "/Add_1", [x, h])
    save(g, name, "input", x, [1, s, d], [1, s, d], named)


def shapes():
    """What torch.onnx writes around a linear layer and a flatten, which
    onnxruntime runs as nodes of their own when its optimisations are off
    and onnxcost's plans remove: an Identity on a weight, a Dropout at
    inference, the Shape -> Gather -> Unsqueeze -> Concat chain of a
    dynamic reshape."""
    g = Graph()
    w = g.n("Identity", "/Identity", [g.w("fc.weight", [16, 32])])
    h = g.n("MatMul", "/fc/MatMul", ["input", w])
    h = g.n("Relu", "/act/Relu", [h])
    h = g.n("Dropout", "/drop/Dropout", [h])
    b = g.n("Shape", "/Shape", [h])
    b = g.n("Gather", "/Gather", [b, g.c("gather.index", 0, np.int64)], axis=0)
    b = g.n("Unsqueeze", "/Unsqueeze", [b, g.c("unsqueeze.axes", [0], np.int64)])
    b = g.n("Concat", "/Concat", [b, g.c("concat.rest", [-1], np.int64)], axis=0)
    out = g.n("Reshape", "/Reshape", [h, b])
    save(g, "shapes", "input", out, [1, 8, 16], [1, 256])


if __name__ == "__main__":
    cnn()
    transformer()
    shapes()
    transformer("transformer_noname", named=False)
    dense()
    half()
