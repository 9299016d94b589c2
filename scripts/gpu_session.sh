#!/usr/bin/env bash
# The prepared measurements for a session that is lent a GPU (issue notes:
# "one short, prepared script"), in order of what they settle, each step
# under its own timeout so that a slow one cannot eat the others' time.
# Our H100 and H200 already have whole-model rows, single kernels, LLaMA-7B
# decode profiles (eager and replayed, batch 1 and 8), Kineto traces of
# four LMs and MobileNet-V2, cuBLAS/cuDNN kernel choices, power and
# host-op tables (testdata/measured, calib/profile/testdata/kineto_h200;
# the 2026-12-04 run answered the last script's questions). These steps go
# after what those left open (docs/accuracy.md, README "Where it misses"):
#
#   1. --profile of the decode step replayed at batch 32: its two gemvx
#      kernels a layer at 8.4 MB a sequence ran 6.6/4.6 µs at batch 1 and
#      43/26 µs at batch 8 (a line of 1.4-1.6 µs plus 6.2/10.5 bytes per
#      SM cycle), while the batch-32 rows want a faster rate: whether
#      the rate grows with the batch's CTAs (cost/perf batchedgemv.go);
#   1b. --profile of three transformers' calls, eager and replayed (a
#      small LLaMA fp16 at batch 8, GPT-2-small fp16 and BERT-base
#      fp16-amp at batch 1): in our H200's eager traces their small
#      projection GEMMs ran 2.5-5.8 µs where the model prices 6.4-9.1
#      (the 4.98 µs fill of a GEMM in a plan) while their small pointwise
#      kernels ran 16-24% over the replay's price, and the replays' kernel
#      sums come out right (LLaMA fp16 b8 +5%, BERT b1 -2%): the two
#      misses cancel. The replay's kernels, in the eager call's order,
#      say which is the kernels' own and so which to fix (the fill refit
#      of the 2026-12-06 note): onnxcost calibrate --gpu GPU --profile
#      g/kinetotfm/llama_hf_small_fp16_b8.json --replay
#      'g/tfm_profile.csv#llama_hf_small:fp16:8:graph' MODEL --dtype fp16
#      --batch 8 (MODEL gunzipped from testdata/saved; BERT's is
#      testdata/models/bert_base.onnx at --dtype fp16-amp);
#   2. DenseNet-121 and ResNet-50 fp32 at batch 1, 32 and 128 with Kineto
#      traces: cuDNN's NCHW BatchNorm is priced at one small CTA per
#      plane, 160 SM cycles each (cost/perf smallctas.go, fitted on
#      MobileNet-V2), and DenseNet-121's fp32 rows moved 3-4% long with
#      it: whether its norms over up to 1,024 channels at 7x7 run so; and
#      which 3x3 layers cuDNN runs as FFT (cost libraryFFT now prices FFT
#      for 40, 52 and 36 of DenseNet-121's 58 at batch 1, 32 and 128,
#      where our H200 replays count 538, 475 and 573 kernels against 590,
#      638 and 576 priced; ResNet-50's 28x28 layers at batch 32 are priced
#      FFT unmeasured, its row -11%);
#   3. --linear-choices: F.linear with a bias over BERT's, GPT-2's and
#      LLaMA-7B's weights at 1-2,048 tokens, weights cold: which kernels
#      cuBLAS runs for a model's Linears (the bare --gemm-choices sweep's
#      picks differ: cost/perf simtLargeK, docs/accuracy.md), the fp32
#      small-N kernel (gemmSN) and split-K picks of 8-16 rows among them;
#      then --kernels: single kernels, the kinds our tables lack first (as
#      before); then ResNet-50 in TF32 (channels_last) at batch 1 and 32
#      with Kineto traces: every TF32 whole-model replay is priced 7-13%
#      short on both our GPUs while fp16 and fp32 sit near 0, the least-
#      squares split of their kernel sums puts TF32 convolutions at 0.95
#      and 0.92 of their price (so the miss is elsewhere: the fp32
#      memory-bound kernels around them?), and no TF32 kernel of a model
#      was ever traced (2026-12-05 note). It takes --first-load's slot
#      (a loop of one small add ran 0.5 µs a call shorter than the same
#      kernel inside a model: `--first-load` still measures it); then
#      ResNet-50 fp32 (NCHW) at batch 10, 11, 21 and 22, no traces: the
#      model prices cuDNN's 256x64 fp32 tile in rounds of two CTAs per SM
#      (cost/perf cudnnSIMTResident, fitted at batch 32 and 128), which
#      puts steps in its time at a round's edge: under graph 4.49 -> 6.11
#      ms from batch 10 to 11 and 8.11 -> 9.87 from 21 to 22 on the H100
#      (4.34 -> 5.93, 7.71 -> 9.42 on the H200), throughput falling 19%
#      and 21% (`sweep` warns of it): whether cudnn.benchmark's picks
#      step so. --kernels gives it 30 of its 60 s (its rows are written
#      as they are timed, so a cut keeps what it had);
#   4. ResNet-50 and DenseNet-121 fp16 (channels_last) at batch 1 and
#      32 with Kineto traces: our H200's --conv-choices table runs 1x1
#      convolutions as cuBLAS nvjet kernels in 6-13 µs where the model
#      charges each a library convolution's whole fill (16-23 µs priced),
#      yet ResNet-50 fp16's whole replays are priced within +5%, so other
#      kernels there must run longer than priced; and DenseNet-121 fp16
#      at batch 32 is priced 16% short (its 3x3 layers have 32 output
#      channels): the traces say kernel by kernel (2026-12-04 note). The
#      AMP training steps (--train) this replaced: its host noise was
#      measured twice already;
#   5. --wave-edges: fp16 products stepping 128 rows at a time across
#      one, two and three waves of the SMs (N 768, 3,072, 4,096; K
#      4,096): Vidur's GEMMs just past a wave's edge were priced 1.31
#      times their time while a whole last round was charged, now
#      0.7 + 0.3 f of one (cost/perf waveTailShare, 2026-12-04): whether
#      our own GPU's step matches;
#   6. the H100-only checks when an H100 is lent: --power (the H200's
#      fp16 8192^3 product held 1400 MHz at 668 W, priced at 1980 MHz
#      and 700 W with its time right), --clock-window (20 s of power's
#      60: that product timed call by call over runs of 1-256 calls,
#      alone and between DRAM streams: whether a dense kernel's clock is
#      its own or the run's average power's, the run-level clock lead of
#      the 2026-12-05 note) and --host-ops: the H200 machine's
#      table the eager host model rests on, on the H100's host (whose
#      calls ran 1.2-1.45 times the H200's), with the fp16-3d rows (the
#      kinds at a transformer's ranks, broadcasts and 16-bit types) and
#      the block rows (a Hugging Face-style encoder layer and a ResNet
#      bottleneck as whole module calls) that say why a model's calls ran
#      0.9-1.5 times the table (note58 §2).
#   7. --layouts: fp32 products timed as A·B and as A·Bᵀ, the [N, K]
#      weight F.linear reads (cuBLAS "TN"), weights cold: the model
#      charges A·Bᵀ 1.05 times A·B's main loop on the CUDA cores
#      (cost/perf TransposedBCost, from DeepBench's pairs on older GPUs;
#      our H200's VGG-16 classifier ran 174 µs as TN in its trace, 96 µs
#      as NN in the choice table): the ratio on our own GPU.
#   8. --conv-grads: the data and the weight gradient of ResNet-50's,
#      three of VGG-16's and DeepBench's 5x5 convolutions, each alone,
#      fp16 channels_last first, then fp32: the gradient kernels every
#      training estimate rests on were fitted on DeepBench's Maxwell-
#      Turing boards only, whose weight gradients run at a rate that
#      follows their output's size and their reduction's length (3x3 and
#      5x5 ones faster than eff_wgrad allows, 1x1 and small-output ones
#      slower; note78); read with `go run ./scripts/choices -gpu GPU
#      g/conv_grads.csv`.
#   9. --rnn: one-layer LSTM and GRU calls (cuDNN) of hidden 256-2,048 at
#      batch 1 and 64 over 1, 25 and 200 steps, fp32 first, with the
#      kernels each call launches: the RNN step's two latencies were
#      fitted on DeepBench's cuDNN 6/7 rows alone and are counted in
#      launch overheads, so on an H100 a GRU of hidden 256 at batch 64 is
#      priced ~100 us a step; read with `go run ./scripts/choices -gpu
#      GPU g/rnn.csv`, which parts measured and priced times into per
#      call and per step (note79). Last: on an H100 (steps 6 included,
#      610 s of caps) the 560 s call cuts it and may cut step 8, whose
#      rows, like these, are written as they are timed, so each keeps
#      what the earlier steps left it (most steps end before their cap).
#
#   scripts/gpu_session.sh [OUT]      # OUT defaults to $OUT, then ./gpu_out
#
# The device tool brings back at most 8 files from $OUT, so run it into a
# scratch folder and pack it (one device call, timeout_s 600):
#   timeout -k 5 560 bash scripts/gpu_session.sh /tmp/g; cd /tmp && tar czf - g | split -b 15M -d - $OUT/g.tgz.
#
# At most 610 s of steps in all on an H100 (the 560 s call cuts the last), 510 s elsewhere (under one 600 s device call); the GPU's clocks,
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
step 45 decode32 "$py" scripts/measure_gpu.py --profile llama7b-decode:fp16:32:graph --out "$out/decode32_profile.csv"
step 30 tfm "$py" scripts/measure_gpu.py --profile llama_hf_small:fp16:8,llama_hf_small:fp16:8:graph,gpt2_hf_small:fp16:1,gpt2_hf_small:fp16:1:graph,bert_base:fp16:1,bert_base:fp16:1:graph --out "$out/tfm_profile.csv" --kineto "$out/kinetotfm"
step 140 cnn "$py" scripts/measure_gpu.py --models densenet121,resnet50 --dtypes fp32 --batches 1,32,128 --out "$out/cnn.csv" --calib-dir "$out/cal" --kineto "$out/kineto"
step 40 linear "$py" scripts/measure_gpu.py --linear-choices --out "$out/linear_choices.csv"
step 30 kernels "$py" scripts/measure_gpu.py --kernels --out "$out/kernels.csv" --calib-dir "$out/cal"
step 30 cnn32 "$py" scripts/measure_gpu.py --models resnet50 --dtypes tf32 --batches 1,32 --out "$out/cnn32.csv" --calib-dir "$out/cal32" --kineto "$out/kineto32"
step 30 walk "$py" scripts/measure_gpu.py --models resnet50 --dtypes fp32 --batches 10,11,21,22 --iters 20 --out "$out/walk.csv" --calib-dir "$out/calwalk"
step 60 cnn16 "$py" scripts/measure_gpu.py --models resnet50,densenet121 --dtypes fp16 --batches 1,32 --out "$out/cnn16.csv" --calib-dir "$out/cal16" --kineto "$out/kineto16"
step 35 wave "$py" scripts/measure_gpu.py --wave-edges --out "$out/wave_edges.csv"
if grep -q H100 "$out/nvidia-smi.txt"; then
	step 40 power "$py" scripts/measure_gpu.py --power --out "$out/power.csv"
	step 20 window "$py" scripts/measure_gpu.py --clock-window --out "$out/clock_window.csv"
	step 40 host "$py" scripts/measure_gpu.py --host-ops --out "$out/host_ops.csv"
fi
step 20 layouts "$py" scripts/measure_gpu.py --layouts --out "$out/layouts.csv"
step 20 grads "$py" scripts/measure_gpu.py --conv-grads --out "$out/conv_grads.csv"
step 15 link "$py" scripts/measure_gpu.py --host-link --out "$out/host_link.csv"
step 30 rnn "$py" scripts/measure_gpu.py --rnn --out "$out/rnn.csv"
# What calibrate needs is the table and the graph-only models it names;
# the weights were never written (export_graph_only).
du -sh "$out" >&2
