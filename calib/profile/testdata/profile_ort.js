// Records the real onnxruntime profiles in this directory: runs each model
// of models/ on the CPU with profiling on and renames the profile that
// onnxruntime writes (PREFIX_<date>.json) to ort_<model>[_<level>].json.
//
// Setup (outside the repository):
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
// Run from this directory:
//   NODE_PATH=/tmp/ortnode2/node_modules node profile_ort.js [NAME_LEVEL]
// (NAME_LEVEL, e.g. shapes_disabled, records that profile only.)
// (1.20.1 ignores enableProfiling: its binding has no profiling.)
// --ignore-scripts skips the optional CUDA download; the CPU library ships
// in the package. The timings differ on every run: the tests check
// attribution, never a duration.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// RUNS session runs per profile: the first is onnxruntime's warm-up, kept
// so that the reader's choice to drop it is exercised on real data.
const RUNS = 4;

const MODELS = [
  {name: 'cnn', dims: [1, 3, 64, 64], level: 'all'},
  {name: 'cnn', dims: [1, 3, 64, 64], level: 'disabled'},
  {name: 'dense', dims: [1, 3, 32, 32], level: 'all'},
  {name: 'half', dims: [1, 8, 64], level: 'basic', half: true},
  {name: 'transformer', dims: [1, 32, 64], level: 'all'},
  {name: 'shapes', dims: [1, 8, 16], level: 'disabled'},
  {name: 'transformer_noname', dims: [1, 32, 64], level: 'all'},
  {name: 'transformer_noname', dims: [1, 32, 64], level: 'disabled'},
];

// deterministic input: values in [-1, 1) from a fixed recurrence.
function input(dims) {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 2000) / 1000 - 1;
  return new ort.Tensor('float32', data, dims);
}

// toHalf converts a float32 tensor to float16 (bits truncated; values
// this small never overflow, and ones below 2^-14 become zero).
function toHalf(t) {
  const view = new DataView(new ArrayBuffer(4));
  const bits = new Uint16Array(t.data.length);
  t.data.forEach((f, i) => {
    view.setFloat32(0, f);
    const x = view.getUint32(0);
    const exp = ((x >>> 23) & 0xff) - 127 + 15;
    bits[i] = ((x >>> 16) & 0x8000) | (exp > 0 ? (exp << 10) | ((x >>> 13) & 0x3ff) : 0);
  });
  return new ort.Tensor('float16', bits, t.dims);
}

async function profile(m) {
  const prefix = `tmp_${m.name}_${m.level}`;
  const session = await ort.InferenceSession.create(
      path.join(__dirname, 'models', m.name + '.onnx'), {
        executionProviders: ['cpu'],
        graphOptimizationLevel: m.level,
        enableProfiling: true,
        profileFilePrefix: prefix,
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
      });
  const feeds = {[session.inputNames[0]]: m.half ? toHalf(input(m.dims)) : input(m.dims)};
  for (let i = 0; i < RUNS; i++) await session.run(feeds);
  session.endProfiling();
  await session.release();
  const written = fs.readdirSync('.').filter((f) => f.startsWith(prefix + '_') && f.endsWith('.json'));
  if (written.length !== 1) throw new Error(`${prefix}: expected one profile, found ${written}`);
  const out = m.level === 'all' ? `ort_${m.name}.json` : `ort_${m.name}_${m.level}.json`;
  fs.renameSync(written[0], out);
  console.log(out, fs.statSync(out).size, 'bytes');
}

(async () => {
  const only = process.argv[2];
  for (const m of MODELS) {
    if (!only || `${m.name}_${m.level}` === only) await profile(m);
  }
})().catch((e) => { console.error(e); process.exit(1); });
