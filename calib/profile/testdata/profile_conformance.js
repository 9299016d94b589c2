// Records testdata/conformance/ort_<test>.json.gz: onnxruntime 1.23.2 CPU
// profiles (level all, 3 runs) of ONNX conformance models run on their
// own test inputs. Setup as profile_fixtures.js (onnxruntime-node in
// /tmp/ortnode2), then from this directory:
//   /usr/bin/python3 profile_conformance.py DIR test_loop11 test_scan_sum \
//     test_range_float_type_positive_delta_expanded test_sce_mean_expanded test_sce_mean_weight_ii_expanded
//   NODE_PATH=/tmp/ortnode2/node_modules node profile_conformance.js DIR
// The timings are this machine's; the tests check attribution only.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const arrays = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array, float64: Float64Array, uint8: Uint8Array, int8: Int8Array, bool: Uint8Array};

async function main() {
  const dir = process.argv[2];
  const tests = JSON.parse(fs.readFileSync(path.join(dir, 'feeds.json')));
  fs.mkdirSync('conformance', {recursive: true});
  for (const [name, {model, feeds}] of Object.entries(tests)) {
    const prefix = path.join(dir, 'prof_' + name);
    const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
    const f = {};
    for (const [k, [dt, dims, b64]] of Object.entries(feeds)) {
      const b = Buffer.from(b64, 'base64');
      f[k] = new ort.Tensor(dt, new arrays[dt](b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), dims);
    }
    for (let i = 0; i < 3; i++) await s.run(f);
    s.endProfiling();
    const files = fs.readdirSync(dir).filter(x => x.startsWith('prof_' + name + '_') && x.endsWith('.json')).sort();
    const json = fs.readFileSync(path.join(dir, files[files.length - 1]));
    fs.writeFileSync(path.join('conformance', 'ort_' + name + '.json.gz'), zlib.gzipSync(json, {level: 9}));
  }
}
main();
