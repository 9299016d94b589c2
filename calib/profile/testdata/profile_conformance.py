# Writes feeds.json for profile_conformance.js: each named ONNX
# conformance test's model and its test_data_set_0 inputs (dtype, dims,
# base64 data), read with onnx's numpy_helper.
#   /usr/bin/python3 profile_conformance.py OUTDIR test_loop11 test_scan_sum ...
import base64, glob, json, os, sys
import onnx
from onnx import numpy_helper

ROOT = '/usr/share/libonnx-testdata/data/node'
out = {}
for name in sys.argv[2:]:
    d = os.path.join(ROOT, name)
    model = onnx.load(os.path.join(d, 'model.onnx'))
    init = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    feeds = {}
    for n, p in zip(names, sorted(glob.glob(os.path.join(d, 'test_data_set_0', 'input_*.pb')))):
        t = onnx.TensorProto()
        t.ParseFromString(open(p, 'rb').read())
        a = numpy_helper.to_array(t)
        feeds[n] = [str(a.dtype), list(a.shape), base64.b64encode(a.tobytes()).decode()]
    out[name] = {'model': os.path.join(d, 'model.onnx'), 'feeds': feeds}
json.dump(out, open(os.path.join(sys.argv[1], 'feeds.json'), 'w'))
