// Records, with onnxruntime 1.23.2's CPU provider:
//   - ort_fusions_opt.onnx: the graph onnxruntime saves for
//     ort_fusions_src.onnx (scripts/export_ort_saved_fixture.py) at level
//     extended (optimizedModelFilePath): com.microsoft FusedConv, FusedGemm
//     and DynamicQuantizeMatMul among standard ops;
//   - ../../../calib/profile/testdata/fixtures/ort_ort_fusions_opt.json.gz: a
//     profile of 3 runs of that saved graph at batch 2 (level disabled, so
//     it runs as saved): its node events carry each output's shape, which
//     calib/profile's TestORTSavedGraphProfile holds onnxcost's inferred
//     shapes to, and it matches the model as the other profiles do.
//
// Setup (outside the repository):
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
//   /usr/bin/python3 scripts/export_ort_saved_fixture.py --out DIR
// Run from this directory:
//   NODE_PATH=/tmp/ortnode2/node_modules node record_ort.js DIR
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const RUNS = 3;
const DIMS = [2, 3, 32, 32];

async function main() {
  const dir = process.argv[2];
  await ort.InferenceSession.create(path.join(dir, 'ort_fusions_src.onnx'),
    {graphOptimizationLevel: 'extended', optimizedModelFilePath: 'ort_fusions_opt.onnx'});
  const prefix = path.join(dir, 'prof_ort_fusions_opt');
  const s = await ort.InferenceSession.create('ort_fusions_opt.onnx',
    {graphOptimizationLevel: 'disabled', enableProfiling: true, profileFilePrefix: prefix});
  const n = DIMS.reduce((a, b) => a * b, 1);
  const x = new ort.Tensor('float32', Float32Array.from({length: n}, (_, i) => ((i * 7919) % 2000) / 1000 - 1), DIMS);
  for (let i = 0; i < RUNS; i++) await s.run({x});
  s.endProfiling();
  // endProfiling returns nothing: the profile is the newest PREFIX_<date>.json.
  const files = fs.readdirSync(dir).filter(p => p.startsWith('prof_ort_fusions_opt_') && p.endsWith('.json')).sort();
  const fixtures = path.join('..', '..', '..', 'calib', 'profile', 'testdata', 'fixtures');
  fs.writeFileSync(path.join(fixtures, 'ort_ort_fusions_opt.json.gz'),
    zlib.gzipSync(fs.readFileSync(path.join(dir, files[files.length - 1])), {level: 9}));
}
main().catch(e => { console.error(e); process.exit(1); });
