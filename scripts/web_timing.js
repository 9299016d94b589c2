// Measures the WebAssembly build's cost outside a browser, in CPU time
// (independent of how busy the machine is) and wall time:
//
//   node scripts/web_timing.js [MODEL.onnx] [GPU]
//
// It loads web/dist/onnxcost.wasm with Go's wasm_exec.js and calls what the
// page calls on start: open the model, estimate it, then the slower views.
const fs = require("fs");
const path = require("path");
globalThis.require = require;
globalThis.fs = fs;
const dist = path.join(__dirname, "..", "web", "dist");
require(path.join(dist, "wasm_exec.js"));

(async () => {
  const model = process.argv[2] || path.join(__dirname, "..", "testdata", "models", "resnet50.onnx");
  const gpu = process.argv[3] || "A100-SXM4-80GB";
  const marks = [];
  let cpu = process.cpuUsage(), wall = performance.now();
  const mark = (what) => {
    const c = process.cpuUsage(cpu), w = performance.now() - wall;
    marks.push(`${what}: cpu ${((c.user + c.system) / 1000).toFixed(0)} ms, wall ${w.toFixed(0)} ms`);
    cpu = process.cpuUsage();
    wall = performance.now();
  };
  const go = new Go();
  const ready = new Promise((r) => (globalThis.onnxcostReady = r));
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(path.join(dist, "onnxcost.wasm")), go.importObject);
  go.run(instance);
  await ready;
  mark("compile + start");
  JSON.parse(onnxcost.gpuList());
  mark("GPU list (parses the GPU database)");
  JSON.parse(onnxcost.gpuList());
  mark("GPU list again");
  const out = JSON.parse(onnxcost.open(path.basename(model), new Uint8Array(fs.readFileSync(model))));
  if (out.error) throw new Error(out.error);
  mark("open");
  const st = JSON.stringify({ gpu });
  const r = JSON.parse(onnxcost.estimate(st));
  if (r.error) throw new Error(r.error);
  mark(`first estimate (${r.report.nodes.length} nodes, ${r.text.time_s})`);
  JSON.parse(onnxcost.estimate(JSON.stringify({ gpu, batch: 8 })));
  mark("re-estimate (batch 8)");
  JSON.parse(onnxcost.compare(st));
  mark("compare");
  JSON.parse(onnxcost.gpus(st));
  mark("every GPU");
  JSON.parse(onnxcost.draw(st));
  mark("graph DOT + roofline data");
  console.log(marks.join("\n"));
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
