// Records testdata/fixtures/ort_<name>.json.gz: onnxruntime profiles of the
// repository's fixtures (testdata/models) run with their weights on the CPU
// at optimisation level all, 3 runs at batch 1.
//
// Setup (outside the repository):
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
//   apt-get install python3-torch python3-torchvision
// Export the fixtures with their weights (scripts/export_fixtures.py's
// export_bytes, the same graphs as testdata/models, weights kept) into DIR,
// e.g. for bert_base:
//   /usr/bin/python3 -c "import sys; sys.path.insert(0, 'scripts'); import export_fixtures as ef; \
//     f = {x.name: x for x in ef.FIXTURES}['bert_base']; open('DIR/bert_base.onnx', 'wb').write(ef.export_bytes(f, 0))"
// Run from this directory:
//   NODE_PATH=/tmp/ortnode2/node_modules node profile_fixtures.js DIR
// The timings are this machine's; the tests check attribution only.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const RUNS = 3;

// Inputs per fixture: BERT's token ids in range, its type ids 0 and its
// mask 1 (a type id of 2 is out of the embedding's range).
const FIXTURES = {
  bert_base: {input_ids: ['int64', [1, 128], i => i % 100], token_type_ids: ['int64', [1, 128], () => 0],
    attention_mask: ['int64', [1, 128], () => 1]},
  densenet121: {input: ['float32', [1, 3, 224, 224]]},
  mobilenet_v2: {input: ['float32', [1, 3, 224, 224]]},
  resnet50: {input: ['float32', [1, 3, 224, 224]]},
  gpt_small: {input_ids: ['int64', [1, 64], i => i % 100]},
};

function tensor([type, dims, fill]) {
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === 'int64') {
    const d = new BigInt64Array(n);
    for (let i = 0; i < n; i++) d[i] = BigInt(fill(i));
    return new ort.Tensor(type, d, dims);
  }
  const d = new Float32Array(n);
  for (let i = 0; i < n; i++) d[i] = ((i * 7919) % 2000) / 1000 - 1;
  return new ort.Tensor(type, d, dims);
}

async function main() {
  const dir = process.argv[2];
  fs.mkdirSync('fixtures', {recursive: true});
  for (const [name, inputs] of Object.entries(FIXTURES)) {
    const prefix = path.join(dir, 'prof_' + name);
    const s = await ort.InferenceSession.create(path.join(dir, name + '.onnx'),
      {graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
    const feeds = {};
    for (const [k, v] of Object.entries(inputs)) feeds[k] = tensor(v);
    for (let i = 0; i < RUNS; i++) await s.run(feeds);
    s.endProfiling();
    // onnxruntime-node's endProfiling returns nothing: the profile is the
    // newest PREFIX_<date>.json.
    const files = fs.readdirSync(dir).filter(f => f.startsWith('prof_' + name + '_') && f.endsWith('.json')).sort();
    const file = path.join(dir, files[files.length - 1]);
    fs.writeFileSync(path.join('fixtures', 'ort_' + name + '.json.gz'), zlib.gzipSync(fs.readFileSync(file), {level: 9}));
  }
}
main().catch(e => { console.error(e); process.exit(1); });
