#!/usr/bin/env bash
# The prepared measurements for a session that is lent a GPU (issue notes:
# "one short, prepared script"), in order of what they settle, each step
# under its own timeout so that a slow one cannot eat the others' time:
#
#   1. --kernels: single kernels, among them the MatMulCold rows (a decode
#      GEMV reading DRAM, not L2: the cold rate the model prices) and
#      BERT-base's Linears at 128 tokens (cuBLAS's fp32 split-K), warm and
#      cold in fp16 and fp32 (what a weight's first DRAM read adds to a
#      GEMM's fill: perf.WarmGEMMFill), and ATen's layer norm, softmax and
#      GELU in fp32 and fp16 (cost TestMeasuredKernels* prices them, with
#      no bound until these first rows set one);
#   1b. --gemm-choices: the kernels cuBLAS runs (name, grid, block, time)
#      for a sweep of fp32, tf32 and fp16 products: the tile and K split
#      the library picks, which the time model takes to be the fastest it
#      knows (our BERT-base fp32 trace: 32x32 tiles split 2-4 at 6-11
#      TFLOP/s, priced 2-3x faster: the largest miss in our own rows);
#   1c. --conv-choices: the same for cuDNN over VGG-16's and ResNet-50's
#      convolutions (fp16 channels_last and NCHW, fp32): VGG-16 fp16 is
#      priced 19-23% under its replays, ResNet-50 fp32 at batch 1 12-16%;
#   1d. --power: board power and SM clock of a DRAM stream (hwdb's
#      mem_pj_per_byte, 130 pJ/B, rests on other boards' readings and our
#      whole-model rows), dense products and a batch-1 convolution (the
#      busy-SM rule): go run ./scripts/choices -gpu GPU OUT/power.csv;
#   2. --profile of a LLaMA-7B decode step at batch 1 and 32: every kernel,
#      to name the 124 the plan misses at batch 1 (split-K reductions?);
#      batch 1 and ResNet-50 fp16 batch 1 also as one CUDA-graph replay
#      (:graph): whether PyTorch's tiny kernels, 0.9-1.5 us in eager
#      traces against 0.64-0.77 priced, are as long in a replay;
#   3. --train --calib-dir: the six AMP training steps, also as training
#      rows of calibrate's table (the train column);
#   4. a CNN and BERT run with Kineto traces, as time allows.
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
step 150 kernels "$py" scripts/measure_gpu.py --kernels --out "$out/kernels.csv" --calib-dir "$out/cal"
step 45 gemm "$py" scripts/measure_gpu.py --gemm-choices --out "$out/gemm_choices.csv"
step 40 conv "$py" scripts/measure_gpu.py --conv-choices --out "$out/conv_choices.csv"
step 30 power "$py" scripts/measure_gpu.py --power --out "$out/power.csv"
step 120 profile "$py" scripts/measure_gpu.py --profile llama7b-decode:fp16:1,llama7b-decode:fp16:1:graph,llama7b-decode:fp16:32,resnet50:fp16:1,resnet50:fp16:1:graph --out "$out/decode_kernels.csv"
step 120 train "$py" scripts/measure_gpu.py --train --out "$out/train.csv" --calib-dir "$out/cal"
step 70 models "$py" scripts/measure_gpu.py --models resnet50,bert_base --batches 1,8,32 --out "$out/models.csv" --calib-dir "$out/cal" --kineto "$out/kineto"
# What calibrate needs is the table and the graph-only models it names;
# the weights were never written (export_graph_only).
du -sh "$out" >&2
