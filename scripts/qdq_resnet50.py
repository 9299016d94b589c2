#!/usr/bin/env python3
# Usage: qdq_resnet50.py testdata/models/resnet50.onnx OUT.onnx [--residual]
# Rewrites the resnet50 fixture into the Q/DQ form a static int8 exporter
# writes around every Conv: Q->DQ on the input, int8 weights + DQ, int32
# bias + DQ at x_scale*w_scale, Q->DQ on the output (after its Relu).
# --residual also quantizes the residual stream as onnxruntime's static
# quantizer does (Add is one of its quantized ops): Q->DQ after each
# residual Add's Relu, so both Add operands are DQ outputs and every
# reader of the block output (the next convs, the next skip) reads the DQ.
import onnx, numpy as np
from onnx import helper as h, numpy_helper as nh
import sys
residual = '--residual' in sys.argv[3:]
m = onnx.load(sys.argv[1], load_external_data=False)
g = m.graph
inits = {i.name: i for i in g.initializer}
cons = {}
for n in g.node:
    for i in n.input: cons.setdefault(i, []).append(n)
new, extra = [], []
def c(name, arr): extra.append(nh.from_array(arr, name)); return name
k = 0
dqd = {}
prod = {o: n for n in g.node for o in n.output}
nres = 0
for n in g.node:
    if n.op_type != 'Conv':
        new.append(n)
        if residual and n.op_type == 'Relu' and prod.get(n.input[0]) is not None and prod[n.input[0]].op_type == 'Add':
            nres += 1; p = f'res{nres}_'; out = n.output[0]; n.output[0] = p+'r'
            rs, rz = c(p+'s', np.array(0.05, np.float32)), c(p+'z', np.array(0, np.uint8))
            new += [h.make_node('QuantizeLinear', [p+'r', rs, rz], [p+'q']), h.make_node('DequantizeLinear', [p+'q', rs, rz], [out])]
            dqd[out] = 0.05
        continue
    k += 1; p = f'q{k}_'
    if n.input[0] in dqd:
        xd = n.input[0]; xs_val = dqd[xd]
    else:
        xs, xz = c(p+'xs', np.array(0.02, np.float32)), c(p+'xz', np.array(0, np.uint8))
        new += [h.make_node('QuantizeLinear', [n.input[0], xs, xz], [p+'xq']), h.make_node('DequantizeLinear', [p+'xq', xs, xz], [p+'xd'])]
        xd = p+'xd'; xs_val = 0.02
    W = inits.pop(n.input[1]); dims = list(W.dims)
    wq = c(p+'wq', np.zeros(dims, np.int8)); ws, wz = c(p+'ws', np.array(0.01, np.float32)), c(p+'wz', np.array(0, np.int8))
    new.append(h.make_node('DequantizeLinear', [wq, ws, wz], [p+'wd']))
    ins = [xd, p+'wd']
    if len(n.input) > 2 and n.input[2]:
        inits.pop(n.input[2], None)
        bq = c(p+'bq', np.zeros([dims[0]], np.int32)); bs, bz = c(p+'bs', np.array(np.float32(xs_val)*np.float32(0.01), np.float32)), c(p+'bz', np.array(0, np.int32))
        new.append(h.make_node('DequantizeLinear', [bq, bs, bz], [p+'bd'])); ins.append(p+'bd')
    out = n.output[0]
    new.append(h.make_node('Conv', ins, [p+'y'], name=n.name, **{a.name: h.get_attribute_value(a) for a in n.attribute}))
    nxt = cons.get(out, [])
    tail = p+'y'
    if len(nxt) == 1 and nxt[0].op_type == 'Relu':
        r = nxt[0]; r.input[0] = p+'y'; new.append(r); tail = r.output[0]; r.output[0] = p+'r'; out2 = tail; tail = p+'r'
    else:
        out2 = out
    ys, yz = c(p+'ys', np.array(0.03, np.float32)), c(p+'yz', np.array(0, np.uint8))
    new += [h.make_node('QuantizeLinear', [tail, ys, yz], [p+'yq']), h.make_node('DequantizeLinear', [p+'yq', ys, yz], [out2])]
    dqd[out2] = 0.03
# drop the Relus already moved
seen, final = set(), []
for n in new:
    if id(n) in seen: continue
    seen.add(id(n)); final.append(n)
# remove original Relus that were re-emitted (they appear twice: once in order, once after their conv)
out, emitted = [], set()
for n in reversed(final):
    key = (n.op_type, tuple(n.output))
    if key in emitted: continue
    emitted.add(key); out.append(n)
out.reverse()
del g.node[:]; g.node.extend(out)
del g.initializer[:]; g.initializer.extend(list(inits.values()) + extra)
onnx.save(m, sys.argv[2])
print(len(out), 'nodes')
