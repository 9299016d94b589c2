#!/usr/bin/python3
"""Record the shapes onnxruntime knows when it fuses: for each model, the
dims its own inference gives every value of the graph its level-basic
optimizers leave (constant folding, ReshapeFusion, ...), which is the graph
its level-2 fusions (MatMul+bias, SkipLayerNorm, MatMul scale) read.
passes/ortsession_oracle_test.go holds passes.ORTSession to these files.

    cd /tmp && npm install --ignore-scripts onnxruntime-node@1.23.2
    NODE_PATH=/tmp/node_modules /usr/bin/python3 passes/testdata/ort_shapes/record.py

Per model: the stripped weights are filled with zeros (ORT needs bytes;
shapes do not depend on them), the session is built at level basic with
the optimized graph saved, every node output of that graph is made a graph
output with no declared type, and a session built on it (level disabled)
reports each output's shape in its metadata: one line per value, its name
and the shape as JSON, a number, a named symbol, or "" for a dim unknown.
"[]" is a scalar or an unknown rank (the metadata does not tell them
apart). Written gzipped as NAME.txt.gz beside this script.
"""
import gzip, os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
OUT = os.path.dirname(os.path.abspath(__file__))

# name -> (model path relative to the repository, opset to set or None)
MODELS = {
    "bert_base": ("testdata/models/bert_base.onnx", None),
    "densenet121": ("testdata/models/densenet121.onnx", None),
    "gpt_small": ("testdata/models/gpt_small.onnx", None),
    "gpt_small_op17": ("testdata/models/gpt_small.onnx", 17),
    "gru": ("testdata/models/gru.onnx", None),
    "lstm_ptb_dyn": ("testdata/models/lstm_ptb_dyn.onnx", None),
    "mobilenet_v2": ("testdata/models/mobilenet_v2.onnx", None),
    "resnet50": ("testdata/models/resnet50.onnx", None),
    "transformer_encoder": ("testdata/models/transformer_encoder.onnx", None),
    "transformer_seq2seq": ("testdata/models/transformer_seq2seq.onnx", None),
    "convnext_tiny": ("testdata/saved/convnext_tiny.onnx.gz", None),
    "efficientnet_b0": ("testdata/saved/efficientnet_b0.onnx.gz", None),
    "googlenet": ("testdata/saved/googlenet.onnx.gz", None),
    "gpt2_hf_small": ("testdata/saved/gpt2_hf_small.onnx.gz", None),
    "gpt_small_newgelu": ("testdata/saved/gpt_small_newgelu.onnx.gz", None),
    "inception_v3": ("testdata/saved/inception_v3.onnx.gz", None),
    "llama_hf_small": ("testdata/saved/llama_hf_small.onnx.gz", None),
    "mobilenet_v3_small": ("testdata/saved/mobilenet_v3_small.onnx.gz", None),
    "shufflenet_v2_x1_0": ("testdata/saved/shufflenet_v2_x1_0.onnx.gz", None),
    "swin_t": ("testdata/saved/swin_t.onnx.gz", None),
    "vit_b_16": ("testdata/saved/vit_b_16.onnx.gz", None),
    "maxvit_t": ("calib/profile/testdata/fixtures/maxvit_t.onnx.gz", None),
}

JS = """
const ort = require('onnxruntime-node');
(async () => {
  const [mode, src, dst] = process.argv.slice(2);
  if (mode === 'basic') {
    await ort.InferenceSession.create(src, {graphOptimizationLevel: 'basic', optimizedModelFilePath: dst, logSeverityLevel: 3});
    return;
  }
  const s = await ort.InferenceSession.create(src, {graphOptimizationLevel: 'disabled', logSeverityLevel: 3});
  const lines = s.outputMetadata.map(m => m.name + ' ' + (m.shape === undefined ? '[]' : JSON.stringify(m.shape)));
  require('fs').writeFileSync(dst, lines.join('\\n') + '\\n');
})();
"""


def load(path, opset):
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    m = onnx.load_from_string(data)
    if opset:
        m.opset_import[0].version = opset
    for t in m.graph.initializer:
        if t.data_location == TensorProto.EXTERNAL:
            n = int(np.prod(t.dims)) if len(t.dims) else 1
            t.raw_data = np.zeros(n, dtype=onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]).tobytes()
            del t.external_data[:]
            t.data_location = TensorProto.DEFAULT
    return m


def every_value_an_output(m):
    """Makes each node output a graph output of its element type, no shape."""
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input)}
    outs = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in outs and types.get(o):
                m.graph.output.append(helper.make_tensor_value_info(o, types[o], None))
    del m.graph.value_info[:]


def main():
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "ort.js")
        open(js, "w").write(JS)
        for name, (path, opset) in MODELS.items():
            if only and name not in only:
                continue
            src, basic, probe, shapes = (os.path.join(tmp, name + s) for s in (".onnx", ".basic.onnx", ".probe.onnx", ".txt"))
            onnx.save(load(os.path.join(ROOT, path), opset), src)
            subprocess.run(["node", js, "basic", src, basic], check=True)
            m = onnx.load(basic)
            every_value_an_output(m)
            onnx.save(m, probe)
            subprocess.run(["node", js, "shapes", probe, shapes], check=True)
            with open(shapes, "rb") as f, gzip.GzipFile(os.path.join(OUT, name + ".txt.gz"), "wb", mtime=0) as g:
                g.write(f.read())
            print(name)


if __name__ == "__main__":
    main()
