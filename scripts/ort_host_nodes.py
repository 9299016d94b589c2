#!/usr/bin/python3
"""Time onnxruntime's executor on the nodes it computes on the host.

hwdb/runtimes.yaml's onnxruntime host_node_us: what one node of a
dynamic-batch export's shape arithmetic costs the thread that issues the
CUDA provider's kernels (its CPU fallback runs Shape -> Gather ->
Unsqueeze -> Concat on the host: core/framework/fallback_cpu_capability.cc).
Two models, each a [N,4,8] input (N symbolic) reshaped by K torch.onnx-style
groups Shape -> Gather(0) -> Unsqueeze -> Concat(., [4, 8]) -> Reshape, K = 1
and K = 251; both run on the CPU provider, one thread, with the graph
optimizer off (at level basic its ReshapeFusion turns each group into a
Reshape with a constant target, which the CUDA provider would not run on
the host at all), 2,000 calls a repeat, the best of 7 repeats. The figure
is the difference over the 5 x 250 nodes more, per node.

    mkdir /tmp/ortn && cd /tmp/ortn && npm install --ignore-scripts onnxruntime-node@1.23.2
    NODE_PATH=/tmp/ortn/node_modules /usr/bin/python3 scripts/ort_host_nodes.py
"""
import os, subprocess, sys, tempfile

import onnx
from onnx import TensorProto, helper

CALLS, REPEATS, GROUPS = 2000, 7, 251

JS = """
const ort = require('onnxruntime-node');
(async () => {
  const [path, calls, repeats] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(path, {graphOptimizationLevel: 'disabled',
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3});
  const x = new ort.Tensor('float32', new Float32Array(2 * 32), [2, 4, 8]);
  for (let i = 0; i < 200; i++) await s.run({x});
  let best = Infinity;
  for (let r = 0; r < +repeats; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < +calls; i++) await s.run({x});
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e3 / +calls);
  }
  console.log(best.toFixed(3));
})();
"""


def chain(groups):
    """A model whose input is reshaped groups times, each time by a target
    computed from the tensor's own shape as torch.onnx writes x.view(n, 4, 8)."""
    nodes, inits = [], [
        helper.make_tensor("zero", TensorProto.INT64, [], [0]),
        helper.make_tensor("axes0", TensorProto.INT64, [1], [0]),
        helper.make_tensor("rest", TensorProto.INT64, [2], [4, 8]),
    ]
    cur = "x"
    for i in range(groups):
        nodes += [
            helper.make_node("Shape", [cur], [f"s{i}"]),
            helper.make_node("Gather", [f"s{i}", "zero"], [f"g{i}"], axis=0),
            helper.make_node("Unsqueeze", [f"g{i}", "axes0"], [f"u{i}"]),
            helper.make_node("Concat", [f"u{i}", "rest"], [f"c{i}"], axis=0),
            helper.make_node("Reshape", [cur, f"c{i}"], [f"r{i}"]),
        ]
        cur = f"r{i}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, 8])],
                          [helper.make_tensor_value_info(cur, TensorProto.FLOAT, ["n", 4, 8])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def main():
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "time.js")
        with open(js, "w") as f:
            f.write(JS)
        us = {}
        for k in (1, GROUPS):
            p = os.path.join(d, f"chain{k}.onnx")
            onnx.save(chain(k), p)
            out = subprocess.run(["node", js, p, str(CALLS), str(REPEATS)], capture_output=True, text=True, check=True)
            us[k] = float(out.stdout.strip())
            print(f"{k} group(s), {5 * k} nodes: {us[k]:.3f} us a call")
        extra = 5 * (GROUPS - 1)  # each further group: five executor steps
        print(f"host node: {(us[GROUPS] - us[1]) / extra:.3f} us ({extra} nodes more)")


if __name__ == "__main__":
    sys.exit(main())
