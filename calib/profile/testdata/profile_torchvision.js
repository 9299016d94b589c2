// Records testdata/fixtures/ort_maxvit_t.json.gz: an onnxruntime 1.23.2 CPU
// profile (level all, 3 runs at batch 1) of torchvision's MaxViT-T, whose
// graph (1,755 nodes after onnxruntime's fusions, a third of them shape
// arithmetic on the symbolic batch) tests the matcher's placements on a
// real export.
//
// Setup (outside the repository), then run from this directory:
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
//   /usr/bin/python3 -c "import torch, torchvision; torch.onnx.export(
//     torchvision.models.maxvit_t(weights=None).eval(), torch.randn(1, 3, 224, 224),
//     'DIR/maxvit_t.onnx', opset_version=17, input_names=['input'], output_names=['out'],
//     dynamic_axes={'input': {0: 'batch'}, 'out': {0: 'batch'}})"   (torch 1.13)
//   NODE_PATH=/tmp/ortnode2/node_modules node profile_torchvision.js DIR
// The committed model is the same export with its float weights stripped
// (scripts/export_fixtures.py strip_weights) and gzipped; the profile
// drops each event's thread_scheduling_stats (the reader ignores them).
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

(async () => {
  const dir = process.argv[2];
  const prefix = path.join(dir, 'maxvit_t_all');
  const s = await ort.InferenceSession.create(path.join(dir, 'maxvit_t.onnx'),
    {graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix, intraOpNumThreads: 2});
  const dims = [1, 3, 224, 224];
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = ((i * 7919) % 2000) / 1000 - 1;
  for (let r = 0; r < 3; r++) await s.run({input: new ort.Tensor('float32', data, dims)});
  const written = s.endProfiling() || fs.readdirSync(dir).filter(f => f.startsWith('maxvit_t_all_')).map(f => path.join(dir, f))[0];
  const events = JSON.parse(fs.readFileSync(written, 'utf8'));
  for (const e of events) if (e.args) delete e.args.thread_scheduling_stats;
  fs.writeFileSync(path.join('fixtures', 'ort_maxvit_t.json.gz'), zlib.gzipSync(JSON.stringify(events), {level: 9}));
})();
