#!/usr/bin/python3
"""Writes the malformed models of cmd/onnxcost/testdata/bad, each of which
onnxcost must reject with exit 2 and a one-line message naming the problem.

    /usr/bin/python3 scripts/make_bad_models.py
"""
import os
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(__file__), "..", "cmd", "onnxcost", "testdata", "bad")


def save(name, graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def main():
    os.makedirs(OUT, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    # a reads b's output and b reads a's: a cycle.
    save("cycle.onnx", helper.make_graph([
        helper.make_node("Add", ["x", "t2"], ["t1"], name="a"),
        helper.make_node("Relu", ["t1"], ["t2"], name="b"),
        helper.make_node("Identity", ["t2"], ["y"], name="c")], "g", [x], [y]))
    save("undefined.onnx", helper.make_graph([
        helper.make_node("Add", ["x", "nowhere"], ["y"], name="a")], "g", [x], [y]))
    big = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2**62])
    save("dim_2pow62.onnx", helper.make_graph([
        helper.make_node("Relu", ["x"], ["y"], name="a")], "g", [big], [y]))
    for name, loc in (("external_escape.onnx", "../../../../etc/passwd"),
                      ("external_absolute.onnx", "/etc/passwd")):
        w = TensorProto()
        w.name, w.data_type = "w", TensorProto.FLOAT
        w.dims.extend([4])
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", "0"), ("length", "16")):
            e = w.external_data.add()
            e.key, e.value = k, v
        save(name, helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="a")],
                                     "g", [x], [y], initializer=[w]))
    operand_mismatches()


def weight(name, dims):
    """A zero-filled float initializer of the given shape."""
    n = 1
    for d in dims:
        n *= d
    return helper.make_tensor(name, TensorProto.FLOAT, dims, [0.0] * n)


def operand_mismatches():
    """Models whose shapes python onnx's checker lets through but no runtime
    could execute: operands that contradict each other."""
    img = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])
    # Conv: 3 input channels, W expects 5 (group 1).
    save("conv_channels.onnx", helper.make_graph([
        helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], "g", [img], [out],
        initializer=[weight("w", [4, 5, 3, 3])]))
    # Grouped Conv: 6 channels, group 4, W [4,2,3,3] takes 8.
    img6 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 8, 8])
    save("conv_group.onnx", helper.make_graph([
        helper.make_node("Conv", ["x", "w"], ["y"], name="conv_g", group=4)], "g", [img6], [out],
        initializer=[weight("w", [4, 2, 3, 3])]))
    # Gemm: [2,3] x [4,5].
    a = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y2 = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", "n"])
    save("gemm_inner.onnx", helper.make_graph([
        helper.make_node("Gemm", ["x", "w"], ["y"], name="fc")], "g", [a], [y2],
        initializer=[weight("w", [4, 5])]))
    # BatchNormalization: 3 channels, scale of 4.
    save("batchnorm_scale.onnx", helper.make_graph([
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")],
        "g", [img], [out],
        initializer=[weight("s", [4]), weight("b", [3]), weight("m", [3]), weight("v", [3])]))
    # MaxPool: a 9x9 window over an 8x8 input, no padding.
    save("pool_window.onnx", helper.make_graph([
        helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[9, 9])],
        "g", [img], [out]))


if __name__ == "__main__":
    main()
