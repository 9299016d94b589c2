// Records fixtures/ort_<name>.json.gz for the contrib-op fixtures
// (testdata/models/contrib: GroupQueryAttention, MatMulNBits,
// MultiHeadAttention, RotaryEmbedding, Attention, SkipLayerNormalization,
// ...): onnxruntime CPU profiles at optimisation level all, 3 runs, of
// the same graphs at toy sizes with their weights, one decode step of 3
// new tokens over 2 past ones (the node names are the full fixtures').
//
// Setup (outside the repository):
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
//   /usr/bin/python3 scripts/export_contrib_fixtures.py --tiny --out DIR
// Run from this directory:
//   NODE_PATH=/tmp/ortnode2/node_modules node profile_contrib.js DIR
// The timings are this machine's; the tests check attribution only.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const RUNS = 3;

// feed is an input of the given onnxruntime type and dims: a mask of
// ones, token type 0 (BERT's embedding has two types), token and
// position ids in range, and a deterministic fill for the KV cache.
function feed(name, type, dims) {
  const n = dims.reduce((a, b) => a * b, 1);
  const int = i => (name === 'attention_mask' ? 1 : name === 'token_type_ids' ? 0 : i % 7);
  switch (type) {
    case 'int64': return new ort.Tensor(type, BigInt64Array.from({length: n}, (_, i) => BigInt(int(i))), dims);
    case 'int32': return new ort.Tensor(type, Int32Array.from({length: n}, (_, i) => int(i)), dims);
    case 'float16': return new ort.Tensor(type, new Uint16Array(n).fill(0x3000), dims); // 0.125
    default: return new ort.Tensor('float32', Float32Array.from({length: n}, (_, i) => ((i * 7919) % 2000) / 1000 - 1), dims);
  }
}

async function main() {
  const dir = process.argv[2];
  fs.mkdirSync('fixtures', {recursive: true});
  for (const f of fs.readdirSync(dir).filter(f => f.endsWith('.onnx')).sort()) {
    const name = f.slice(0, -'.onnx'.length);
    const shapes = JSON.parse(fs.readFileSync(path.join(dir, name + '.feeds.json')));
    const prefix = path.join(dir, 'prof_' + name);
    const s = await ort.InferenceSession.create(path.join(dir, f),
      {graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
    const types = Object.fromEntries(s.inputMetadata.map(m => [m.name, m.type]));
    const feeds = {};
    for (const [k, dims] of Object.entries(shapes)) feeds[k] = feed(k, types[k], dims);
    for (let i = 0; i < RUNS; i++) await s.run(feeds);
    s.endProfiling();
    // endProfiling returns nothing: the profile is the newest PREFIX_<date>.json.
    const files = fs.readdirSync(dir).filter(p => p.startsWith('prof_' + name + '_') && p.endsWith('.json')).sort();
    const file = path.join(dir, files[files.length - 1]);
    fs.writeFileSync(path.join('fixtures', 'ort_' + name + '.json.gz'), zlib.gzipSync(fs.readFileSync(file), {level: 9}));
  }
}
main().catch(e => { console.error(e); process.exit(1); });
