#!/usr/bin/env bash
# The prepared measurements for a session that is lent a GPU (issue notes:
# "one short, prepared script"), in order of what they settle, each step
# under its own timeout so that a slow one cannot eat the others' time.
# Our H100 and H200 already have whole-model rows, single kernels, a
# LLaMA-7B decode profile and Kineto traces of three LMs; these steps go
# after what those left unexplained (docs/accuracy.md, README "Where it
# misses"):
#
#   1. --conv-choices: the kernels cuDNN runs (cudnn.benchmark on, as in
#      the whole-model rows) for VGG-16's 3x3 layers and ResNet-50's
#      convolutions: VGG-16 fp32 at batch 32/128 runs 2-3 kernels more a
#      convolution than priced and 0.8-1.6 GB of workspace (FFT or
#      non-fused Winograd?), +11%/+24% priced over; its fp16 channels_last
#      replays −22% under with the kernel count right; each convolution's
#      workspace is a column (ws_mib), and two VGG layers run at batch 128
#      too (non-fused F(4x4,3x3) Winograd's transformed tensors at its
#      first 3x3 layer, 1.76 GB at batch 32, match the 1.64 GB more than
#      priced that the fp32 batch-32 rows peak at; at batch 128 it would
#      be 7 GB, and the rows hold 0.8 GB more: another algorithm);
#   2. --gemm-choices: the kernels cuBLAS runs for a sweep of fp32, tf32
#      and fp16 products, among them the small LLaMA's (64-2,048 rows of
#      256x256, 64x256, 688x256, 256x688), whose fp32 and TF32 replays run
#      4-16 kernels more than priced (split-K reductions?);
#   3. the small LLaMA in fp32 and TF32 at batch 1 and 8 with Kineto
#      traces: which kernels those are, node by node (onnxcost calibrate
#      --profile TRACE);
#   4. VGG-16 fp32 and fp16 at batch 32 and 128 with Kineto traces, and
#      the SM clock each row held while its power was read (the log's
#      "clock:" lines: whether fp16 convolutions run power-limited);
#   4b. MobileNetV2 fp32 at batch 128 with a Kineto trace: inside whole
#      models memory-bound kernels run 10% (H100) and 20% (H200) slower
#      than priced while isolated streams are right; its rows (−12% to
#      −18% on the H200) hold the most of it: which kernels, BatchNorm,
#      ReLU6 or the depthwise convolutions (onnxcost calibrate --profile);
#   4c. --profile of one LLaMA-7B decode step (fp16, batch 1), replayed
#      from a CUDA graph and eager: each kernel's duration inside a
#      replay. Vidur's H100 GEMMs of 1-16 tokens stream at 0.91 of the
#      datasheet (0.79 on the A100), which the model would price if the
#      decode replays did not then fall 5-8% short; the H200's eager
#      trace times its small elementwise kernels at 1.25 and 2.45 us,
#      priced at the 0.64 us ramp. Whether a replay's kernels run that
#      long settles both (docs/accuracy.md, "Not landed, measured");
#   5. --power: board power and SM clock of a DRAM stream, dense products
#      and a batch-1 convolution (mem_pj_per_byte, the busy-SM rule):
#      go run ./scripts/choices -gpu GPU OUT/power.csv;
#   6. --host-ops: the host's cost per eager call by op kind (functional,
#      module, autocast): the eager runtime charges one dispatch_us and
#      module_us for every kind, and its rows miss by −37% to +137%
#      (LLaMA-7B decode +86%/+137%, BERT autocast −30% on the H100's host);
#   7. --train --calib-dir: the six AMP training steps, also as training
#      rows of calibrate's table (the train column);
#   8. --kernels: single kernels as time allows, the kinds our tables lack
#      first: ATen's norms, softmax and GELU, a ReLU and a bias over
#      channels (stream_rw_eff, the broadcast loop's index arithmetic:
#      go test ./cost -run TestMeasuredKernels prices them once the file is
#      in testdata/measured), decode attention, cold and warm GEMMs, adds.
#
#   scripts/gpu_session.sh [OUT]      # OUT defaults to $OUT, then ./gpu_out
#
# At most 575 s of steps in all (under one 600 s device call); the GPU's clocks,
# power limit and MIG settings are left as they are. Each step's output
# and log land in OUT, and OUT/steps.txt says how each ended (124: its
# timeout). Nothing here needs the network.
set -u
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu_out}}
py=${PYTHON:-python3}
mkdir -p "$out"
: >"$out/steps.txt"
step() {
	local t=$1 name=$2
	shift 2
	echo "== $name (at most ${t}s)" >&2
	timeout "$t" "$@" >"$out/$name.log" 2>&1
	local rc=$?
	echo "$name rc=$rc $(date -u +%H:%M:%S)" | tee -a "$out/steps.txt" >&2
}
nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1 || true
"$py" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_device_name())' >"$out/torch.txt" 2>&1
step 40 conv "$py" scripts/measure_gpu.py --conv-choices --out "$out/conv_choices.csv"
step 55 gemm "$py" scripts/measure_gpu.py --gemm-choices --out "$out/gemm_choices.csv"
step 90 llama "$py" scripts/measure_gpu.py --models llama_hf_small --dtypes fp32,tf32 --batches 1,8 --out "$out/llama.csv" --calib-dir "$out/cal" --kineto "$out/kineto"
step 100 vgg "$py" scripts/measure_gpu.py --models vgg16 --dtypes fp32,fp16 --batches 32,128 --out "$out/vgg.csv" --calib-dir "$out/cal" --kineto "$out/kineto"
step 25 cnn "$py" scripts/measure_gpu.py --models mobilenet_v2 --dtypes fp32 --batches 128 --out "$out/cnn.csv" --calib-dir "$out/cal" --kineto "$out/kineto"
step 35 decode "$py" scripts/measure_gpu.py --profile llama7b-decode:fp16:1:graph,llama7b-decode:fp16:1 --out "$out/decode_profile.csv"
step 30 power "$py" scripts/measure_gpu.py --power --out "$out/power.csv"
step 40 host "$py" scripts/measure_gpu.py --host-ops --out "$out/host_ops.csv"
step 105 train "$py" scripts/measure_gpu.py --train --out "$out/train.csv" --calib-dir "$out/cal"
step 55 kernels "$py" scripts/measure_gpu.py --kernels --out "$out/kernels.csv" --calib-dir "$out/cal"
# What calibrate needs is the table and the graph-only models it names;
# the weights were never written (export_graph_only).
du -sh "$out" >&2
