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


if __name__ == "__main__":
    main()
