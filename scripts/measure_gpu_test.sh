#!/usr/bin/env bash
# Dry run of scripts/measure_gpu.py on the CPU (--device cpu --quick), read back by
# `onnxcost calibrate`: the measurements table must fit a calibration, and a Kineto
# trace must match the exported model's nodes by module path. The numbers are CPU
# numbers and mean nothing for a GPU; what is checked is that the files are what
# calibrate reads (calib/measurements.go, calib/profile/kineto.go).
#
#   scripts/measure_gpu_test.sh            # PYTHON=/usr/bin/python3 by default
#
# Skips (exit 0, with a message) when the interpreter cannot import torch,
# torchvision and onnx. Takes about two minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import torch, torchvision, onnx' 2>/dev/null; then
	echo "measure_gpu_test.sh: skipped: $PY cannot import torch, torchvision and onnx"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "measure_gpu_test.sh: FAIL: $*" >&2
	exit 1
}

"$PY" scripts/measure_gpu.py --device cpu --quick --out "$tmp/m.csv" --calib-dir "$tmp/cal" --kineto "$tmp/kin"
"$PY" scripts/measure_gpu.py --device cpu --quick --kernels --out "$tmp/k.csv" --calib-dir "$tmp/cal"
# --profile: every kernel of a call (on the CPU, its top-level operators), of any model the rows
# measure, eager and (on a GPU) replayed; gpu_session.sh's tfm step profiles the transformers.
"$PY" scripts/measure_gpu.py --device cpu --profile llama_hf_small:fp32:1,llama_hf_small:fp32:1:graph,bert_base:fp32:1 --out "$tmp/p.csv" --kineto "$tmp/pkin"
[ -s "$tmp/pkin/llama_hf_small_fp32_b1.json" ] && [ -s "$tmp/pkin/bert_base_fp32_b1.json" ] || fail "--profile --kineto wrote no eager traces"
grep -qx 'spec,i,kernel,us' "$tmp/p.csv" || fail "p.csv header changed"
for spec in llama_hf_small:fp32:1 llama_hf_small:fp32:1:graph bert_base:fp32:1; do
	grep -q "^$spec,[0-9]*,aten::" "$tmp/p.csv" || fail "p.csv: no rows for $spec"
done
"$PY" scripts/measure_gpu.py --device cpu --gemm-choices --out "$tmp/g.csv"
grep -qx 'dtype,batch,m,n,k,ms,kernel,grid,block,regs,smem,us' "$tmp/g.csv" || fail "g.csv header changed"
grep -q '^fp32,2,16,16,64,[0-9.]*,aten::bmm,' "$tmp/g.csv" || fail "g.csv: no batched product row"
"$PY" scripts/measure_gpu.py --device cpu --wave-edges --out "$tmp/w.csv"
grep -qx 'dtype,batch,m,n,k,ms,kernel,grid,block,regs,smem,us' "$tmp/w.csv" || fail "w.csv header changed"
grep -q '^fp32,1,32,64,64,[0-9.]*,aten::' "$tmp/w.csv" || fail "w.csv: no product row"
go run ./scripts/choices -gpu H100 "$tmp/w.csv" | grep -q '^2 products on H100-SXM5-80GB' || fail "choices cannot read w.csv"
"$PY" scripts/measure_gpu.py --device cpu --linear-choices --out "$tmp/l.csv"
grep -qx 'dtype,batch,m,n,k,bias,ms,kernel,grid,block,regs,smem,us' "$tmp/l.csv" || fail "l.csv header changed"
grep -q '^fp32,1,16,64,64,1,[0-9.]*,aten::linear,' "$tmp/l.csv" || fail "l.csv: no Linear row"
go run ./scripts/choices -gpu H100 "$tmp/l.csv" | grep -q '^2 products on H100-SXM5-80GB' || fail "choices cannot read l.csv"
"$PY" scripts/measure_gpu.py --device cpu --layouts --out "$tmp/lay.csv"
grep -qx 'dtype,batch,m,n,k,layout,ms,kernel,grid,block,regs,smem,us' "$tmp/lay.csv" || fail "lay.csv header changed"
grep -q '^fp32,1,16,64,64,tn,[0-9.]*,aten::' "$tmp/lay.csv" || fail "lay.csv: no A·Bᵀ row"
go run ./scripts/choices -gpu H100 "$tmp/lay.csv" | grep -q '^fp32: A·Bᵀ over A·B, median of 1 pairs' || fail "choices cannot pair lay.csv"
"$PY" scripts/measure_gpu.py --device cpu --conv-choices --out "$tmp/c.csv"
grep -qx 'dtype,layout,batch,c,hw,k,r,stride,ms,kernel,grid,block,regs,smem,us,ws_mib' "$tmp/c.csv" || fail "c.csv header changed"
grep -q '^fp32,nchw,1,8,16,8,3,1,[0-9.]*,aten::conv2d,' "$tmp/c.csv" || fail "c.csv: no convolution row"
go run ./scripts/choices -gpu H100 "$tmp/c.csv" | grep -q '^1 convolutions on H100-SXM5-80GB' || fail "choices cannot read c.csv"
"$PY" scripts/measure_gpu.py --device cpu --conv-grads --out "$tmp/cg.csv"
grep -qx 'dtype,layout,grad,batch,c,hw,k,r,stride,ms,kernel,grid,block,regs,smem,us,ws_mib' "$tmp/cg.csv" || fail "cg.csv header changed"
for grad in dgrad wgrad; do
	grep -q "^fp32,nchw,$grad,1,8,16,8,3,1,[0-9.]*,aten::convolution_backward," "$tmp/cg.csv" || fail "cg.csv: no $grad row"
done
go run ./scripts/choices -gpu H100 "$tmp/cg.csv" | grep -q '^2 gradients on H100-SXM5-80GB' || fail "choices cannot read cg.csv"
"$PY" scripts/measure_gpu.py --device cpu --rnn --out "$tmp/r.csv"
grep -qx 'cell,dtype,hidden,batch,steps,ms,kernel,calls,us' "$tmp/r.csv" || fail "r.csv header changed"
for steps in 1 3; do
	grep -q "^lstm,fp32,16,2,$steps,[0-9.]*,aten::lstm,1," "$tmp/r.csv" || fail "r.csv: no $steps-step call"
done
go run ./scripts/choices -gpu H100 "$tmp/r.csv" | grep -q '^lstm fp32 hidden 16 batch 2: per call ' || fail "choices cannot part r.csv"
"$PY" scripts/measure_gpu.py --device cpu --host-ops --out "$tmp/h.csv"
grep -qx 'op,mode,kernels,us,kernel_us' "$tmp/h.csv" || fail "h.csv header changed"
for row in 'linear,module,1' 'conv2d,autocast,1' 'view,functional,0' 'add,fp16-3d,1' 'softmax,fp16-3d,3' 'bert_layer,block,17' 'bottleneck,block,10'; do
	grep -q "^$row,[0-9.]*,\$" "$tmp/h.csv" || fail "h.csv: no $row row"
done
"$PY" scripts/measure_gpu.py --device cpu --host-link --out "$tmp/hl.csv"
grep -qx 'direction,memory,bytes,ms' "$tmp/hl.csv" || fail "hl.csv header changed"
for row in 'h2d,pageable,4096' 'd2h,pinned,1048576'; do
	grep -q "^$row,[0-9.]*\$" "$tmp/hl.csv" || fail "hl.csv: no $row row"
done
go run ./scripts/choices -gpu H100 "$tmp/hl.csv" | grep -q '^h2d pageable ' || fail "choices cannot read hl.csv"
"$PY" scripts/measure_gpu.py --device cpu --power --out "$tmp/p.csv"
grep -qx 'op,dtype,shape,ms,power_w,clock_mhz' "$tmp/p.csv" || fail "p.csv header changed"
grep -q '^Conv,fp32,1x256x14x14x256x3,[0-9.]*,,$' "$tmp/p.csv" || fail "p.csv: no batch-1 convolution row"
go run ./scripts/choices -gpu H100 "$tmp/p.csv" | grep -q '^3 kernels on H100-SXM5-80GB: no power readings' || fail "choices cannot read p.csv"
"$PY" scripts/measure_gpu.py --device cpu --clock-window --out "$tmp/cw.csv"
grep -qx 'op,dtype,shape,mix,calls,idle_s,first_ms,median_ms,last_ms,clock_mhz' "$tmp/cw.csv" || fail "cw.csv header changed"
for row in 'none,1' 'none,4' 'stream,4'; do
	grep -q "^MatMul,fp32,64x64x64,$row,0.01,[0-9.]*,[0-9.]*,[0-9.]*,\$" "$tmp/cw.csv" || fail "cw.csv: no $row run"
done

"$PY" scripts/measure_gpu.py --device cpu --first-load --out "$tmp/f.csv"
grep -qx 'dtype,n,mode,ms' "$tmp/f.csv" || fail "f.csv header changed"
for mode in add mul alt chain; do
	grep -q "^fp32,4096,$mode,[0-9.]*\$" "$tmp/f.csv" || fail "f.csv: no $mode row"
done

# The usual outputs keep their columns, under a comment saying what a CPU run is.
head -1 "$tmp/m.csv" | grep -q '^# --device cpu dry run' || fail "m.csv has no CPU comment header"
grep -qx 'model,mode,dtype,batch,eager_ms,graph_ms,kernel_ms,kernels,peak_mib,power_w' "$tmp/m.csv" || fail "m.csv header changed"
grep -qx 'op,dtype,shape,ms' "$tmp/k.csv" || fail "k.csv header changed"
grep -q '^Attention,fp32,1x4x64x16,[0-9.]*$' "$tmp/k.csv" || fail "k.csv: no decode-attention row"
grep -q '^MatMulCold,fp32,1x256x256,[0-9.]*$' "$tmp/k.csv" || fail "k.csv: no cold matmul row"
for row in 'LayerNorm,fp32,16x64' 'Softmax,fp32,16x64' 'Gelu,fp32,65536' 'Relu,fp32,65536' 'BiasAdd,fp32,2x8x64'; do
	grep -q "^$row,[0-9.]*\$" "$tmp/k.csv" || fail "k.csv: no $row row"
done
test "$(grep -c '^resnet50,infer,fp32,' "$tmp/m.csv")" = 2 || fail "m.csv: want 2 resnet50 rows"

# calibrate's table: one header for both runs, two rows per model row (graph and
# pytorch), one per kernel row, every model graph-only (no weight files left).
t="$tmp/cal/measurements.csv"
test "$(grep -c '^model,ms,batch,dtype,dims,runtime,train$' "$t")" = 1 || fail "$t: want one header"
test "$(grep -c '^models/resnet50.onnx,[0-9.]*,[12],fp32,,graph,$' "$t")" = 2 || fail "$t: want 2 graph rows"
test "$(grep -c '^models/resnet50.onnx,[0-9.]*,[12],fp32,,pytorch,$' "$t")" = 2 || fail "$t: want 2 pytorch rows"
grep -q '^models/matmul.onnx,[0-9.]*,,fp32,M=256;K=256;N=256,graph,$' "$t" || fail "$t: no matmul row"
grep -q '^models/add.onnx,[0-9.]*,,fp32,n=65536,graph,$' "$t" || fail "$t: no add row"
grep -q '^models/layernorm.onnx,[0-9.]*,,fp32,rows=16;H=64,graph,$' "$t" || fail "$t: no layer norm row"
grep -q '^models/softmax.onnx,[0-9.]*,,fp32,rows=16;L=64,graph,$' "$t" || fail "$t: no softmax row"
grep -q '^models/gelu.onnx,[0-9.]*,,fp32,n=65536,graph,$' "$t" || fail "$t: no gelu row"
ls "$tmp/cal/models" | grep -v '\.onnx$' && fail "files beside the models (weights not deleted?)"
"$PY" - "$tmp/cal/models/resnet50.onnx" <<'EOF'
import sys
from collections import Counter
import onnx
m = onnx.load(sys.argv[1], load_external_data=False)
ops = Counter(n.op_type for n in m.graph.node)
assert ops["BatchNormalization"] == 53 and ops["Conv"] == 53, ops  # PRESERVE: BN kept
assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
print("resnet50.onnx: %d nodes, %d BatchNormalization kept, dynamic batch" % (len(m.graph.node), ops["BatchNormalization"]))
EOF

# fp16-amp rows (BERT under autocast, GPU only) keep their dtype, which calibrate
# prices as autocast: the table writer alone, on a row of the usual CSV's shape.
AMP_DIR="$tmp/amp" "$PY" - <<'EOF'
import os
import sys
sys.path.insert(0, "scripts")
import measure_gpu
c = measure_gpu.CalibDir(os.environ["AMP_DIR"], "amp table test")
c.infer_rows("../cal/models/resnet50.onnx", dict(dtype="fp16-amp", batch=4, graph_ms="1.500", eager_ms="2.500"))
c.train_rows("../cal/models/resnet50.onnx", dict(mode="train-sgd", dtype="fp16-amp", batch=8, eager_ms="30.000"))
c.close()
got = open(os.path.join(os.environ["AMP_DIR"], "measurements.csv")).read().splitlines()
want = ["model,ms,batch,dtype,dims,runtime,train", "# amp table test", "# device: cpu",
        "# software: " + measure_gpu.software(),
        "../cal/models/resnet50.onnx,1.500,4,fp16-amp,,graph,", "../cal/models/resnet50.onnx,2.500,4,fp16-amp,,pytorch,",
        "../cal/models/resnet50.onnx,30.000,8,fp16-amp,,pytorch-nhwc,momentum"]
assert got == want, got
EOF

go build -o "$tmp/onnxcost" ./cmd/onnxcost
"$tmp/onnxcost" calibrate --gpu A100 --measurements "$t" -o "$tmp/cal/a100.yaml" 2> "$tmp/cal/warn.txt"
# The table says it is a CPU dry run (device: cpu): calibrate says so, once per call.
grep -q "ran on the CPU, not on A100-SXM4-80GB: its times are the CPU's" "$tmp/cal/warn.txt" || fail "no warning that the table ran on the CPU"
grep -q '^  device: "the CPU"$' "$tmp/cal/a100.yaml" || fail "the calibration does not record the table's device"
# ... and what ran the calls (the table's software line, beside its rows' runtimes).
grep -q '^  runtime: ".*(PyTorch ' "$tmp/cal/a100.yaml" || fail "the calibration does not record the table's software"
grep -q '^format: 1' "$tmp/cal/a100.yaml" || fail "no calibration written"
grep -q 'rows: 9' "$tmp/cal/a100.yaml" || fail "calibration did not use all 9 rows"
"$tmp/onnxcost" calibrate --gpu A100 --measurements "$tmp/amp/measurements.csv" -o "$tmp/amp/a100.yaml"
grep -q 'rows: 3' "$tmp/amp/a100.yaml" || fail "the fp16-amp table did not give 3 rows (one a training step)"

# A CPU trace has no kernel events: calibrate then times each top-level cpu_op,
# charged to the record_function range (module path) around it.
"$tmp/onnxcost" calibrate --gpu A100 --profile "$tmp/kin/resnet50_fp32_b1.json" \
	"$tmp/cal/models/resnet50.onnx" --format json >"$tmp/prof.json"
"$PY" - "$tmp/prof.json" <<'EOF'
import json
import sys
d = json.load(open(sys.argv[1]))
frac, nodes = d["matched_time_fraction"], d["nodes"]
by_path = [n for n in nodes if any(not p.startswith("aten::") for p in n.get("profiled", []))]
print("profile: matched_time_fraction %.4f, %d nodes, %d matched by module path (%s)"
      % (frac, len(nodes), len(by_path), "; ".join(d.get("notes", []))))
assert d["format"] == "pytorch", d["format"]
assert frac >= 0.95, frac
assert len(by_path) >= 0.9 * len(nodes), (len(by_path), len(nodes))
EOF

# The LLaMA decode step (GPU only at full size) as a tiny decoder on the CPU: it runs,
# and every module holding an op is a name scope of the zoo's LLaMA graph, so an
# eager row of it pays the module calls --runtime pytorch prices.
"$tmp/onnxcost" zoo llama-tiny --param decode=1 --param past=16 -o "$tmp/llama.onnx"
"$PY" - "$tmp/llama.onnx" <<'EOF'
import sys
import onnx
import torch
sys.path.insert(0, "scripts")
import measure_gpu
m = onnx.load(sys.argv[1], load_external_data=False)
scopes = {"/".join(n.name.split("/")[2:-1]) for n in m.graph.node if n.name.startswith("/model/")}
layers = max(int(s.split("/")[0].split(".")[1]) for s in scopes if s.startswith("layers.")) + 1
step = measure_gpu.llama_decode_step(2, past=4, d=32, heads=4, layers=layers, ff=48, vocab=50,
                                     dev="cpu", dt=torch.float32)
with torch.no_grad():
    out = step()
assert out.shape == (2, 1, 50) and torch.isfinite(out).all(), out.shape
paths = {p.replace(".", "/").replace("layers/", "layers.") for p, _ in step.net.named_modules()
         if p.count(".") >= 2}
missing = sorted(p for p in paths if p not in scopes)
assert not missing, (missing, sorted(scopes)[:20])
print("llama_decode_step: %d modules under the layers, each a scope of the zoo graph" % len(paths))
EOF
# The prepared GPU session parses, and what it asks of measure_gpu.py exists.
bash -n scripts/gpu_session.sh || fail "scripts/gpu_session.sh does not parse"
"$PY" scripts/measure_gpu.py --help | grep -q -- '--train' || fail "measure_gpu.py has no --train"
echo "measure_gpu_test.sh: ok"
