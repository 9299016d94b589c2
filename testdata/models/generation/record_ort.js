// Records what onnxruntime makes of gpt2_beam.onnx, gpt2_greedy.onnx,
// gpt2_sampling.onnx, t5_beam.onnx and whisper_beam.onnx (written by
// scripts/export_generation_fixture.py) on its CPU provider, at
// batch_size=2, sequence_length=8 (Whisper: 8 frames of 4 mels),
// max_length=14 (beam search: 3 beams, 2 sequences returned):
//   - generation.ort_shapes.json: each model's output dtypes and dims,
//     what ir's TestGenerationFixtureMatchesORT holds inference to;
//   - ../../../calib/profile/testdata/fixtures/ort_NAME.json.gz: a profile
//     of 2 runs at optimisation level all, which calib/profile's
//     TestORTGenerationProfile matches to the model (the decoder's nodes
//     run inside the generation node's span, once a run).
//
// Setup (outside the repository):
//   mkdir /tmp/ortnode2 && cd /tmp/ortnode2
//   npm install --ignore-scripts onnxruntime-node@1.23.2
// Run from this directory:
//   NODE_PATH=/tmp/ortnode2/node_modules node record_ort.js TMPDIR
// The timings are this machine's; the tests check shapes and attribution only.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const RUNS = 2;
const BINDINGS = {batch_size: 2, sequence_length: 8, max_length: 14, num_beams: 3, num_return_sequences: 2};

function feeds(beam, audio) {
  const i32 = v => new ort.Tensor('int32', Int32Array.from([v]), [1]);
  const ids = audio ? new ort.Tensor('float32', Float32Array.from({length: 64}, (_, i) => Math.sin(i * 0.7)), [2, 4, 8])
    : new ort.Tensor('int32', Int32Array.from({length: 16}, (_, i) => (i * 7 + 3) % 31), [2, 8]);
  const f = {input_ids: ids, max_length: i32(BINDINGS.max_length), min_length: i32(1)};
  if (beam) {
    const f32 = v => new ort.Tensor('float32', Float32Array.from([v]), [1]);
    Object.assign(f, {num_beams: i32(BINDINGS.num_beams), num_return_sequences: i32(BINDINGS.num_return_sequences),
      length_penalty: f32(1), repetition_penalty: f32(1)});
  }
  return f;
}

async function main() {
  const dir = process.argv[2];
  const lines = [];
  for (const name of ['gpt2_beam', 'gpt2_greedy', 'gpt2_sampling', 't5_beam', 'whisper_beam']) {
    const s = await ort.InferenceSession.create(name + '.onnx',
      {graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: path.join(dir, 'prof_' + name)});
    let out;
    for (let i = 0; i < RUNS; i++) out = await s.run(feeds(name.endsWith('_beam'), name.startsWith('whisper')));
    s.endProfiling();
    for (const k of Object.keys(out).sort()) {
      lines.push('  ' + JSON.stringify(name + '/' + k) + ': ' + JSON.stringify({type: out[k].type, dims: out[k].dims.map(Number)}).replace(/,/g, ', ').replace(/:/g, ': '));
    }
    const files = fs.readdirSync(dir).filter(p => p.startsWith('prof_' + name + '_') && p.endsWith('.json')).sort();
    fs.writeFileSync(path.join('..', '..', '..', 'calib', 'profile', 'testdata', 'fixtures', 'ort_' + name + '.json.gz'),
      zlib.gzipSync(fs.readFileSync(path.join(dir, files[files.length - 1])), {level: 9}));
  }
  fs.writeFileSync('generation.ort_shapes.json', '{"onnxruntime": "1.23.2", "bindings": ' +
    JSON.stringify(BINDINGS).replace(/,/g, ', ').replace(/:/g, ': ') + ', "values": {\n' + lines.join(',\n') + '\n}}\n');
}
main().catch(e => { console.error(e); process.exit(1); });
