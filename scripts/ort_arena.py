#!/usr/bin/python3
"""Read onnxruntime's BFC arena growth from its own log.

cost/ortarena.go replays a call's allocations through onnxruntime's BFC
arena (kNextPowerOfTwo). Its CPU provider allocates from the same arena
code (core/framework/bfc_arena.cc) with the same defaults, and at log
level verbose the arena logs each region it takes ("Extending BFCArena
... rounded_bytes:N", "Extended allocation by N bytes"). This runs a model
three times at each batch on the CPU provider (one thread, graph
optimizer off, memory pattern on: onnxruntime's defaults otherwise), feeds
used in place as a bound CUDA session's are, and prints one CSV row per
batch and run: the bytes the arena took in that run, its regions, and the
first request that made it grow (in run 1, the memory pattern's block).

    mkdir /tmp/ortn && cd /tmp/ortn && npm install --ignore-scripts onnxruntime-node@1.23.2
    NODE_PATH=/tmp/ortn/node_modules /usr/bin/python3 scripts/ort_arena.py MODEL.onnx 1 4 8 32 > out.csv

testdata/measured/ort_cpu_arena_resnet50.csv was made so from torchvision's
ResNet-50 (weights=None, eval, torch.onnx.export opset 17, batch dynamic),
the graph testdata/models/resnet50.onnx holds.
"""
import os, re, subprocess, sys, tempfile

JS = """
const ort = require('onnxruntime-node');
ort.env.logLevel = 'verbose';
(async () => {
  const [path, batch] = [process.argv[2], +process.argv[3]];
  const s = await ort.InferenceSession.create(path, {graphOptimizationLevel: 'disabled',
    executionMode: 'sequential', intraOpNumThreads: 1, logSeverityLevel: 0, logVerbosityLevel: 0});
  const name = s.inputNames[0];
  const x = new ort.Tensor('float32', new Float32Array(batch * 3 * 224 * 224), [batch, 3, 224, 224]);
  for (let i = 0; i < 3; i++) {
    console.error('=== RUN ' + i);
    await s.run({[name]: x});
  }
})();
"""

EXTENDING = re.compile(r"Extending BFCArena for Cpu\..*rounded_bytes:(\d+)")
EXTENDED = re.compile(r"Extended allocation by (\d+) bytes")


def runs(model, batch):
    """The arena's regions and the requests that grew it, per run."""
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write(JS)
    try:
        log = subprocess.run(["node", f.name, model, str(batch)], capture_output=True, text=True,
                             env=dict(os.environ), check=True).stderr
    finally:
        os.unlink(f.name)
    out, run = [], None
    for line in log.splitlines():
        if line.startswith("=== RUN "):
            run = {"run": int(line.split()[-1]), "regions": [], "requests": []}
            out.append(run)
        elif run is not None and (m := EXTENDING.search(line)):
            run["requests"].append(int(m.group(1)))
        elif run is not None and (m := EXTENDED.search(line)):
            run["regions"].append(int(m.group(1)))
    return out


def main():
    model, batches = sys.argv[1], [int(b) for b in sys.argv[2:]]
    print("batch,run,extended_bytes,regions,first_request_bytes")
    for b in batches:
        for r in runs(model, b):
            first = r["requests"][0] if r["requests"] else 0
            print(f"{b},{r['run']},{sum(r['regions'])},{';'.join(map(str, r['regions']))},{first}")


if __name__ == "__main__":
    main()
