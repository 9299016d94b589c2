#!/usr/bin/python3
"""Generate the feature models of ir/testdata/roundtrip (run from that
folder with Debian's python3-onnx 1.12): a sparse initializer, fp16 and
bf16 and string tensors, typed (non-raw) data fields, a custom-domain op,
a model-local function, and external data (present and missing)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

op13 = [helper.make_opsetid("", 13)]

# Sparse initializer plus typed-field tensors of several dtypes.
sparse = helper.make_sparse_tensor(
    helper.make_tensor("sp", TensorProto.FLOAT, [2], [1.5, -2.0]),
    helper.make_tensor("sp_idx", TensorProto.INT64, [2], [1, 5]), [2, 4])
inits = [
    helper.make_tensor("w_typed", TensorProto.FLOAT, [2, 2], [1, 2, 3, 4]),
    helper.make_tensor("i_typed", TensorProto.INT64, [3], [-1, 0, 7]),
    helper.make_tensor("h16", TensorProto.FLOAT16, [2], [0.5, -3.0]),
    helper.make_tensor("b16", TensorProto.BFLOAT16, [1], [1.5]),
    helper.make_tensor("strs", TensorProto.STRING, [2], [b"a", b"bc"]),
    helper.make_tensor("u8", TensorProto.UINT8, [3], [0, 127, 255]),
    numpy_helper.from_array(np.arange(6, dtype=np.int8).reshape(2, 3), "i8raw"),
]
nodes = [
    helper.make_node("Add", ["x", "sp"], ["y"], name="add"),
    helper.make_node("FusedMatMul", ["y", "w_typed"], ["z"], name="fmm", domain="com.microsoft", alpha=2.0),
    helper.make_node("Constant", [], ["c"], name="const",
                     value=helper.make_tensor("cv", TensorProto.FLOAT16, [1], [2.0])),
]
g = helper.make_graph(nodes, "features",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
                       helper.make_tensor_value_info("c", TensorProto.FLOAT16, [1])],
                      initializer=inits, sparse_initializer=[sparse])
m = helper.make_model(g, opset_imports=op13 + [helper.make_opsetid("com.microsoft", 1)])
onnx.save(m, "features.onnx")

# Model-local function with an attribute reference and a default.
fbody = [helper.make_node("LeakyRelu", ["a"], ["b"], name="act")]
fbody[0].attribute.append(onnx.AttributeProto(name="alpha", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT))
f = helper.make_function("local", "LeakyAct", ["a"], ["b"], fbody, op13, attributes=["alpha"])
call = helper.make_node("LeakyAct", ["x"], ["y"], name="call", domain="local", alpha=0.2)
g = helper.make_graph([call], "func", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "seq"])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "seq"])])
m = helper.make_model(g, opset_imports=op13 + [helper.make_opsetid("local", 1)], functions=[f])
onnx.save(m, "function.onnx")

# External data: w present in ext.bin at offset 16, v names a missing file.
def ext_tensor(name, dims, location, offset, length):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t
with open("ext.bin", "wb") as fh:
    fh.write(b"\0" * 16 + np.array([1, 2, 3, 4, 5, 6], np.float32).tobytes())
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
                       helper.make_node("Add", ["y", "v"], ["z"], name="add")], "ext",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3])],
                      initializer=[ext_tensor("w", [2, 3], "ext.bin", 16, 24),
                                   ext_tensor("v", [1, 3], "missing.bin", 0, 12)])
onnx.save(helper.make_model(g, opset_imports=op13), "external.onnx")
