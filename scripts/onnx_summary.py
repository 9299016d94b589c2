#!/usr/bin/python3
"""Print a JSON summary of ONNX models, one object per line, for the
differential test of the Go reader (ir/differential_test.go).

Usage: onnx_summary.py MODEL.onnx...   or   ls *.onnx | onnx_summary.py

Each object: path, ir_version, nodes (including subgraph and function
nodes), ops ("domain::op" -> count), domains, opsets, attrs (attribute
count), inits (name -> "dtype:dims", sparse initializers included), inputs
and outputs (name -> type string, initializers excluded from inputs),
functions ("domain::name"). A model that fails to load gives
{"path": ..., "error": ...}. Only onnx.load is used (no external data).
"""
import json
import sys

import onnx


def norm_domain(d):
    return "" if d == "ai.onnx" else d


def dims_text(dims):
    return "[" + ",".join(str(d) for d in dims) + "]"


def shape_text(tt):
    if not tt.HasField("shape"):
        return "?"
    parts = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            parts.append(str(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param != "":
            parts.append(d.dim_param)
        else:
            parts.append("?")
    return "[" + ",".join(parts) + "]"


def type_text(tp):
    """Kind of the outer type, then the innermost tensor's dtype and shape."""
    kind = None
    t = tp
    while True:
        which = t.WhichOneof("value")
        if which == "tensor_type":
            return "%s:%d:%s" % (kind or "tensor", t.tensor_type.elem_type, shape_text(t.tensor_type))
        if which == "sparse_tensor_type":
            return "%s:%d:%s" % (kind or "sparse", t.sparse_tensor_type.elem_type, shape_text(t.sparse_tensor_type))
        if which == "sequence_type":
            kind = kind or "seq"
            t = t.sequence_type.elem_type
        elif which == "optional_type":
            kind = kind or "opt"
            t = t.optional_type.elem_type
        elif which == "map_type":
            kind = kind or "map"
            t = t.map_type.value_type
        else:
            return "%s:0:?" % (kind or "tensor")


def walk_graph(g, acc):
    for n in g.node:
        acc["nodes"] += 1
        key = norm_domain(n.domain) + "::" + n.op_type
        acc["ops"][key] = acc["ops"].get(key, 0) + 1
        acc["domains"].add(norm_domain(n.domain))
        acc["attrs"] += len(n.attribute)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                walk_graph(a.g, acc)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    walk_graph(sg, acc)


def summary(path):
    m = onnx.load(path, load_external_data=False)
    acc = {"nodes": 0, "ops": {}, "domains": set(), "attrs": 0}
    walk_graph(m.graph, acc)
    for f in m.functions:
        walk_graph(f, acc)
    g = m.graph
    inits = {}
    for t in g.initializer:
        inits[t.name] = "%d:%s" % (t.data_type, dims_text(t.dims))
    for s in g.sparse_initializer:
        inits[s.values.name] = "%d:%s" % (s.values.data_type, dims_text(s.dims))
    inputs = {vi.name: type_text(vi.type) for vi in g.input if vi.name not in inits}
    outputs = {vi.name: type_text(vi.type) for vi in g.output}
    opsets = {}
    for o in m.opset_import:
        opsets[norm_domain(o.domain)] = o.version
    return {
        "path": path,
        "ir_version": m.ir_version,
        "nodes": acc["nodes"],
        "ops": acc["ops"],
        "domains": sorted(acc["domains"]),
        "opsets": opsets,
        "attrs": acc["attrs"],
        "inits": inits,
        "inputs": inputs,
        "outputs": outputs,
        "functions": sorted(norm_domain(f.domain) + "::" + f.name for f in m.functions),
    }


def main():
    paths = sys.argv[1:] or [line.strip() for line in sys.stdin if line.strip()]
    for p in paths:
        try:
            s = summary(p)
        except Exception as e:  # a model onnx cannot load is reported, not fatal
            s = {"path": p, "error": str(e)}
        print(json.dumps(s, sort_keys=True))


if __name__ == "__main__":
    main()
