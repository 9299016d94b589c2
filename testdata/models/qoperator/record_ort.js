// Records what onnxruntime makes of qop_cnn.onnx, qdq_cnn.onnx, qdq_attn.onnx, qbert.onnx,
// moe_ffn.onnx, twins.onnx and qlstm.onnx (written by scripts/export_qoperator_fixture.py) on its CPU
// provider. For qop_cnn (and the same for the others: NAME.ort_shapes.json
// at the bindings MODELS lists, ort_NAME.json.gz, NAME_ort_all.onnx,
// ort_NAME_ort_all.json.gz):
//   - qop_cnn.ort_shapes.json: the dtype and dims of every node's output at
//     batch N=2, from the variant whose every node output is a graph output
//     (export_qoperator_fixture.py --all-outputs --out DIR): what
//     ir's TestQOperatorFixtureMatchesORT holds the inferred shapes to;
//   - ../../../calib/profile/testdata/fixtures/ort_qop_cnn.json.gz: a
//     profile of 3 runs at optimisation level all, batch 2, which
//     calib/profile's TestORTQOperatorProfile matches to the model;
//   - qop_cnn_ort_all.onnx: the graph onnxruntime saves at level all
//     (optimizedModelFilePath: its NHWC transformer's channels-last
//     QLinearConv, pools and concat between its own transposes), and
//     ../../../calib/profile/testdata/fixtures/ort_qop_cnn_ort_all.json.gz,
//     a profile of that saved graph run as saved (level disabled), whose
//     recorded output shapes calib/profile's TestORTSavedGraphProfile holds
//     onnxcost's inference of the saved graph to.
//
// Setup (outside the repository):
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
//   /usr/bin/python3 scripts/export_qoperator_fixture.py --all-outputs --out DIR
// Run from this directory:
//   NODE_PATH=/tmp/ortnode2/node_modules node record_ort.js DIR [NAME]
// The timings are this machine's; the tests check shapes and attribution only.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const RUNS = 3;

// The models, each with the bindings its shapes are recorded at and its
// inputs there.
const MODELS = [
  {name: 'qop_cnn', bindings: {N: 2}, feeds() {
    const dims = [2, 3, 64, 64];
    const n = dims.reduce((a, b) => a * b, 1);
    return {x: new ort.Tensor('float32', Float32Array.from({length: n}, (_, i) => ((i * 7919) % 2000) / 1000 - 1), dims)};
  }},
  {name: 'moe_ffn', bindings: {N: 2, S: 8}, feeds() {
    const dims = [2, 8, 16];
    return {x: new ort.Tensor('float32', Float32Array.from({length: 256}, (_, i) => Math.sin(i * 0.37)), dims)};
  }},
  {name: 'twins', bindings: {N: 2}, feeds() {
    const sine = (n, k) => Float32Array.from({length: n}, (_, i) => Math.sin(i * k));
    return {x: new ort.Tensor('float32', sine(512, 0.3), [2, 4, 8, 8]), grid: new ort.Tensor('float32', sine(144, 0.11), [2, 6, 6, 2])};
  }},
  {name: 'qlstm', bindings: {S: 6, N: 2}, feeds() {
    return {x: new ort.Tensor('float32', Float32Array.from({length: 96}, (_, i) => Math.sin(i * 0.29)), [6, 2, 8])};
  }},
  // levels: profiles at these levels too, ort_NAME_LEVEL.json.gz (a QDQ
  // model's inserted nodes differ by level).
  {name: 'qdq_cnn', bindings: {N: 2}, levels: ['basic', 'disabled'], feeds() {
    const dims = [2, 3, 64, 64];
    const n = dims.reduce((a, b) => a * b, 1);
    return {x: new ort.Tensor('float32', Float32Array.from({length: n}, (_, i) => ((i * 7919) % 2000) / 1000 - 1), dims)};
  }},
  {name: 'qdq_attn', bindings: {N: 2}, levels: ['basic', 'disabled'], feeds() {
    return {x: new ort.Tensor('float32', Float32Array.from({length: 1024}, (_, i) => Math.sin(i * 0.1)), [2, 16, 32])};
  }},
  {name: 'qbert', bindings: {N: 2, S: 16}, feeds() {
    const [n, s] = [2, 16];
    const t = f => new ort.Tensor('int32', Int32Array.from({length: n * s}, (_, i) => f(i)), [n, s]);
    return {input_ids: t(i => (i * 7) % 50), segment_ids: t(i => (i % s) >= s / 2 ? 1 : 0), input_mask: t(i => (i % s) < s - 3 ? 1 : 0)};
  }},
];

async function record(dir, m) {
  const all = await ort.InferenceSession.create(path.join(dir, m.name + '_all_outputs.onnx'), {graphOptimizationLevel: 'disabled'});
  const out = await all.run(m.feeds());
  const shapes = {};
  for (const k of Object.keys(out).sort()) shapes[k] = {type: out[k].type, dims: out[k].dims.map(Number)};
  // One value a line, keys sorted: a diff shows which value changed.
  const lines = Object.keys(shapes).map(k => '  ' + JSON.stringify(k) + ': ' + JSON.stringify(shapes[k]).replace(/,/g, ', ').replace(/:/g, ': '));
  const head = m.name === 'qop_cnn' ? '"batch": ' + m.bindings.N : '"bindings": ' + JSON.stringify(m.bindings).replace(/,/g, ', ').replace(/:/g, ': ');
  fs.writeFileSync(m.name + '.ort_shapes.json', '{"onnxruntime": "1.23.2", ' + head + ', "values": {\n' + lines.join(',\n') + '\n}}\n');

  const prefix = path.join(dir, 'prof_' + m.name);
  const s = await ort.InferenceSession.create(m.name + '.onnx',
    {graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
  for (let i = 0; i < RUNS; i++) await s.run(m.feeds());
  s.endProfiling();
  const fixtures = path.join('..', '..', '..', 'calib', 'profile', 'testdata', 'fixtures');
  keepNewest(dir, 'prof_' + m.name + '_', path.join(fixtures, 'ort_' + m.name + '.json.gz'));
  for (const level of m.levels || []) {
    const pre = 'prof_' + level + '_' + m.name;
    const sl = await ort.InferenceSession.create(m.name + '.onnx',
      {graphOptimizationLevel: level, enableProfiling: true, profileFilePrefix: path.join(dir, pre)});
    for (let i = 0; i < RUNS; i++) await sl.run(m.feeds());
    sl.endProfiling();
    keepNewest(dir, pre + '_', path.join(fixtures, 'ort_' + m.name + '_' + level + '.json.gz'));
  }

  const savedPath = m.name + '_ort_all.onnx';
  await ort.InferenceSession.create(m.name + '.onnx', {graphOptimizationLevel: 'all', optimizedModelFilePath: savedPath});
  const saved = await ort.InferenceSession.create(savedPath,
    {graphOptimizationLevel: 'disabled', enableProfiling: true, profileFilePrefix: path.join(dir, 'prof_saved_' + m.name)});
  for (let i = 0; i < RUNS; i++) await saved.run(m.feeds());
  saved.endProfiling();
  keepNewest(dir, 'prof_saved_' + m.name + '_', path.join(fixtures, 'ort_' + m.name + '_ort_all.json.gz'));
}

// node record_ort.js DIR [NAME]: every model, or the one named.
async function main() {
  for (const m of MODELS) {
    if (!process.argv[3] || process.argv[3] === m.name) await record(process.argv[2], m);
  }
}

// keepNewest gzips the newest profile onnxruntime wrote in dir under
// prefix (endProfiling returns nothing: it is PREFIX_<date>.json) to dst.
function keepNewest(dir, prefix, dst) {
  const files = fs.readdirSync(dir).filter(p => p.startsWith(prefix) && p.endsWith('.json')).sort();
  fs.writeFileSync(dst, zlib.gzipSync(fs.readFileSync(path.join(dir, files[files.length - 1])), {level: 9}));
}
main().catch(e => { console.error(e); process.exit(1); });
