#!/usr/bin/python3
"""Write the source of testdata/models/ortsaved/ort_fusions_opt.onnx: a small
float CNN with a classifier, then two 8-bit linears as onnxruntime's
quantize_dynamic writes them (DynamicQuantizeLinear -> MatMulInteger -> Cast
-> Mul, and a static QuantizeLinear -> MatMulInteger -> Cast -> Mul).

onnxruntime, loading it at level extended with optimized_model_filepath set,
saves the graph its CPU provider runs: Conv+Relu and Conv+LeakyRelu as
com.microsoft FusedConv, Gemm+Relu as FusedGemm, the dynamic linear as
DynamicQuantizeMatMul (testdata/models/ortsaved/record_ort.js does that and
commits the saved model). Run with Debian's interpreter (onnx 1.12, numpy):

    /usr/bin/python3 scripts/export_ort_saved_fixture.py --out DIR   # writes DIR/ort_fusions_src.onnx

Seeded weights, inline; deterministic.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build():
    rng = np.random.RandomState(20261201)
    inits, nodes = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out + "_node", **attrs))
        return out

    def weight(name, *shape):
        return init(name, (rng.randn(*shape) * 0.1).astype(np.float32))

    c1 = node("Conv", ["x", weight("w1", 8, 3, 3, 3), init("b1", np.zeros(8, np.float32))], "c1", pads=[1, 1, 1, 1])
    r1 = node("Relu", [c1], "r1")
    c2 = node("Conv", [r1, weight("w2", 8, 8, 3, 3), init("b2", np.zeros(8, np.float32))], "c2", pads=[1, 1, 1, 1])
    a2 = node("Add", [c2, r1], "a2")
    r2 = node("Relu", [a2], "r2")
    c3 = node("Conv", [r2, weight("w3", 16, 8, 3, 3)], "c3", pads=[1, 1, 1, 1], strides=[2, 2])
    s3 = node("LeakyRelu", [c3], "s3", alpha=0.1)
    gap = node("GlobalAveragePool", [s3], "gap")
    flat = node("Flatten", [gap], "flat", axis=1)
    fc1 = node("Gemm", [flat, weight("fw1", 64, 16), init("fb1", np.zeros(64, np.float32))], "fc1", transB=1)
    h = node("Relu", [fc1], "fc1_relu")
    # quantize_dynamic's form of a linear layer.
    nodes.append(helper.make_node("DynamicQuantizeLinear", [h], ["hq", "hq_scale", "hq_zp"], name="hq_node"))
    mm = node("MatMulInteger", ["hq", init("w_q", rng.randint(0, 255, size=(64, 10)).astype(np.uint8)), "hq_zp",
                                init("w_zp", np.array(128, np.uint8))], "mm_int")
    mf = node("Cast", [mm], "mm_f", to=TensorProto.FLOAT)
    sc = node("Mul", ["hq_scale", init("w_scale", np.array(0.01, np.float32))], "mm_scale")
    deq = node("Mul", [mf, sc], "mm_deq")
    node("Add", [deq, init("fc2_b", np.zeros(10, np.float32))], "y")
    # A statically quantized one.
    aq = node("QuantizeLinear", [h, init("a_scale", np.array(0.05, np.float32)), init("a_zp", np.array(0, np.uint8))], "aq")
    mm2 = node("MatMulInteger", [aq, init("w2_q", rng.randint(0, 255, size=(64, 6)).astype(np.uint8)), "a_zp",
                                 init("w2_zp", np.array(128, np.uint8))], "mm2_int")
    mf2 = node("Cast", [mm2], "mm2_f", to=TensorProto.FLOAT)
    sc2 = node("Mul", ["a_scale", init("w2_scale", np.array(0.02, np.float32))], "mm2_scale")
    node("Mul", [mf2, sc2], "z")
    graph = helper.make_graph(nodes, "ort_fusions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 6])], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxcost scripts/export_ort_saved_fixture.py")
    m.ir_version = 7
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    m = build()
    onnx.checker.check_model(m)
    path = os.path.join(a.out, "ort_fusions_src.onnx")
    onnx.save(m, path)
    print(path)


if __name__ == "__main__":
    main()
