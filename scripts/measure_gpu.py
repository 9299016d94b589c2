#!/usr/bin/env python3
"""Measure torchvision models on a real GPU, for comparison with onnxcost's estimates.

Run on a machine with a CUDA GPU and torch + torchvision:

    python3 scripts/measure_gpu.py --out /tmp/measured.csv [--quick]

For every (model, dtype, batch) it writes one CSV row with
  eager_ms     median wall time of one eager call, synchronised before and after
               (what onnxcost's --runtime pytorch estimates: launches + kernels + call);
  graph_ms     median wall time of one CUDA-graph replay of the same call
               (onnxcost's --runtime graph);
  kernel_ms    the sum of the GPU kernels' durations in one call (torch.profiler,
               averaged over the profiled calls): device work with the gaps removed;
  kernels      kernels per call (memset/memcpy excluded);
  peak_mib     torch.cuda.max_memory_allocated over the eager calls (training: the timed steps,
               after 5 warm-up steps) less what was allocated before the row began, MiB: the
               model's weights, activations and cuDNN/cuBLAS workspaces;
  power_w      mean board power over ~2 s of back-to-back graph replays
               (torch.cuda.power_draw), or empty where the driver does not report it.
Training rows (dtype fp16-amp, mode train) time one optimizer step of SGD with
momentum, or Adam, under torch.autocast with fp32 master weights: ResNet-50, VGG-16 and
DenseNet-121 (channels_last) and BERT-base at sequence 128 (the softmax cross-entropy over
the last hidden state that onnxcost assumes for a graph with no loss).

dtype fp32 disables TF32 everywhere (cuDNN and cuBLAS), tf32 enables it, fp16 runs
the model in half precision. Layout is channels_last for fp16/tf32 (the layout
cuDNN's tensor-core kernels want) and NCHW for fp32. cudnn.benchmark is on.

--kernels writes single-kernel rows instead (op, dtype, shape, ms): torch.matmul at square
and LLM-shaped sizes (op MatMul: one weight re-read by every call, so from L2 when it fits;
op MatMulCold: decode-sized products whose weight rotates through 20 copies, read from DRAM
every call), an elementwise add, layer norm, softmax and GELU at transformer sizes (ops
LayerNorm RxH and Softmax RxL over the last dim, Gelu n), a ReLU (op Relu n: a stream writing as
many bytes as it reads) and a bias added over channels (op BiasAdd NxCxHW: ATen's broadcast
loop), and a decode step's attention (op Attention, shape
BxHxLxD: F.scaled_dot_product_attention of one query per sequence and head over L cached keys,
PyTorch's default backend choice), each timed with CUDA events over back-to-back calls of one
CUDA graph holding 20 of them (so launch cost is amortised away). The attention rows check
onnxcost's decode-attention pricing (cost/perf/decode.go), which only Vidur's A100 profile
has checked so far; they are not written to calibrate's table (no export).

--gemm-choices writes, for torch.matmul over a sweep of products (1-4,096 tokens against BERT's,
GPT-2's and LLaMA-7B's weights, a few squares, attention-shaped batched products) in fp32, tf32 and
fp16, the per-call time and every kernel cuBLAS ran for it (name, grid, block, registers, shared
memory, duration, from one profiled call): which tile and K split the library picks, which the time
model otherwise assumes to be the fastest it knows (go run ./scripts/choices -gpu GPU FILE sets
each product beside the model's plan and priced time). --wave-edges writes the same table for fp16
products stepping 128 rows at a time across one, two and three waves of the GPU's SMs (N 768, 3,072
and 4,096, K 4,096): how much a wave's edge costs (cost/perf waveTailShare).

--linear-choices does the same for F.linear with a bias (what a model's Linear calls: cuBLAS
then picks other kernels than for a bare product, e.g. BERT-base's 128x768x768 fp32 Linear runs
sgemm_largek_lds64 with its zeroing and epilogue kernels in 28.7 us where the bare product runs a
split-K kernel in 13.4) over 1-2,048 tokens against BERT's, GPT-2's and LLaMA-7B's weights, in fp32,
tf32 and fp16, each call's weight and bias one of 20 copies (cold, as a model's layers read theirs
from DRAM); its table has a bias column (go run ./scripts/choices -gpu GPU FILE prices the bias as
the product's epilogue).

--layouts times fp32 products of 128-2,048 tokens against BERT's and LLaMA-7B's weight shapes twice,
as A·B (a [K, N] weight) and as A·Bᵀ (the [N, K] weight F.linear reads, cuBLAS "TN"), weights cold:
its table has a layout column (nn, tn), and go run ./scripts/choices -gpu GPU FILE prints the median
A·Bᵀ / A·B ratio beside the model's (cost/perf TransposedBCost).

--conv-choices does the same for F.conv2d over VGG-16's 3x3 layers at batch 32 and ResNet-50's
convolutions at batch 1 and 32, in fp16 (channels_last and NCHW) and fp32 (NCHW), cudnn.benchmark on:
the algorithm, tiles and layout transposes cuDNN picks per layer (go run ./scripts/choices -gpu GPU FILE
sets each beside the convolution's price).

--conv-grads times the data and the weight gradient of ResNet-50's and three of VGG-16's convolutions
at batch 32 and DeepBench's 5x5 layers, each gradient alone (fp32 NCHW, fp16 channels_last), with
their kernels and workspace (go run ./scripts/choices -gpu GPU FILE prices each as a training step's
gradient kernel).

--rnn times one-layer torch.nn.LSTM and GRU calls (cuDNN) of hidden 256, 1,024 and 2,048 at batch 1
and 64 over 1, 25 and 200 steps, fp32 then fp16, back to back as DeepBench timed them, with the
kernels one call launches (name, launches, total us); go run ./scripts/choices -gpu GPU FILE prices
each call and parts measured and priced times into a per-call and a per-step cost.

--power writes, for a DRAM stream (torch.add of two 2^28-element vectors, fp32 and fp16), 8192^3
products (fp32, tf32, fp16) and ResNet-50's layer3 3x3 convolution at batch 1 and 32 (fp32, NCHW), the
per-call time and the mean board power and SM clock over ~2 s of back-to-back CUDA-graph replays (op,
dtype, shape, ms, power_w, clock_mhz; go run ./scripts/choices -gpu GPU FILE sets them beside the power
model's draw).

--clock-window times an fp16 8192^3 product call by call (a pair of CUDA events each) over runs of 1, 4,
16, 64 and 256 calls, each run after half a second idle, alone and with each call followed by DRAM streams of
about its length: whether a dense kernel's clock is its own (every call alike) or the run's average power's
(a run's first calls faster than its last; a product between streams faster than among products).

--host-ops writes the host's cost of one eager call by op kind (op, mode, kernels, us, kernel_us): tiny
tensors, 2,000 back-to-back calls synchronised once, so the run is bound by the CPU's issue; functional
calls (torch.add, F.linear, F.conv2d, views, a permute's .contiguous()...), the same ops as nn.Module calls,
the GEMM-like ones under torch.autocast, the kinds as a transformer calls them (mode fp16-3d: 16-bit, 3-D and
4-D, broadcast and permuted operands) and two whole module calls (mode block: a Hugging Face-style encoder
layer, a ResNet bottleneck) whose time against their ops' rows is what a model's own Python adds. What onnxcost's eager runtime charges as dispatch_us per op
and module_us per module call (hwdb/runtimes.yaml) is one figure for every kind; these rows say how the
kinds differ on the measuring machine (the whole-model eager rows are too noisy to tell).

--profile MODEL:DTYPE:BATCH[:graph] writes every kernel of one eager call (with :graph, of one CUDA-graph
replay of it) (spec, i, name, µs) instead, for each of a comma-separated list of specs: how the whole-model rows were explained (which kernels PyTorch runs
that the ONNX export does not hold; testdata/measured/h200_sxm_llama7b_decode_b8_kernels.csv.gz). MODEL is any
model the rows measure or llama7b-decode; with --kineto DIR each eager spec also writes a Kineto trace of its call,
beside which `onnxcost calibrate --profile DIR/NAME_DTYPE_bBATCH.json --replay 'OUT#SPEC:graph'` sets the
replay's kernel times against the model's nodes.
--models, --dtypes, --batches pick a subset; bert_base and bert_large are
scripts/export_fixtures.py's BertModel (testdata/models/bert_*.onnx) at sequence 128, run in
fp16 under autocast (dtype fp16-amp: the model adds an fp32 mask, as HF BERT does).

Committed results: testdata/measured/. Nothing here is fitted to: the rows are a held-out check of the cost model.

Calibration data (what `onnxcost calibrate` reads; see calib/measurements.go and calib/profile):

    python3 scripts/measure_gpu.py --out /tmp/m.csv --calib-dir testdata/calib/h100 --kineto /tmp/kin

--calib-dir DIR also writes DIR/measurements.csv in calibrate's format (model,ms,batch,dtype,
dims,runtime; appended to when it exists, so runs accumulate: delete it to start over): for each
whole-model row one row with runtime graph (graph_ms) and one with runtime pytorch (eager_ms),
fp16-amp rows (autocast) as dtype fp16-amp, which onnxcost prices as such; with --kernels one row per
kernel with runtime graph and the shape as dims (M,K,N of [M,K]x[K,N]; n of the add and GELU;
rows,H of the layer norm; rows,L of the softmax). Each
model is exported once, from the module the rows time (on the CPU in fp32 before it is moved;
dtype is the row's), into DIR/models/NAME.onnx: eval mode, TrainingMode.PRESERVE (so BN stays
a node, as eager PyTorch runs it), opset 13, dynamic batch, graph-only as scripts/export_fixtures.py writes its
fixtures (weights over 1 KiB moved to external data that is then deleted: the dims stay).
The kernels are exported as tiny modules doing exactly the op (matmul.onnx with dims M,K,N;
add.onnx and gelu.onnx with dim n; layernorm.onnx with rows,H; softmax.onnx with rows,L). The LLaMA decode rows are not exported (a module over 13 GB of fp16
weights: one ONNX file cannot hold it for the export to strip); they are skipped with a note.
Then:

    onnxcost calibrate --gpu H100-SXM5-80GB --measurements DIR/measurements.csv -o h100.cal.yaml

--kineto DIR records, for each inference row, one eager call under torch.profiler (CPU and
CUDA activities, record_shapes off) with every submodule's forward inside a record_function
named by its module path ("layer1.0.conv1"; the innermost range wins, so a parent's own ops,
e.g. a residual Add, carry the parent's path), and writes the Chrome trace
DIR/NAME_DTYPE_bBATCH.json. calibrate charges each kernel to the range around its launch and
finds the ONNX node by that path (calib/profile/kineto.go, names.go). With --kineto DIR
--calib-dir DIR (one DIR for both), compare one trace with the estimate node by node:

    onnxcost calibrate --gpu H100-SXM5-80GB --profile DIR/resnet50_fp16_b32.json DIR/models/resnet50.onnx --dtype fp16 --batch 32

--device cpu is a dry run of the same code paths without a GPU (scripts/measure_gpu_test.sh):
tiny iteration counts, fp32 only, no training rows; no CUDA graphs (graph_ms is the eager
call's wall time again), no CUDA events (kernel rows are wall time over back-to-back calls),
no kernel_ms/kernels/peak_mib/power_w (empty). The outputs say so in a # comment header.
The numbers are CPU numbers, not for calibrating a GPU.
"""
import argparse
import copy
import csv
import datetime
import gc
import inspect
import io
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
import zlib

import torch
import torchvision

# DEV is the device every row runs on (--device): "cuda", or "cpu" for the dry run, where
# CUDA graphs, CUDA events, kernel statistics, allocator statistics and power are skipped.
DEV = "cuda"

# BATCH names the dynamic batch axis of an exported input or output, as export_fixtures.py does.
BATCH = {0: "batch"}

# CPU_NOTE heads every output of a --device cpu run: what its columns mean there.
CPU_NOTE = ("--device cpu dry run (not GPU measurements): no CUDA graphs, graph_ms/graph rows are "
            "the eager call's wall time again; no CUDA events, kernel rows are wall time over "
            "back-to-back calls; kernel_ms, kernels, peak_mib, power_w left empty")


def on_gpu():
    return DEV == "cuda"


def sync():
    if on_gpu():
        torch.cuda.synchronize()


def build(name):
    m = getattr(torchvision.models, name)(weights=None)
    return m.eval()


def set_dtype(dt):
    tf32 = dt == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def fresh_baseline():
    """Memory still allocated when a row starts (what earlier rows left behind, e.g. CUDA-graph
    pools), so that a row's peak counts only its own tensors."""
    gc.collect()
    if not on_gpu():
        return 0
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated()


def capture(fn, reps=1, warm=3):
    """A CUDA graph of reps calls of fn, after warm calls on a side stream (as capture
    requires), replayed once."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    return g


def median_ms(fn, iters):
    ts = []
    for _ in range(iters):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def kernel_stats(fn, calls=5):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total, n = 0.0, 0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        nm = e.name.lower()
        if "memset" in nm or "memcpy" in nm:
            continue
        total += e.time_range.elapsed_us()
        n += 1
    return total / calls / 1e3, n / calls


def mean_power(fn, label="", seconds=2.0):
    """Mean board power (W) over ~2 s of back-to-back calls of fn. The SM clock over the same
    window goes to stderr (the log), so that a row drawing at the power limit can be told
    apart from a slow kernel: whether the clock held boost is what the time model's power-
    limited clock (cost/perf clockFraction) needs to be checked against."""
    watts, clock = power_and_clock(fn, seconds)
    if watts is None:
        return ""
    if clock is not None and label:
        print("clock: %s: mean SM clock %.0f MHz while drawing %.0f W" % (label, clock, watts), file=sys.stderr)
    return "%.0f" % watts


def power_and_clock(fn, seconds=2.0):
    """Mean board power (W) and SM clock (MHz) over ~seconds of back-to-back calls of fn, the
    first quarter of the samples dropped (the limiter's one-second average still rising); None
    for what the driver does not report."""
    if not hasattr(torch.cuda, "power_draw"):
        return None, None
    samples, clocks = [], []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        for _ in range(5):
            fn()
        # Without it the host queues replays far faster than they run, and the
        # final synchronize waits out minutes of them (the H200's 2026-12-04
        # --power run spent its 30 s on one row).
        torch.cuda.synchronize()
        samples.append(torch.cuda.power_draw() / 1e3)
        if hasattr(torch.cuda, "clock_rate"):
            clocks.append(torch.cuda.clock_rate())
    torch.cuda.synchronize()
    watts = statistics.mean(samples[len(samples) // 4:])
    clock = statistics.mean(clocks[len(clocks) // 4:]) if clocks else None
    return watts, clock


def scripts_on_path():
    """Lets this script import scripts/export_fixtures.py, its neighbour."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)


def bert(layers, d, heads, ff):
    """The BERT of testdata/models/bert_*.onnx (scripts/export_fixtures.py), at sequence 128."""
    scripts_on_path()
    from export_fixtures import BertModel
    return BertModel(d, heads, layers, ff).eval()


BERTS = {"bert_base": (12, 768, 12, 3072), "bert_large": (24, 1024, 16, 4096)}

# HF are the Hugging Face-style language models of testdata/saved (the modules are
# scripts/saved_tensors.py's, written as transformers' modeling_llama and modeling_gpt2 write
# their eager path): name -> vocabulary. They run 64 tokens a sequence; `--models
# llama_hf_small,gpt2_hf_small` measures them (their eager rows count the kernels of
# Hugging Face's module code: casts, rotate_half, repeat_kv, torch.where, NewGELU).
HF = {"llama_hf_small": 32000, "gpt2_hf_small": 50257}


def hf_model(name):
    scripts_on_path()
    import saved_tensors
    return {"llama_hf_small": saved_tensors.LlamaSmall, "gpt2_hf_small": saved_tensors.GPT2Small}[name]().eval()
BERT_NAMES = (["input_ids", "token_type_ids", "attention_mask"], ["last_hidden_state", "pooler_output"])


def export_spec(name):
    """How the model named name is exported: (inputs(generator) on the CPU in fp32, input names,
    output names, dynamic axes), as scripts/export_fixtures.py exports its fixture of that name."""
    if name in BERTS:
        axes = {n: BATCH for n in BERT_NAMES[0] + BERT_NAMES[1]}

        def inputs(g):
            ids = torch.randint(0, 30522, (2, 128), generator=g)
            return ids, torch.zeros_like(ids), torch.ones_like(ids)
        return inputs, BERT_NAMES[0], BERT_NAMES[1], axes
    if name in HF:
        return (lambda g: (torch.randint(0, HF[name], (2, 64), generator=g),), ["input_ids"], ["logits"],
                {"input_ids": BATCH, "logits": BATCH})
    return (lambda g: (torch.randn(1, 3, 224, 224, generator=g),), ["input"], ["output"],
            {"input": BATCH, "output": BATCH})


def infer_call(name, dt, batch, on_cpu=None):
    """The row's module (built on the CPU in fp32, shown to on_cpu there, then moved to DEV in
    the row's dtype and layout), its call, the call's arguments and the dtype the row reports."""
    if name in BERTS:
        net = bert(*BERTS[name])
        if on_cpu:
            on_cpu(net)
        net = net.to(DEV)
        ids = torch.randint(0, 30522, (batch, 128), device=DEV)
        args = (ids, torch.zeros_like(ids), torch.ones_like(ids))
        if dt != "fp16":
            return net, net, args, dt

        # The model adds an fp32 mask (as HF BERT does), so .half() fails; fp16 BERT
        # runs under autocast, as it is served: GEMMs in fp16, softmax/LayerNorm in fp32.
        def amp(*a):
            with torch.autocast("cuda", dtype=torch.float16):
                return net(*a)
        return net, amp, args, "fp16-amp"
    if name in HF:
        net = hf_model(name)
        if on_cpu:
            on_cpu(net)
        net = net.to(DEV)
        if dt == "fp16":
            net = net.half()
        return net, net, (torch.randint(0, HF[name], (batch, 64), device=DEV),), dt
    net = build(name)
    if on_cpu:
        on_cpu(net)
    net = net.to(DEV)
    x = torch.randn(batch, 3, 224, 224, device=DEV)
    if dt == "fp16":
        net = net.half()
        x = x.half()
    if dt in ("fp16", "tf32"):
        net = net.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    return net, net, (x,), dt


def infer_row(name, dt, batch, iters, calib=None, kineto=None):
    """One whole-model inference row; with calib, also its rows in calibrate's table, and with
    kineto, a profiled eager call."""
    set_dtype(dt)
    base = fresh_baseline()
    exported = []

    def export(net):
        exported.append(calib.export(name, net, export_spec(name)))
    net, m, args, dt = infer_call(name, dt, batch, export if calib else None)
    model = exported[0] if exported else None
    warm = 10 if on_gpu() else 2
    kms = nk = peak = power = ""
    with torch.inference_mode():
        for _ in range(warm):
            m(*args)
        sync()
        if on_gpu():
            torch.cuda.reset_peak_memory_stats()
        eager = median_ms(lambda: m(*args), iters)
        if on_gpu():
            peak = "%.0f" % ((torch.cuda.max_memory_allocated() - base) / 2**20)
            kms, nk = kernel_stats(lambda: m(*args))
            kms, nk = "%.3f" % kms, "%.0f" % nk
        if kineto:
            kineto.record(net, lambda: m(*args), "%s_%s_b%d" % (name, dt, batch))
        if on_gpu():
            g = capture(lambda: m(*args))
            for _ in range(4):
                g.replay()
            graph = median_ms(g.replay, iters)
            power = mean_power(g.replay, "%s %s b%d" % (name, dt, batch))
            del g
        else:
            graph = median_ms(lambda: m(*args), iters)  # CPU_NOTE: no CUDA graph
    del m, net, args
    if on_gpu():
        torch.cuda.empty_cache()
    row = dict(model=name, mode="infer", dtype=dt, batch=batch, eager_ms="%.3f" % eager,
               graph_ms="%.3f" % graph, kernel_ms=kms, kernels=nk, peak_mib=peak, power_w=power)
    if model:
        calib.infer_rows(model, row)
    return row


def train_row(name, optim, batch, iters, calib=None):
    """One AMP training step: a torchvision CNN (channels_last, image batch), or
    a BERT of BERTS at sequence 128 with the softmax cross-entropy over the
    last hidden state's last axis that onnxcost assumes for a graph with no loss
    (its many views and linear layers: how much host time autograd's view and
    transpose nodes cost, which the CNN rows cannot show)."""
    set_dtype("fp16")
    base = fresh_baseline()
    lossf = torch.nn.CrossEntropyLoss()
    if name in BERTS:
        m = bert(*BERTS[name]).cuda().train()
        ids = torch.randint(0, 30522, (batch, 128), device="cuda")
        args = (ids, torch.zeros_like(ids), torch.ones_like(ids))
        target = torch.zeros(batch * 128, dtype=torch.long, device="cuda")

        def loss_of(out):
            h = out[0]
            return lossf(h.reshape(-1, h.shape[-1]), target)
    else:
        m = getattr(torchvision.models, name)(weights=None).cuda().train()
        m = m.to(memory_format=torch.channels_last)
        args = (torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last),)
        y = torch.randint(0, 1000, (batch,), device="cuda")

        def loss_of(out):
            return lossf(out, y)
    opt = (torch.optim.Adam(m.parameters(), lr=1e-4) if optim == "adam"
           else torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9))
    scaler = grad_scaler()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_of(m(*args))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    eager = median_ms(step, iters)
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    kms, nk = kernel_stats(step, calls=3)
    model = calib.export(name, m, export_spec(name)) if calib else None
    del m, args, opt
    torch.cuda.empty_cache()
    row = dict(model=name, mode="train-" + optim, dtype="fp16-amp", batch=batch,
               eager_ms="%.3f" % eager, graph_ms="", kernel_ms="%.3f" % kms,
               kernels="%.0f" % nk, peak_mib="%.0f" % peak, power_w="")
    if model:
        calib.train_rows(model, row)
    return row


def grad_scaler():
    """torch.amp.GradScaler("cuda") where it exists (PyTorch 2.3+), else torch.cuda.amp's (1.13)."""
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def graph_ms(fn, reps=20, iters=10):
    """Per-call GPU time of fn: 20 calls captured in one CUDA graph, replayed."""
    return replay_ms(capture(fn, reps), reps, iters)


def replay_ms(g, reps, iters=10):
    """Per-call GPU time of g, a CUDA graph of reps calls: the median of iters replays."""
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / reps)
    return statistics.median(ts)


def wall_ms(fn, reps=20, iters=10):
    """graph_ms where there is no GPU (CPU_NOTE): per-call wall time of reps back-to-back calls."""
    fn()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        ts.append((time.perf_counter() - t0) * 1e3 / reps)
    return statistics.median(ts)


class MatMulOp(torch.nn.Module):
    """What a MatMul kernel row times, as a module to export: [M,K]·[K,N]."""

    def forward(self, a, b):
        return torch.matmul(a, b)


class AddOp(torch.nn.Module):
    """What an Add kernel row times, as a module to export: two vectors of n."""

    def forward(self, x, y):
        return torch.add(x, y)


class LayerNormOp(torch.nn.Module):
    """What a LayerNorm kernel row times, as a module to export: x [rows, H] over its last dim,
    scale and bias as inputs (so H stays a symbolic dim). The normalized shape is taken as a
    Python int: the exporter wants it constant, and at opset 13 only its length reaches the
    graph (the reduction axes), so the dummy's H is not baked in."""

    def forward(self, x, w, b):
        return torch.nn.functional.layer_norm(x, (int(x.shape[-1]),), w, b)


class SoftmaxOp(torch.nn.Module):
    """What a Softmax kernel row times, as a module to export: x [rows, L] over its last dim."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)


class GeluOp(torch.nn.Module):
    """What a Gelu kernel row times, as a module to export: the exact (erf) GELU of n elements."""

    def forward(self, x):
        return torch.nn.functional.gelu(x)


# The kernel modules' export specs (see export_spec): symbolic dims, bound per row by dims.
MATMUL_SPEC = (lambda g: (torch.randn(4, 8, generator=g), torch.randn(8, 16, generator=g)),
               ["a", "b"], ["c"], {"a": {0: "M", 1: "K"}, "b": {0: "K", 1: "N"}, "c": {0: "M", 1: "N"}})
ADD_SPEC = (lambda g: (torch.randn(8, generator=g), torch.randn(8, generator=g)),
            ["x", "y"], ["z"], {"x": {0: "n"}, "y": {0: "n"}, "z": {0: "n"}})
LAYERNORM_SPEC = (lambda g: (torch.randn(4, 8, generator=g), torch.randn(8, generator=g), torch.randn(8, generator=g)),
                  ["x", "w", "b"], ["y"], {"x": {0: "rows", 1: "H"}, "w": {0: "H"}, "b": {0: "H"}, "y": {0: "rows", 1: "H"}})
SOFTMAX_SPEC = (lambda g: (torch.randn(4, 8, generator=g),),
                ["x"], ["y"], {"x": {0: "rows", 1: "L"}, "y": {0: "rows", 1: "L"}})
GELU_SPEC = (lambda g: (torch.randn(8, generator=g),), ["x"], ["y"], {"x": {0: "n"}, "y": {0: "n"}})


def kernel_points(quick):
    """The kernel rows' points: matmul (m, n, k) shapes and dtypes, add log2 sizes and dtypes.
    --quick keeps two of each; the CPU dry run one small fp32 point of each."""
    if not on_gpu():
        return [(256, 256, 256)], ["fp32"], [16], ["fp32"]
    if quick:
        return [(1024, 1024, 1024), (128, 4096, 4096)], ["fp16", "fp32"], [20, 24], ["fp16", "fp32"]
    shapes = [(n, n, n) for n in (512, 1024, 2048, 4096, 8192)]
    shapes += [(m, 4096, 4096) for m in (1, 16, 128, 2048)]   # tokens x hidden x hidden
    shapes += [(2048, 11008, 4096), (2048, 4096, 11008)]      # LLaMA-7B MLP up / down
    # BERT-base's Linears at 128 tokens: in fp32 cuBLAS runs the 768-wide ones as sgemm_largek
    # split-K at 6-10 TFLOP/s on Hopper (our H200 trace), which the time model prices 3x faster.
    shapes += [(128, 768, 768), (128, 3072, 768), (128, 768, 3072)]
    return shapes, ["fp16", "bf16", "tf32", "fp32"], [16, 20, 24, 27], ["fp16", "fp32"]


def cold_points(quick):
    """The cold MatMul rows' (m, n, k) shapes and dtypes: a decode step's weight products (LLaMA-7B's
    4096 x 4096 and 11008 x 4096 at 1-16 tokens) and BERT-base's Linears at 128 tokens, each weight
    read from DRAM. Against the warm MatMul rows of the same shapes they measure how much of a
    GEMM's fill a weight's first read from DRAM costs (onnxcost's WarmGEMMFill, read off traces of
    GEMMs whose operands were in L2)."""
    if not on_gpu():
        return [(1, 256, 256)], ["fp32"]
    if quick:
        return [(1, 4096, 4096)], ["fp16"]
    shapes = [(m, n, 4096) for m in (1, 8, 16) for n in (4096, 11008)]
    shapes += [(128, 768, 768), (128, 3072, 768), (128, 768, 3072)]
    return shapes, ["fp16", "fp32"]


def row_points(quick):
    """The row-wise and pointwise rows' points: layer norm (rows, H), softmax (rows, L) over the
    last dim, GELU log2 sizes, and their dtypes. Transformer sizes: BERT's and LLaMA's widths at
    one sequence to a batch of them; attention scores of 12 heads at 128-2,048 keys, and a decode
    step's 1,025 (32 heads at batch 8: PyTorch's warp softmax, which our H200 decode profile
    timed at 5.8 us against 3.4 priced). fp32 first: the dtype the PyTorch-timed kernel sets of
    the fidelity issue use (layer norm was their worst op kind)."""
    if not on_gpu():
        return [(16, 64)], [(16, 64)], [16], ["fp32"]
    if quick:
        return [(2048, 1024)], [(12288, 128)], [24], ["fp32"]
    ln = [(r, h) for r in (128, 2048, 16384) for h in (768, 1024, 4096)]
    sm = [(1536, 128), (12288, 128), (6144, 512), (256, 1025), (8192, 1025), (24576, 2048)]
    return ln, sm, [20, 24, 26], ["fp32", "fp16"]


def attention_points(quick):
    """The decode-attention rows' (batch, heads, cached keys, head size) and dtypes: LLaMA-2-7B's
    32 heads of 128 at a few batches and cache lengths; the CPU dry run one toy point."""
    if not on_gpu():
        return [(1, 4, 64, 16)], ["fp32"]
    if quick:
        return [(1, 32, 1024, 128), (32, 32, 1024, 128)], ["fp16"]
    return [(b, 32, l, 128) for b in (1, 4, 16, 64) for l in (256, 1024, 4096)], ["fp16", "bf16"]


def kernel_rows(quick=False, calib=None):
    """Single-kernel rows; with calib, each also as a runtime-graph row of calibrate's table. The
    op kinds our H100 and H200 tables lack come first (row-wise and pointwise kernels, decode
    attention, cold products), the warm products and adds those tables hold last: under a step's
    timeout (scripts/gpu_session.sh) what is cut is what is already measured."""
    tdt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    timed = graph_ms if on_gpu() else wall_ms
    yield from _row_kernel_rows(quick, calib, tdt, timed)
    yield from _stream_kernel_rows(quick, tdt, timed)
    yield from _attention_kernel_rows(quick, tdt, timed)
    yield from _cold_matmul_rows(quick, tdt, timed)
    yield from _matmul_add_rows(quick, calib, tdt, timed)


def _matmul_add_rows(quick, calib, tdt, timed):
    """Warm products (one weight re-read by 20 calls) and adds of two vectors."""
    mm = calib.export("matmul", MatMulOp().eval(), MATMUL_SPEC) if calib else None
    add = calib.export("add", AddOp().eval(), ADD_SPEC) if calib else None
    shapes, mm_dtypes, add_sizes, add_dtypes = kernel_points(quick)
    for dt in mm_dtypes:
        set_dtype(dt)
        for m, n, k in shapes:
            a = torch.randn(m, k, device=DEV, dtype=tdt[dt])
            b = torch.randn(k, n, device=DEV, dtype=tdt[dt])
            c = torch.empty(m, n, device=DEV, dtype=tdt[dt])
            ms = "%.5f" % timed(lambda: torch.matmul(a, b, out=c))
            if mm:
                calib.row(mm, ms, dtype=dt, dims="M=%d;K=%d;N=%d" % (m, k, n), runtime="graph")
            yield dict(op="MatMul", dtype=dt, shape="%dx%dx%d" % (m, n, k), ms=ms)
    for dt in add_dtypes:
        for lg in add_sizes:
            x = torch.randn(2**lg, device=DEV, dtype=tdt[dt])
            y = torch.randn(2**lg, device=DEV, dtype=tdt[dt])
            z = torch.empty_like(x)
            ms = "%.5f" % timed(lambda: torch.add(x, y, out=z))
            if add:
                calib.row(add, ms, dtype=dt, dims="n=%d" % 2**lg, runtime="graph")
            yield dict(op="Add", dtype=dt, shape="%d" % 2**lg, ms=ms)


def rotating(copies, fn):
    """A call of fn on the next of copies, round robin: with more bytes in them than any L2 holds,
    every call reads its operands from DRAM, as a model's layers read their weights."""
    turn = [0]

    def call():
        c = copies[turn[0] % len(copies)]
        turn[0] += 1
        return fn(c)
    return call


def timed_choice_rows(base, call):
    """base with call's per-call time (20 calls a replay, as the cold sweeps time theirs) and, one row
    each, the kernels one profiled call runs."""
    timed = graph_ms if on_gpu() else wall_ms
    base = dict(base, ms="%.5f" % timed(call, reps=20, iters=5))
    for row in profiled_kernels(call):
        yield dict(base, **row)


def _cold_matmul_rows(quick, tdt, timed):
    """Cold products: every call streams its weight from DRAM."""
    cold_shapes, cold_dtypes = cold_points(quick)
    # Cold rows: the same products with the weight operand rotated through
    # 20 copies (one per call of the graph), more bytes than any L2 holds,
    # so every call streams its weights from DRAM as a model's layers do;
    # the MatMul rows above re-read one weight 20 times and find it in L2.
    for dt in cold_dtypes:
        set_dtype(dt)
        for m, n, k in cold_shapes:
            a = torch.randn(m, k, device=DEV, dtype=tdt[dt])
            bs = [torch.randn(k, n, device=DEV, dtype=tdt[dt]) for _ in range(20)]
            c = torch.empty(m, n, device=DEV, dtype=tdt[dt])
            cold = rotating(bs, lambda b: torch.matmul(a, b, out=c))
            yield dict(op="MatMulCold", dtype=dt, shape="%dx%dx%d" % (m, n, k), ms="%.5f" % timed(cold))
            del bs


def _row_kernel_rows(quick, calib, tdt, timed):
    """ATen's vectorized layer norm, softmax and GELU."""
    # Row-wise and pointwise kernels (ATen's vectorized layer norm, softmax, GELU), timed and
    # exported like the add. layer_norm and gelu take no out=: their outputs are allocated
    # inside the captured graph, from the graph's private pool, so a replay makes no allocator call.
    ln_model = calib.export("layernorm", LayerNormOp().eval(), LAYERNORM_SPEC) if calib else None
    sm_model = calib.export("softmax", SoftmaxOp().eval(), SOFTMAX_SPEC) if calib else None
    gelu_model = calib.export("gelu", GeluOp().eval(), GELU_SPEC) if calib else None
    ln_shapes, sm_shapes, gelu_sizes, row_dtypes = row_points(quick)
    for dt in row_dtypes:
        for r, h in ln_shapes:
            x = torch.randn(r, h, device=DEV, dtype=tdt[dt])
            w = torch.randn(h, device=DEV, dtype=tdt[dt])
            bias = torch.randn(h, device=DEV, dtype=tdt[dt])
            ms = "%.5f" % timed(lambda: torch.nn.functional.layer_norm(x, (h,), w, bias))
            if ln_model:
                calib.row(ln_model, ms, dtype=dt, dims="rows=%d;H=%d" % (r, h), runtime="graph")
            yield dict(op="LayerNorm", dtype=dt, shape="%dx%d" % (r, h), ms=ms)
        for r, l in sm_shapes:
            x = torch.randn(r, l, device=DEV, dtype=tdt[dt])
            z = torch.empty_like(x)
            ms = "%.5f" % timed(lambda: torch.softmax(x, dim=-1, out=z))
            if sm_model:
                calib.row(sm_model, ms, dtype=dt, dims="rows=%d;L=%d" % (r, l), runtime="graph")
            yield dict(op="Softmax", dtype=dt, shape="%dx%d" % (r, l), ms=ms)
        for lg in gelu_sizes:
            x = torch.randn(2**lg, device=DEV, dtype=tdt[dt])
            ms = "%.5f" % timed(lambda: torch.nn.functional.gelu(x))
            if gelu_model:
                calib.row(gelu_model, ms, dtype=dt, dims="n=%d" % 2**lg, runtime="graph")
            yield dict(op="Gelu", dtype=dt, shape="%d" % 2**lg, ms=ms)


def _attention_kernel_rows(quick, tdt, timed):
    """A decode step's attention (scaled_dot_product_attention over a KV cache)."""
    points, attn_dtypes = attention_points(quick)
    # torch < 2.0 (Debian's, for the CPU dry run) has no SDPA: the same arithmetic written out.
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None) or (
        lambda q, k, v: torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v)
    for dt in attn_dtypes:
        for b, h, l, d in points:
            q = torch.randn(b, h, 1, d, device=DEV, dtype=tdt[dt])
            k = torch.randn(b, h, l, d, device=DEV, dtype=tdt[dt])
            v = torch.randn(b, h, l, d, device=DEV, dtype=tdt[dt])
            ms = "%.5f" % timed(lambda: sdpa(q, k, v))
            yield dict(op="Attention", dtype=dt, shape="%dx%dx%dx%d" % (b, h, l, d), ms=ms)




def _stream_kernel_rows(quick, tdt, timed):
    """Two pointwise loops the time model prices apart: a ReLU over n elements (the vectorized
    loop, writing as many bytes as it reads: hwdb stream_rw_eff) and a bias added over the
    channels of [N, C, HW] (the broadcast loop, whose index arithmetic cost/perf's
    stridedElemInstr prices). Timed only: their one-op models are built by cost's kernel test."""
    relu_sizes, bias_shapes, dtypes = stream_points(quick)
    for dt in dtypes:
        for lg in relu_sizes:
            x = torch.randn(2**lg, device=DEV, dtype=tdt[dt])
            yield dict(op="Relu", dtype=dt, shape="%d" % 2**lg, ms="%.5f" % timed(lambda: torch.relu(x)))
        for n, c, hw in bias_shapes:
            x = torch.randn(n, c, hw, device=DEV, dtype=tdt[dt])
            b = torch.randn(c, 1, device=DEV, dtype=tdt[dt])
            z = torch.empty_like(x)
            yield dict(op="BiasAdd", dtype=dt, shape="%dx%dx%d" % (n, c, hw),
                       ms="%.5f" % timed(lambda: torch.add(x, b, out=z)))


def stream_points(quick):
    """The ReLU rows' log2 sizes, the bias rows' [N, C, HW] (VGG-16's first, third and fifth
    blocks at batch 32) and their dtypes."""
    if not on_gpu():
        return [16], [(2, 8, 64)], ["fp32"]
    if quick:
        return [24], [(32, 64, 50176)], ["fp16"]
    return [20, 24, 26], [(32, 64, 50176), (32, 256, 3136), (32, 512, 784)], ["fp32", "fp16"]


def profile_rows(spec, kineto=None):
    """One call of MODEL:DTYPE:BATCH[:graph] under the profiler: every kernel, in order, with its
    time; with :graph, one replay of the call captured in a CUDA graph, whose kernels run back to
    back with no host between them. With kineto, an eager spec also writes a Kineto trace of one
    call (KinetoDir): `onnxcost calibrate --profile THAT --replay TABLE#SPEC:graph` sets the
    replay's kernel times against the model's nodes through it. Eager traces time PyTorch's tiny kernels at 0.9-1.5 us where the
    time model prices 0.64-0.77 (its in-graph ramp, cost/perf KernelRamp); the same call's kernels
    in a replay say whether the difference is the eager launch's or the kernels' own."""
    name, dt, batch, *mode = spec.split(":")
    if mode not in ([], ["graph"]):
        raise SystemExit("--profile %s: the fourth field is graph or nothing" % spec)
    set_dtype(dt)
    if name == "llama7b-decode":
        call = llama_decode_step(int(batch))
    else:
        # Any model the whole-model rows measure, built as they build it (infer_call: BERT's
        # fp16 under autocast, the HF-style LMs at 64 tokens, CNNs channels_last in fp16 and
        # TF32): a replay's kernels beside the priced plan say which of a transformer's small
        # kernels (its GEMMs' fill, its pointwise ramps) the model prices long or short.
        net, fn, args, _ = infer_call(name, dt, int(batch))

        def call():
            return fn(*args)
    from torch.profiler import ProfilerActivity, profile
    # On the CPU (the dry run) there are no kernels or graphs: the top-level operators stand in.
    gpu = on_gpu()
    with torch.inference_mode():
        for _ in range(10 if gpu else 1):
            call()
        sync()
        if kineto and not mode and name != "llama7b-decode":
            kineto.record(net, call, "%s_%s_b%s" % (name, dt, batch))
        if mode and gpu:
            g = capture(call)
            call = g.replay
        with profile(activities=[ProfilerActivity.CUDA if gpu else ProfilerActivity.CPU]) as prof:
            call()
            sync()
    kind = torch.autograd.DeviceType.CUDA if gpu else torch.autograd.DeviceType.CPU
    events = [k for k in prof.events() if k.device_type == kind and (gpu or k.cpu_parent is None)]
    for i, e in enumerate(events):
        yield dict(i=i, kernel=e.name[:160], us="%.2f" % e.time_range.elapsed_us())


def gemm_choice_points(quick):
    """The --gemm-choices sweep: (batch, m, n, k) products and dtypes. Token counts 1-4,096 against
    the (n, k) of BERT's, GPT-2's and LLaMA-7B's weights and a few squares, the small LLaMA's
    Linears at batch 1, 8 and 32, and attention-shaped batched products (12 heads at 128 and 512
    tokens, head size 64)."""
    if not on_gpu():
        return [(1, 16, 64, 64), (2, 16, 16, 64)], ["fp32"]
    if quick:
        return [(1, 128, 768, 768), (1, 1024, 1024, 1024)], ["fp32"]
    nk = [(768, 768), (3072, 768), (768, 3072), (2304, 768), (4096, 4096), (11008, 4096), (4096, 11008),
          (512, 512), (1024, 1024), (2048, 2048)]
    shapes = [(1, m, n, k) for m in (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096) for n, k in nk]
    # The small LLaMA's Linears (testdata/saved/llama_hf_small, 64 tokens a sequence): its fp32 and
    # TF32 replays run 4-16 kernels more than priced, as split-K reductions would.
    shapes += [(1, m, n, k) for m in (64, 512, 2048) for n, k in ((256, 256), (64, 256), (688, 256), (256, 688))]
    shapes += [(12 * b, s, s, 64) for b in (1, 8) for s in (128, 512)]   # Q·Kᵀ
    shapes += [(12 * b, s, 64, s) for b in (1, 8) for s in (128, 512)]   # P·V
    return shapes, ["fp32", "tf32", "fp16"]


def wave_edge_points(quick):
    """The --wave-edges sweep: fp16 products of 4,096-deep K whose 128x128 output tiles step across
    one, two and three waves of this GPU's SMs, 128 rows at a time, against 768-, 3,072- and
    4,096-wide weights: Vidur's GEMMs just past a wave's edge were priced 1.31 times their time with
    a whole last round charged (cost/perf waveTailShare, fitted on them at 0.7); these rows size the
    step on our own GPU."""
    if not on_gpu():
        return [(1, 16, 64, 64), (1, 32, 64, 64)], ["fp32"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = []
    for n in ((768,) if quick else (768, 3072, 4096)):
        across = -(-n // 128)                   # tiles per 128 rows
        top = -(-3 * sms // across) + 1         # 128-row steps to just past three waves
        shapes += [(1, 128 * i, n, 4096) for i in range(1, top + 1)]
    return shapes, ["fp16"]


def profiled_kernels(fn):
    """Every kernel one call of fn runs, from the profiler's Chrome trace: name, grid, block,
    registers, shared memory and duration, in launch order. On the CPU (the dry run) the
    operators stand in for the kernels."""
    import tempfile
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CUDA] if on_gpu() else [ProfilerActivity.CPU]
    with profile(activities=acts) as prof:
        fn()
        sync()
    with tempfile.NamedTemporaryFile("r", suffix=".json") as tf:
        prof.export_chrome_trace(tf.name)
        trace = json.load(open(tf.name))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace  # torch < 1.14: a bare list
    cats = ("kernel",) if on_gpu() else ("cpu_op", "Operator", None)
    for e in sorted((e for e in events if e.get("cat") in cats and "dur" in e), key=lambda e: e["ts"]):
        arg = e.get("args", {})
        yield dict(kernel=e["name"][:160], us="%.2f" % e.get("dur", 0),
                   grid="x".join(map(str, arg.get("grid", []))),
                   block="x".join(map(str, arg.get("block", []))),
                   regs=arg.get("registers per thread", ""), smem=arg.get("shared memory", ""))


def gemm_choice_rows(quick=False, points=None):
    """Which kernels cuBLAS runs for a product, and how long each takes: for every point of
    gemm_choice_points, the per-call time (timed as the kernel rows are) and one profiled call's
    kernels (profiled_kernels). The time model picks the fastest tile and K split it knows (cost/perf
    ChooseGEMM); our H200 trace of BERT-base fp32 says cuBLAS does not (its 128-token Linears run
    32x32 tiles split 2 or 4, at 6-11 TFLOP/s, priced 2-3x faster): these rows are what a model of
    the library's choice is fitted on."""
    tdt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16}
    timed = graph_ms if on_gpu() else wall_ms
    shapes, dtypes = (points or gemm_choice_points)(quick)
    for dt in dtypes:
        set_dtype(dt)
        for bt, m, n, k in shapes:
            lead = (bt,) if bt > 1 else ()
            a = torch.randn(*lead, m, k, device=DEV, dtype=tdt[dt])
            b = torch.randn(*lead, k, n, device=DEV, dtype=tdt[dt])
            c = torch.empty(*lead, m, n, device=DEV, dtype=tdt[dt])
            ms = "%.5f" % timed(lambda: torch.matmul(a, b, out=c), reps=10, iters=5)
            base = dict(dtype=dt, batch=bt, m=m, n=n, k=k, ms=ms)
            for row in profiled_kernels(lambda: torch.matmul(a, b, out=c)):
                yield dict(base, **row)


def linear_choice_points(quick):
    """The --linear-choices sweep: (m, n, k) products of m tokens against an n x k weight, and dtypes."""
    if not on_gpu():
        return [(16, 64, 64), (2, 16, 64)], ["fp32"]
    if quick:
        return [(128, 768, 768)], ["fp32"]
    nk = [(768, 768), (3072, 768), (768, 3072), (2304, 768), (4096, 4096), (11008, 4096), (4096, 11008)]
    return [(m, n, k) for m in (1, 8, 16, 32, 128, 512, 2048) for n, k in nk], ["fp32", "tf32", "fp16"]


def linear_choice_rows(quick=False):
    """Which kernels cuBLAS runs for F.linear(x, W, b), and how long each takes (gemm_choice_rows'
    fields and a bias column): the weight and bias rotate through 20 copies, one per call of the
    timed graph, so each call reads them cold as a model's layers do."""
    tdt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16}
    shapes, dtypes = linear_choice_points(quick)
    for dt in dtypes:
        set_dtype(dt)
        for m, n, k in shapes:
            x = torch.randn(m, k, device=DEV, dtype=tdt[dt])
            ws = [(torch.randn(n, k, device=DEV, dtype=tdt[dt]), torch.randn(n, device=DEV, dtype=tdt[dt]))
                  for _ in range(20)]
            call = rotating(ws, lambda wb: torch.nn.functional.linear(x, *wb))
            yield from timed_choice_rows(dict(dtype=dt, batch=1, m=m, n=n, k=k, bias=1), call)
            del ws, call


def layout_points(quick):
    """The --layouts sweep: (m, n, k) products of m tokens against an n x k weight, and dtypes: fp32
    only, the CUDA cores being where the layout costs (DeepBench's T4 fp16 pairs: 1.01)."""
    if not on_gpu():
        return [(16, 64, 64)], ["fp32"]
    if quick:
        return [(512, 768, 768)], ["fp32"]
    nk = [(768, 768), (3072, 768), (768, 3072), (4096, 4096), (11008, 4096)]
    return [(m, n, k) for m in (128, 512, 2048) for n, k in nk], ["fp32"]


def layout_rows(quick=False):
    """Each product of layout_points timed as A·B (torch.matmul of a [K, N] weight: cuBLAS "NN") and
    as A·Bᵀ (the [N, K] weight F.linear reads: "TN"), weights rotating through 20 copies so both
    read them cold, with one profiled call's kernels: the time model charges A·Bᵀ 1.05 times A·B's
    main loop on the CUDA cores (cost/perf TransposedBCost, DeepBench's pairs on older GPUs) and
    nothing on the tensor cores; these pairs measure it on this GPU (go run ./scripts/choices)."""
    tdt = {"fp32": torch.float32, "fp16": torch.float16}
    shapes, dtypes = layout_points(quick)
    for dt in dtypes:
        set_dtype(dt)
        for m, n, k in shapes:
            x = torch.randn(m, k, device=DEV, dtype=tdt[dt])
            for layout, shape, as_b in (("nn", (k, n), lambda w: w), ("tn", (n, k), lambda w: w.t())):
                ws = [torch.randn(*shape, device=DEV, dtype=tdt[dt]) for _ in range(20)]
                call = rotating(ws, lambda w: torch.matmul(x, as_b(w)))
                yield from timed_choice_rows(dict(dtype=dt, batch=1, m=m, n=n, k=k, layout=layout), call)
                del ws, call


def conv_choice_points(quick):
    """The --conv-choices sweep: (batch, in channels, size, out channels, filter, stride) and
    (dtype, layout) pairs. VGG-16's 3x3 layers at batch 32 (its fp16 replays priced 19-23% under
    their measured times on our H100 and H200), two of them at batch 128 too (its fp32 replays
    priced 26-28% over there, with 0.8 GB of workspace the model does not hold, 1.6 GB at batch 32)
    and ResNet-50's distinct convolutions at batch 1 and 32 (its fp32 batch-1 replays 12-16%
    under), then VGG-16's first layer over the RGB image at batch 1, 32 and 128 (in fp16
    channels_last 2.5-3.5x the priced time in our H200 trace, its peak 1.5 MiB an image above the
    priced one: note69 section 2)."""
    if not on_gpu():
        return [(1, 8, 16, 8, 3, 1)], [("fp32", "nchw")]
    vgg = [(32, c, hw, k, 3, 1) for c, hw, k in ((64, 224, 64), (64, 112, 128), (128, 112, 128), (128, 56, 256),
                                                  (256, 56, 256), (256, 28, 512), (512, 28, 512), (512, 14, 512))]
    vgg += [(128, 64, 224, 64, 3, 1), (128, 256, 56, 256, 3, 1)]
    r50 = [(b, c, hw, k, r, st) for b in (1, 32) for c, hw, k, r, st in
           ((3, 224, 64, 7, 2), (64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 128, 1, 1),
            (128, 56, 128, 3, 2), (512, 28, 256, 1, 1), (256, 14, 256, 3, 1), (1024, 14, 512, 1, 1), (512, 7, 512, 3, 1))]
    rgb = [(b, 3, 224, 64, 3, 1) for b in (1, 32, 128)]
    if quick:
        return vgg[:1] + r50[:1], [("fp16", "nhwc")]
    # fp32 first: under the step's timeout what is cut is the layouts our rows price best (VGG-16
    # fp32 at batch 128, +26-28%, and its workspace are the largest misses left).
    return vgg + r50 + rgb, [("fp32", "nchw"), ("fp16", "nhwc"), ("fp16", "nchw")]


def conv_choice_rows(quick=False):
    """Which kernels cuDNN runs for a convolution (F.conv2d with a bias, padding to keep the size,
    cudnn.benchmark on as in the whole-model rows), with the per-call time, one profiled call's
    kernels (the algorithm, tile and layout transposes the library picks for each layer) and the
    workspace that call allocated (ws_mib: the caching allocator's peak during the call beyond its
    output; cuDNN takes its workspace from PyTorch's allocator), which a whole model's peak memory
    holds at its largest such layer."""
    for base, x, w in conv_sweep(*conv_choice_points(quick)):
        bias = torch.randn(w.shape[0], device=DEV, dtype=w.dtype)

        def conv():
            return torch.nn.functional.conv2d(x, w, bias, stride=base["stride"], padding=base["r"] // 2)
        yield from cudnn_call_rows(base, conv)


def conv_sweep(points, modes):
    """Each convolution of points in each (dtype, layout) of modes, cudnn.benchmark on: its
    table columns (dtype, layout and geometry) and its input and filter, random, in the layout."""
    torch.backends.cudnn.benchmark = True
    tdt = {"fp32": torch.float32, "fp16": torch.float16}
    for dt, layout in modes:
        set_dtype(dt)
        for b, c, hw, k, r, st in points:
            x = torch.randn(b, c, hw, hw, device=DEV, dtype=tdt[dt])
            w = torch.randn(k, c, r, r, device=DEV, dtype=tdt[dt])
            if layout == "nhwc":
                x, w = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
            yield dict(dtype=dt, layout=layout, batch=b, c=c, hw=hw, k=k, r=r, stride=st), x, w


def cudnn_call_rows(base, call):
    """base with call's per-call time and workspace, after the calls in which cudnn.benchmark times
    the algorithms, and, one row each, the kernels one profiled call runs."""
    for _ in range(3):
        call()
    timed = graph_ms if on_gpu() else wall_ms
    base = dict(base, ms="%.5f" % timed(call, reps=10, iters=5), ws_mib=workspace_mib(call))
    for row in profiled_kernels(call):
        yield dict(base, **row)


def workspace_mib(fn):
    """MiB that one call of fn allocates beyond the tensor it returns (a library's workspace), from
    the caching allocator's peak; "" off the GPU."""
    if not on_gpu():
        return ""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    y = fn()
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before - y.numel() * y.element_size()
    del y
    return "%.1f" % (max(extra, 0) / 2**20)


CONV_CHOICE_FIELDS = ["dtype", "layout", "batch", "c", "hw", "k", "r", "stride", "ms", "kernel", "grid", "block",
                      "regs", "smem", "us", "ws_mib"]


def conv_grad_points(quick):
    """The --conv-grads sweep: ResNet-50's distinct convolutions and three of VGG-16's 3x3 layers at
    batch 32, and DeepBench's 5x5 layers (each: batch, in channels, size, out channels, filter,
    stride), in fp32 NCHW and fp16 channels_last (the layouts our training rows ran). The data and
    weight gradients the time model prices were fitted on DeepBench's Maxwell-Turing boards only
    (internal/calibrate/backward.go), where a weight gradient's rate follows its output's size and
    its reduction's length more than one factor allows (note78); these rows are the same question
    asked of the GPU at hand."""
    if not on_gpu():
        return [(1, 8, 16, 8, 3, 1)], [("fp32", "nchw")]
    r50 = [(32, c, hw, k, r, st) for c, hw, k, r, st in
           ((3, 224, 64, 7, 2), (64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 128, 1, 1),
            (128, 56, 128, 3, 2), (512, 28, 256, 1, 1), (256, 14, 256, 3, 1), (1024, 14, 512, 1, 1),
            (512, 7, 512, 3, 1), (1024, 14, 2048, 1, 2))]
    vgg = [(32, c, hw, k, 3, 1) for c, hw, k in ((64, 224, 64), (128, 112, 128), (512, 28, 512))]
    five = [(16, c, hw, k, 5, 1) for c, hw, k in ((192, 28, 32), (512, 14, 48), (832, 7, 128))]
    if quick:
        return r50[:1], [("fp16", "nhwc")]
    # fp16 channels_last first (AMP training, what our training rows ran; DeepBench timed fp32 on
    # older boards): under the step's timeout what is cut is the fp32 rows.
    return r50 + vgg + five, [("fp16", "nhwc"), ("fp32", "nchw")]


def conv_grad_rows(quick=False):
    """The data gradient (dX) and the weight gradient (dW) of each convolution of conv_grad_points,
    each alone (aten::convolution_backward with one output asked for, no bias), cudnn.benchmark
    on as in the training rows: the per-call time, one profiled call's kernels (the algorithm, its
    K split and reduction kernels, layout transposes) and the workspace the call allocated. `go run
    ./scripts/choices -gpu GPU FILE` sets each beside perf.EstimateConvGrad's price."""
    for base, x, w in conv_sweep(*conv_grad_points(quick)):
        st, p = base["stride"], base["r"] // 2
        y = torch.nn.functional.conv2d(x, w, stride=st, padding=p)
        dy = torch.randn_like(y)  # the output's shape and layout
        for grad, mask, pick in (("dgrad", [True, False, False], 0), ("wgrad", [False, True, False], 1)):
            def call(mask=mask, pick=pick):
                return torch.ops.aten.convolution_backward(dy, x, w, None, [st, st], [p, p], [1, 1], False,
                                                           [0, 0], 1, mask)[pick]
            yield from cudnn_call_rows(dict(base, grad=grad), call)


CONV_GRAD_FIELDS = ["dtype", "layout", "grad", "batch", "c", "hw", "k", "r", "stride", "ms", "kernel", "grid", "block",
                    "regs", "smem", "us", "ws_mib"]


def rnn_points(quick):
    """The --rnn sweep: (cell, dtype, hidden, batch, steps) of one-layer torch.nn.LSTM and GRU (input
    size = hidden), cuDNN's RNN, fp32 (TF32 off) first, then fp16. DeepBench's cuDNN 6/7 rows on
    Maxwell-Turing boards, the only RNN timings here, cannot part what a call costs once from what
    each step costs (note79: its GRU rows of 187-1500 steps fit about 2-4.5 ms a call plus a step of
    a few us beyond the weights' stream at 0.68-0.76 of DRAM bandwidth, while its single-step calls
    took 45-110 us and its LSTMs of 25-150 steps want 0.5-1.5 ms a call): 1, 25 and 200 steps at
    each size part them on the GPU at hand, and the kernels show what cuDNN launches once a call."""
    if not on_gpu():
        return [("lstm", "fp32", 16, 2, t) for t in (1, 3)]
    pts = [(cell, dt, h, b, t) for dt in ("fp32", "fp16") for cell in ("lstm", "gru")
           for h in (256, 1024, 2048) for b in (1, 64) for t in (1, 25, 200)]
    return pts[:3] if quick else pts


def rnn_rows(quick=False):
    """Each recurrent layer of rnn_points called as a model calls it (no grad, eager): the per-call
    time of back-to-back calls (stream_ms, as DeepBench timed cuDNN's RNNs) and, one row per kernel
    name, how many times one profiled call launched it and their total time. `go run
    ./scripts/choices -gpu GPU FILE` sets each call beside the time model's price and parts both
    into a per-call and a per-step cost."""
    tdt = {"fp32": torch.float32, "fp16": torch.float16}
    for cell, dt, h, b, t in rnn_points(quick):
        set_dtype(dt)
        layer = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(h, h).to(device=DEV, dtype=tdt[dt])
        x = torch.randn(t, b, h, device=DEV, dtype=tdt[dt])

        def call(layer=layer, x=x):
            with torch.no_grad():
                return layer(x)[0]
        for _ in range(3):
            call()
        base = dict(cell=cell, dtype=dt, hidden=h, batch=b, steps=t, ms="%.5f" % stream_ms(call))
        kernels = {}
        for k in profiled_kernels(call):
            n, us = kernels.get(k["kernel"], (0, 0.0))
            kernels[k["kernel"]] = (n + 1, us + float(k["us"]))
        for name, (n, us) in kernels.items():
            yield dict(base, kernel=name, calls=n, us="%.2f" % us)


def stream_ms(fn, reps=10, iters=3):
    """Per-call time of reps back-to-back eager calls, one synchronize after them (CUDA events; the
    wall clock in the dry run): host work counts where it outlasts the GPU's, as in DeepBench."""
    if not on_gpu():
        return wall_ms(fn, reps, iters)
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / reps)
    return statistics.median(ts)


RNN_FIELDS = ["cell", "dtype", "hidden", "batch", "steps", "ms", "kernel", "calls", "us"]


def power_points(quick):
    """The --power rows: (op, dtype, shape). A DRAM stream (Add of two vectors of n, 12 bytes an
    fp32 element) checks hwdb's mem_pj_per_byte; dense products (8192^3) the compute side at the
    power limit; ResNet-50's layer3 3x3 convolution at batch 1 (fewer CTAs than SMs) and 32 the
    busy-SM rule (cost/perf smBusy)."""
    n, s = (1 << 14, 64) if quick or not on_gpu() else (1 << 28, 8192)
    dts = ("fp32", "tf32", "fp16") if on_gpu() else ("fp32",)  # the CPU dry run: fp32 only
    for dt in dts:
        if dt != "tf32":
            yield "Add", dt, "%d" % n
    for dt in dts:
        yield "MatMul", dt, "%dx%dx%d" % (s, s, s)
    for b in ((1,) if quick or not on_gpu() else (1, 32)):
        yield "Conv", "fp32", "%dx256x14x14x256x3" % b


def power_rows(quick=False):
    """Board power and SM clock of single kernels run back to back (a CUDA graph of several
    calls, replayed for ~2 s), with the per-call time: what `go run ./scripts/choices -gpu GPU
    FILE` sets beside the power model's draw for the same kernels. NCHW, cudnn.benchmark on."""
    torch.backends.cudnn.benchmark = True
    tdt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16}
    for op, dt, shape in power_points(quick):
        set_dtype(dt)
        t = tdt[dt]
        dims = [int(v) for v in shape.split("x")]
        if op == "Add":
            x, y = torch.randn(dims[0], device=DEV, dtype=t), torch.randn(dims[0], device=DEV, dtype=t)

            def fn():
                return torch.add(x, y)
        elif op == "MatMul":
            a = torch.randn(dims[0], dims[2], device=DEV, dtype=t)
            b = torch.randn(dims[2], dims[1], device=DEV, dtype=t)

            def fn():
                return torch.matmul(a, b)
        else:
            nb, c, h, w, k, r = dims
            x = torch.randn(nb, c, h, w, device=DEV, dtype=t)
            wt = torch.randn(k, c, r, r, device=DEV, dtype=t)

            def fn():
                return torch.nn.functional.conv2d(x, wt, padding=r // 2)
        for _ in range(3):  # cudnn.benchmark picks its algorithm on the first call
            fn()
        reps = 5 if op == "MatMul" else 20
        watts = clock = ""
        if on_gpu():
            g = capture(fn, reps)  # one graph, timed and then drawn from
            ms = replay_ms(g, reps, iters=5)
            pw, ck = power_and_clock(g.replay)
            watts = "" if pw is None else "%.0f" % pw
            clock = "" if ck is None else "%.0f" % ck
            del g
        else:
            ms = wall_ms(fn, reps=reps, iters=5)
        yield dict(op=op, dtype=dt, shape=shape, ms="%.5f" % ms, power_w=watts, clock_mhz=clock)
        del fn
        fresh_baseline()


POWER_FIELDS = ["op", "dtype", "shape", "ms", "power_w", "clock_mhz"]


def clock_window_points(quick):
    """The --clock-window runs: (mix, calls). Each run is an fp16 8192^3 product called back to
    back `calls` times after an idle pause, alone (mix none) or each call followed by a DRAM
    stream of about its length (mix stream: the board's average power halves while the
    product's own need does not)."""
    calls = (1, 4) if quick or not on_gpu() else (1, 4, 16, 64, 256)
    for mix in ("none", "stream"):
        for n in calls:
            yield mix, n


def clock_window_rows(quick=False):
    """Per-call time of one dense product over runs of growing length, each after an idle
    pause (half a second), every call timed by its own pair of CUDA events: whether the SM clock a dense kernel
    holds is set by the kernel's own power (the time model's per-kernel rule, cost/perf
    clockFraction: every call alike) or by the power a run has averaged so far (the first calls
    of a run faster than its last, a product between streams faster than one among products).
    Our H200's 8192^3 fp16 product ran 1.444 ms a call in 7-ms replays and 1.68 ms in 34-ms
    ones, and held 1400 MHz (668 W) over 2 s where the model's clock rule gives 0.88 of boost
    (2026-12-05 note). Columns: mix, calls, idle_s, first_ms, median_ms, last_ms (the median of
    the run's last quarter), clock_mhz (read as the run ends)."""
    n = 8192 if on_gpu() else 64
    t = torch.float16 if on_gpu() else torch.float32
    a = torch.randn(n, n, device=DEV, dtype=t)
    b = torch.randn(n, n, device=DEV, dtype=t)
    # Streams lasting about one product: an add of two 2^28-element fp16 vectors moves 1.5 GB,
    # ~0.35 ms at 4.3 TB/s; three of them beside a 1.4 ms product.
    m = (1 << 28) if on_gpu() else (1 << 10)
    x = torch.randn(m, device=DEV, dtype=t)
    y = torch.randn(m, device=DEV, dtype=t)
    # Our H200's products ran 16% slower a call in 34-ms replays than in 7-ms ones: the window
    # the clock follows is milliseconds long, so half a second idle starts each run afresh.
    idle = 0.5 if on_gpu() else 0.01

    def stream():
        for _ in range(3):
            torch.add(x, y)

    for _ in range(3):  # cuBLAS picks its kernel on the first call
        torch.matmul(a, b)
    stream()
    sync()
    for mix, calls in clock_window_points(quick):
        time.sleep(idle)
        if on_gpu():
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
            for start, end in ev:
                start.record()
                torch.matmul(a, b)
                end.record()
                if mix == "stream":
                    stream()
            torch.cuda.synchronize()
            ts = [start.elapsed_time(end) for start, end in ev]
            clock = "%.0f" % torch.cuda.clock_rate() if hasattr(torch.cuda, "clock_rate") else ""
        else:
            ts, clock = [], ""
            for _ in range(calls):
                t0 = time.perf_counter()
                torch.matmul(a, b)
                ts.append((time.perf_counter() - t0) * 1e3)
                if mix == "stream":
                    stream()
        tail = ts[len(ts) - max(1, len(ts) // 4):]
        yield dict(op="MatMul", dtype="fp16" if on_gpu() else "fp32", shape="%dx%dx%d" % (n, n, n), mix=mix,
                   calls=calls, idle_s="%g" % idle, first_ms="%.5f" % ts[0],
                   median_ms="%.5f" % statistics.median(ts), last_ms="%.5f" % statistics.median(tail),
                   clock_mhz=clock)


CLOCK_WINDOW_FIELDS = ["op", "dtype", "shape", "mix", "calls", "idle_s", "first_ms", "median_ms", "last_ms",
                       "clock_mhz"]

FIRST_LOAD_FIELDS = ["dtype", "n", "mode", "ms"]


def first_load_rows(quick=False):
    """Per-call time of a small add (n elements, fp16 and fp32) in a CUDA graph of 20 calls,
    four ways: the add repeated (mode add: one kernel following itself, as our single-kernel
    tables time it), the add alternating with a multiply on other tensors (alt: each kernel
    follows a different one with different operands, ms per pair), the add alternating with a
    multiply on its own output (chain: different code, data just written), and the multiply
    alone (mul). A whole model's pointwise kernels last about 0.5 us more than a repeated one
    (cost/perf pointwiseLoadCycles): alt and chain against add and mul say whether that is the
    first load of data another kernel left, or the fetch of a different kernel's code."""
    sizes = (1 << 12,) if quick or not on_gpu() else (1 << 12, 1 << 16, 1 << 20)
    dts = (("fp32", torch.float32),) if not on_gpu() else (("fp16", torch.float16), ("fp32", torch.float32))
    for dn, dt in dts:
        for n in sizes:
            x, y, u, v = (torch.randn(n, device=DEV, dtype=dt) for _ in range(4))
            out, out2 = torch.empty_like(x), torch.empty_like(x)
            modes = {
                "add": lambda: torch.add(x, y, out=out),
                "mul": lambda: torch.mul(u, v, out=out2),
                "alt": lambda: (torch.add(x, y, out=out), torch.mul(u, v, out=out2)),
                "chain": lambda: (torch.add(x, y, out=out), torch.mul(out, v, out=out2)),
            }
            for mode, fn in modes.items():
                ms = graph_ms(fn, reps=20, iters=10) if on_gpu() else wall_ms(fn, reps=20, iters=5)
                yield dict(dtype=dn, n=n, mode=mode, ms="%.5f" % ms)

HOST_LINK_FIELDS = ["direction", "memory", "bytes", "ms"]


def host_link_rows(quick=False):
    """Copies between host and device memory as onnxruntime's session run makes them for inputs
    and outputs fed as host arrays (a copy, then a synchronize: its gpu_data_transfer.cc), each
    timed whole on the wall clock: h2d and d2h, to and from pageable memory (a NumPy array's, a
    default CPU tensor's) and pinned memory, 4 KiB to 256 MiB. onnxcost prices such a copy as a
    launch plus its bytes at perf.HostLinkShare (0.80) of the GPU's pcie_gbps, the pinned rate:
    `go run ./scripts/choices -gpu GPU host_link.csv` sets both beside the table."""
    sizes = (1 << 12, 1 << 20) if quick or not on_gpu() else tuple(1 << s for s in range(12, 29, 2))
    for n in sizes:
        for memory in ("pageable", "pinned"):
            host = torch.empty(n, dtype=torch.uint8, pin_memory=memory == "pinned" and on_gpu())
            dev = torch.empty(n, dtype=torch.uint8, device=DEV)
            copies = {"h2d": lambda: (dev.copy_(host), sync()), "d2h": lambda: (host.copy_(dev), sync())}
            reps = 2 if n >= 1 << 26 else 10
            for direction, fn in copies.items():
                yield dict(direction=direction, memory=memory, bytes=n, ms="%.5f" % wall_ms(fn, reps=reps, iters=5))


HOST_OP_FIELDS = ["op", "mode", "kernels", "us", "kernel_us"]


def host_op_cases():
    """The --host-ops cases: (op, mode, fn, kernels per call). Tensors are tiny (a kernel runs in a few
    µs), so a run of back-to-back calls is bound by the host's issue: its time per call is what the
    call costs the CPU, by op kind, which onnxcost's eager runtime charges as dispatch_us per op and
    module_us per module call (hwdb/runtimes.yaml). mode: "functional" (torch.* / F.* called
    directly), "module" (the same op as an nn.Module call), "autocast" (functional under
    torch.autocast, half on a GPU, bfloat16 on the CPU dry run). kernels: the kernels one call
    launches (0 for a view)."""
    F = torch.nn.functional
    x = torch.randn(8, 64, device=DEV)
    y = torch.randn(8, 64, device=DEV)
    w = torch.randn(64, 64, device=DEV)
    b = torch.randn(64, device=DEV)
    x4 = torch.randn(2, 4, 8, 16, device=DEV)
    img = torch.randn(1, 8, 8, 8, device=DEV)
    cw = torch.randn(8, 8, 3, 3, device=DEV)
    idx = torch.randint(0, 64, (8,), device=DEV)
    lin = torch.nn.Linear(64, 64).to(DEV)
    conv = torch.nn.Conv2d(8, 8, 3, padding=1).to(DEV)
    bn = torch.nn.BatchNorm2d(8).to(DEV).eval()
    ln = torch.nn.LayerNorm(64).to(DEV)
    relu = torch.nn.ReLU().to(DEV)
    rm, rv = torch.zeros(8, device=DEV), torch.ones(8, device=DEV)
    cases = [
        ("add", lambda: torch.add(x, y), 1),
        ("mul", lambda: torch.mul(x, y), 1),
        ("relu", lambda: torch.relu(x), 1),
        ("gelu", lambda: F.gelu(x), 1),
        ("softmax", lambda: F.softmax(x, dim=-1), 1),
        ("layer_norm", lambda: F.layer_norm(x, (64,), w[0], b), 1),
        ("linear", lambda: F.linear(x, w, b), 1),
        ("matmul", lambda: torch.matmul(x, w), 1),
        ("bmm4d", lambda: torch.matmul(x4, x4.transpose(-1, -2)), 1),
        ("conv2d", lambda: F.conv2d(img, cw, padding=1), 1),
        ("batch_norm", lambda: F.batch_norm(img, rm, rv, training=False), 1),
        ("max_pool2d", lambda: F.max_pool2d(img, 2), 1),
        ("cat", lambda: torch.cat([x, y], dim=-1), 1),
        ("embedding", lambda: F.embedding(idx, w), 1),
        ("view", lambda: x.view(64, 8), 0),
        ("permute", lambda: x4.permute(0, 2, 1, 3), 0),
        ("contiguous", lambda: x4.permute(0, 2, 1, 3).contiguous(), 1),
    ]
    cases = [(op, "functional", fn, k) for op, fn, k in cases]
    cases += [("linear", "module", lambda: lin(x), 1), ("conv2d", "module", lambda: conv(img), 1),
              ("batch_norm", "module", lambda: bn(img), 1), ("layer_norm", "module", lambda: ln(x), 1),
              ("relu", "module", lambda: relu(x), 1)]
    return cases + transformer_host_cases() + block_host_cases()


def half_dtype():
    """The 16-bit type of the host-op rows: half on a GPU, bfloat16 on the CPU dry run (the CPU's
    half matmul is missing in older builds)."""
    return torch.float16 if on_gpu() else torch.bfloat16


def transformer_host_cases():
    """The same kinds as a transformer calls them (mode "fp16-3d"): 16-bit tensors of a layer's ranks
    at sequence 16, hidden 256, four heads, with its broadcasts (a bias over the hidden size, a mask
    over the keys) and permuted operands. The functional rows are fp32 [8, 64]; onnxcost's per-kind
    host table was taken from those alone, and a model's calls ran 0.9-1.5 times it (note58): whether
    rank, broadcasting or precision moves the host's cost per call is what these rows say."""
    F = torch.nn.functional
    h = half_dtype()
    r = lambda *shape: torch.randn(*shape, device=DEV, dtype=h)
    x3, y3, bias, w = r(1, 16, 256), r(1, 16, 256), r(256), r(256, 256)
    q4, k4 = r(1, 4, 16, 64), r(1, 4, 16, 64)
    mask = r(1, 1, 1, 16)
    return [(op, "fp16-3d", fn, k) for op, fn, k in [
        ("add", lambda: x3 + bias, 1),
        ("mul", lambda: x3 * y3, 1),
        ("gelu", lambda: F.gelu(x3), 1),
        ("softmax", lambda: F.softmax(q4 @ k4.transpose(-1, -2) + mask, dim=-1), 3),
        ("layer_norm", lambda: F.layer_norm(x3, (256,), w[0], bias), 1),
        ("linear", lambda: F.linear(x3, w, bias), 1),
        ("matmul", lambda: torch.matmul(x3, w), 1),
        ("bmm4d", lambda: torch.matmul(q4, k4.transpose(-1, -2)), 1),
        ("cat", lambda: torch.cat([q4, k4], dim=2), 1),
        ("view", lambda: x3.view(1, 16, 4, 64), 0),
        ("permute", lambda: q4.permute(0, 2, 1, 3), 0),
        ("contiguous", lambda: q4.permute(0, 2, 1, 3).contiguous(), 1),
    ]]


class _TinyBertLayer(torch.nn.Module):
    """One post-norm encoder layer as Hugging Face's BertLayer writes its forward: projections,
    transpose_for_scores (view, permute), scores scaled and masked, softmax, dropout (a no-op call in
    eval), the context permuted back, then the output and feed-forward blocks with their residual
    LayerNorms: 17 kernels a call."""

    def __init__(self, d, heads, dev, dt):
        super().__init__()
        lin = lambda i, o: torch.nn.Linear(i, o, device=dev, dtype=dt)
        self.q, self.k, self.v, self.o = lin(d, d), lin(d, d), lin(d, d), lin(d, d)
        self.up, self.down = lin(d, 4 * d), lin(4 * d, d)
        self.ln1 = torch.nn.LayerNorm(d, device=dev, dtype=dt)
        self.ln2 = torch.nn.LayerNorm(d, device=dev, dtype=dt)
        self.drop = torch.nn.Dropout(0.1)
        self.act = torch.nn.GELU()
        self.heads, self.hd = heads, d // heads

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.heads, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + mask
        probs = self.drop(torch.nn.functional.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(x.shape[0], x.shape[1], -1)
        x = self.ln1(self.drop(self.o(ctx)) + x)
        return self.ln2(self.drop(self.down(self.act(self.up(x)))) + x)


def block_host_cases():
    """Whole module calls (mode "block"): a transformer layer written as Hugging Face writes it, and
    torchvision's ResNet bottleneck, at tiny sizes in 16-bit. Their host time per call against the
    sum of their ops' rows (functional and module) says how much a model's own Python, between its
    ops, adds to a call: a cost the ONNX graph cannot show."""
    h = half_dtype()
    bert = _TinyBertLayer(256, 4, DEV, h).eval()
    x = torch.randn(1, 16, 256, device=DEV, dtype=h)
    mask = torch.zeros(1, 1, 1, 16, device=DEV, dtype=h)
    from torchvision.models.resnet import Bottleneck
    down = torch.nn.Sequential(torch.nn.Conv2d(64, 256, 1, bias=False), torch.nn.BatchNorm2d(256))
    neck = Bottleneck(64, 64, downsample=down).to(DEV, h).eval()
    img = torch.randn(1, 64, 8, 8, device=DEV, dtype=h)
    # Bottleneck: three conv+bn(+relu), the downsample's conv+bn, the residual add and relu.
    return [("bert_layer", "block", lambda: bert(x, mask), 17),
            ("bottleneck", "block", lambda: neck(img), 10)]


def host_op_rows(quick=False):
    """Per-call host cost of eager ops by kind (host_op_cases), as microseconds per call over a
    synchronised run of back-to-back calls, median of 5 runs; kernel_us is the same run's kernel time per
    call from the profiler (empty on the CPU dry run), to show the run was host-bound (us well above it)."""
    n = 50 if quick or not on_gpu() else 2000
    half = half_dtype()
    with torch.no_grad():
        for op, mode, call, k in host_op_cases():
            for m in ((mode, "autocast") if mode == "functional" and op in ("linear", "matmul", "conv2d", "add")
                      else (mode,)):
                def run(c=call, m=m):
                    with torch.autocast(DEV, dtype=half, enabled=(m == "autocast")):
                        for _ in range(n):
                            c()
                    sync()
                run()  # warm: allocator, cuDNN/cuBLAS handles, autocast's caches
                runs = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    run()
                    runs.append((time.perf_counter() - t0) / n * 1e6)
                kus = ""
                if on_gpu() and k:
                    st = kernel_stats(run, calls=1)
                    if st and st[0] is not None:
                        kus = "%.2f" % (st[0] * 1000 / n)
                        if mode == "block":
                            k = int(round(st[1] / n))  # what the call launched, not the count expected
                yield dict(op=op, mode=m, kernels=k, us="%.2f" % statistics.median(runs), kernel_us=kus)


GEMM_CHOICE_FIELDS = ["dtype", "batch", "m", "n", "k", "ms", "kernel", "grid", "block", "regs", "smem", "us"]
LINEAR_CHOICE_FIELDS = ["dtype", "batch", "m", "n", "k", "bias", "ms", "kernel", "grid", "block", "regs", "smem", "us"]
LAYOUT_FIELDS = ["dtype", "batch", "m", "n", "k", "layout", "ms", "kernel", "grid", "block", "regs", "smem", "us"]


class _RMSNorm(torch.nn.Module):
    """RMSNorm as the zoo graph writes it: pow, mean, rsqrt, scale."""

    def __init__(self, d, dev, dt):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d, device=dev, dtype=dt), requires_grad=False)

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class _Attention(torch.nn.Module):
    """Self-attention of one decode step: rotary with rotate_half, the KV cache grown by
    concatenation, two matmuls and a softmax."""

    def __init__(self, d, heads, dev, dt):
        super().__init__()
        lin = lambda: torch.nn.Linear(d, d, bias=False, device=dev, dtype=dt)
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = lin(), lin(), lin(), lin()
        self.heads, self.hd = heads, d // heads

    def forward(self, h, cos, sin, pk, pv):
        b, hd = h.shape[0], self.hd

        def rot(x):
            return torch.cat((-x[..., hd // 2:], x[..., :hd // 2]), dim=-1)

        q = self.q_proj(h).view(b, 1, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).view(b, 1, self.heads, hd).transpose(1, 2)
        v = self.v_proj(h).view(b, 1, self.heads, hd).transpose(1, 2)
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k, v = torch.cat((pk, k), dim=2), torch.cat((pv, v), dim=2)
        p = torch.softmax(q @ k.transpose(-1, -2) / hd ** 0.5, dim=-1)
        return self.o_proj((p @ v).transpose(1, 2).reshape(b, 1, -1))


class _MLP(torch.nn.Module):
    def __init__(self, d, ff, dev, dt):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d, ff, bias=False, device=dev, dtype=dt)
        self.up_proj = torch.nn.Linear(d, ff, bias=False, device=dev, dtype=dt)
        self.down_proj = torch.nn.Linear(ff, d, bias=False, device=dev, dtype=dt)

    def forward(self, h):
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


class _Layer(torch.nn.Module):
    def __init__(self, d, heads, ff, dev, dt):
        super().__init__()
        self.input_layernorm = _RMSNorm(d, dev, dt)
        self.self_attn = _Attention(d, heads, dev, dt)
        self.post_attention_layernorm = _RMSNorm(d, dev, dt)
        self.mlp = _MLP(d, ff, dev, dt)

    def forward(self, x, cos, sin, pk, pv):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, pk, pv)
        return x + self.mlp(self.post_attention_layernorm(x))


class _Decoder(torch.nn.Module):
    """A LLaMA decoder as Hugging Face names its modules (layers.N.self_attn.q_proj, ...), the
    names the zoo graph's nodes carry: run eagerly, each op pays the module call it sits in, as
    `onnxcost report --runtime pytorch` prices a module-scoped graph."""

    def __init__(self, d, heads, layers, ff, vocab, dev, dt):
        super().__init__()
        self.layers = torch.nn.ModuleList(_Layer(d, heads, ff, dev, dt) for _ in range(layers))
        self.norm = _RMSNorm(d, dev, dt)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False, device=dev, dtype=dt)

    def forward(self, x, cos, sin, cache):
        for layer, (pk, pv) in zip(self.layers, cache):
            x = layer(x, cos, sin, pk, pv)
        return self.lm_head(self.norm(x))


def llama_decode_step(b, past=1024, d=4096, heads=32, layers=32, ff=11008, vocab=32000,
                      dev="cuda", dt=torch.float16):
    """One decode step of a LLaMA-2 7B-shaped decoder in fp16 (random weights), written as the
    zoo's llama-7b graph is (onnxcost zoo llama-7b --param decode=1 --param past=1024): RMSNorm as
    pow/mean/rsqrt, rotary with rotate_half, the KV cache grown by concatenation, attention as two
    matmuls and a softmax, SwiGLU, the LM head over 32000 tokens, each in the nn.Module the zoo
    graph's node names place it in (_Decoder). Returns the step function.

    The rows of testdata/measured/h100_sxm5_pytorch.csv were measured with the same kernels
    written as plain functions (no modules), so their eager_ms paid no module calls."""
    hd = d // heads
    with torch.no_grad():
        net = _Decoder(d, heads, layers, ff, vocab, dev, dt)
        for p in net.parameters():
            if p.dim() == 2:
                p.normal_(0, 0.02)
    net.eval()
    x0 = torch.randn(b, 1, d, device=dev, dtype=dt)
    cache = [(torch.randn(b, heads, past, hd, device=dev, dtype=dt),
              torch.randn(b, heads, past, hd, device=dev, dtype=dt)) for _ in range(layers)]
    cos = torch.randn(1, 1, 1, hd, device=dev, dtype=dt)
    sin = torch.randn(1, 1, 1, hd, device=dev, dtype=dt)

    def step():
        return net(x0, cos, sin, cache)

    step.net = net
    return step


def llama_decode_rows(batches, past=1024, iters=20):
    """Decode-step rows (see llama_decode_step) at each batch."""
    for b in batches:
        step = llama_decode_step(b, past)
        with torch.inference_mode():
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            eager = median_ms(step, iters)
            kms, nk = kernel_stats(step, calls=3)
            g = capture(step, warm=1)
            graph = median_ms(g.replay, iters)
            power = mean_power(g.replay, "llama7b-decode-past%d fp16 b%d" % (past, b))
        del g, step
        torch.cuda.empty_cache()
        yield dict(model="llama7b-decode-past%d" % past, mode="infer", dtype="fp16", batch=b,
                   eager_ms="%.3f" % eager, graph_ms="%.3f" % graph, kernel_ms="%.3f" % kms,
                   kernels="%.0f" % nk, peak_mib="", power_w=power)


def export_graph_only(name, net, spec):
    """The graph-only ONNX bytes of net, exported as scripts/export_fixtures.py exports its
    fixtures (and with its helpers): a copy with every weight re-drawn (torch 1.13 merges equal
    initializers into Identity nodes otherwise), eval mode under TrainingMode.PRESERVE (inference
    semantics, BatchNorm kept as a node as eager PyTorch runs it; for a model without BN, EVAL
    and PRESERVE export the same graph), opset 13, constant folding, then every float weight
    over 1 KiB moved to external data that is thrown away (strip_float_weights)."""
    scripts_on_path()
    import export_fixtures as ef  # here, not at the top: it needs onnx, which only --calib-dir does
    seed = ef.BASE_SEED + zlib.crc32(name.encode()) % 1000
    model = copy.deepcopy(net).cpu().float().eval()
    ef.rerandomize(model, seed)
    has_bn = any(isinstance(x, torch.nn.modules.batchnorm._BatchNorm) for x in model.modules())
    if has_bn:
        ef.rerandomize_bn_stats(model, seed)
    inputs, input_names, output_names, axes = spec
    args = inputs(torch.Generator().manual_seed(seed))
    kw = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False  # PyTorch 2.9+ defaults to the dynamo exporter, which has no PRESERVE
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        # torch warns that constant folding may alter parameters under PRESERVE; that applies
        # to a module in training mode, not to ours.
        warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
        torch.onnx.export(model, args, buf, opset_version=ef.OPSET, training=torch.onnx.TrainingMode.PRESERVE,
                          input_names=input_names, output_names=output_names, dynamic_axes=axes,
                          do_constant_folding=True, **kw)
    del model
    data = buf.getvalue()
    if has_bn:
        ef.check_bn_kept(data, name)
    return strip_float_weights(data, name, ef.SIZE_THRESHOLD, ef.FLOAT_TYPES)


def strip_float_weights(data, name, threshold, float_types):
    """export_fixtures.strip_weights for any model: every float initializer over threshold bytes
    moved to external data NAME.onnx.data in a temporary folder (so the offsets and lengths are
    real) that is then thrown away; integer initializers stay inline whatever their size, where
    strip_weights stops (they are shapes and index tables that shape inference reads, like BERT's
    4 KiB position_ids)."""
    import tempfile
    import onnx  # here, not at the top: only --calib-dir needs onnx
    import onnx.external_data_helper
    model = onnx.load_from_string(data)
    onnx.external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=name + ".onnx.data", size_threshold=threshold)
    for init in model.graph.initializer:
        if init.data_type not in float_types:
            init.data_location = onnx.TensorProto.DEFAULT
            del init.external_data[:]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".onnx")
        onnx.save_model(model, path)
        onnx.checker.check_model(path)  # with the data present
        with open(path, "rb") as f:
            return f.read()


class CalibDir:
    """DIR/measurements.csv in onnxcost calibrate's format (calib/measurements.go: a header, then
    model,ms,batch,dtype,dims,runtime,train per measured call, # comment lines) and the graph-only
    models its rows name, DIR/models/NAME.onnx (paths relative to DIR). An existing table is
    appended to, so that runs accumulate."""

    COLUMNS = ["model", "ms", "batch", "dtype", "dims", "runtime", "train"]

    def __init__(self, path, note):
        self.dir = path
        self.models = {}
        os.makedirs(os.path.join(path, "models"), exist_ok=True)
        table = os.path.join(path, "measurements.csv")
        new = not os.path.exists(table) or os.path.getsize(table) == 0
        if not new:
            check_header(table, self.COLUMNS)
        self.f = open(table, "a", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        if new:
            self.w.writerow(self.COLUMNS)
        self.comment(note)
        for line in provenance():
            self.comment(line)

    def export(self, name, net, spec):
        """The table's path of NAME's export, written once (kept when an earlier run wrote it);
        None, with a note, when the model cannot be exported: its rows are then left out."""
        if name in self.models:
            return self.models[name]
        rel = "models/%s.onnx" % name
        path = os.path.join(self.dir, rel)
        if os.path.exists(path):
            print("calib: keeping %s from an earlier run" % path, file=sys.stderr)
        else:
            try:
                data = export_graph_only(name, net, spec)
            except (Exception, SystemExit) as e:  # the measurement itself must go on
                print("calib: %s not exported, its calibration rows left out: %s" % (name, e), file=sys.stderr)
                rel = None
            else:
                write_atomic(path, data)
                print("calib: exported %s (%d bytes, graph-only)" % (path, len(data)), file=sys.stderr)
        self.models[name] = rel
        return rel

    def infer_rows(self, model, row):
        """A whole-model row as two measured calls: the CUDA-graph replay and the eager call."""
        dt = row["dtype"]  # fp16-amp: autocast, a dtype onnxcost prices as such
        # The layout the row ran in: channels_last for tf32/fp16 models (build), which
        # onnxcost prices under its -nhwc profiles (no NCHW transposes around cuDNN's
        # convolutions, depthwise convolutions in cuDNN); fp32 and autocast rows run NCHW.
        cl = "-nhwc" if dt in ("tf32", "fp16") else ""
        self.row(model, row["graph_ms"], batch=row["batch"], dtype=dt, runtime="graph" + cl)
        self.row(model, row["eager_ms"], batch=row["batch"], dtype=dt, runtime="pytorch" + cl)

    def train_rows(self, model, row):
        """A training row (train_row's) as one measured training step. Its optimizer as onnxcost
        names it: train_row's SGD has momentum 0.9. The profile is pytorch-nhwc for every
        training row: the CNNs ran channels_last, and BERT, which has no convolution, is priced
        alike under both, so the training rows share one host factor."""
        optim = row["mode"][len("train-"):]
        self.row(model, row["eager_ms"], batch=row["batch"], dtype=row["dtype"], runtime="pytorch-nhwc",
                 train="momentum" if optim == "sgd" else optim)

    def row(self, model, ms, batch="", dtype="", dims="", runtime="", train=""):
        if not float(ms) > 0:  # calibrate rejects it: a time below the printed resolution
            print("calib: %s %s %s: %s ms left out" % (model, dtype, dims or batch, ms), file=sys.stderr)
            return
        self.w.writerow([model, ms, batch, dtype, dims, runtime, train])
        self.f.flush()

    def comment(self, text):
        self.f.write("# %s\n" % text)
        self.f.flush()

    def close(self):
        self.f.close()


def check_header(table, columns):
    """Stops with one line unless the table's first non-comment line is columns."""
    with open(table, newline="") as f:
        for line in f:
            if line.startswith("#"):
                continue
            if next(csv.reader([line])) != columns:
                raise SystemExit("%s: header is not %s; give another --calib-dir" % (table, ",".join(columns)))
            return


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def annotate_modules(net):
    """Hooks that put every submodule's forward inside a record_function named by its module path
    ("layer1.0.conv1"), for calib/profile to find the ONNX node; returns their handles. Ranges
    nest, and the innermost around a launch names it, so ops of a parent's own forward (the
    residual Add of a bottleneck, attention's matmuls) carry the parent's path."""
    handles = []
    for path, mod in net.named_modules():
        if not path:
            continue
        open_ranges = []  # a module called again before it returns (recursion) nests

        def pre(_mod, _inputs, path=path, open_ranges=open_ranges):
            rf = torch.profiler.record_function(path)
            rf.__enter__()
            open_ranges.append(rf)

        def post(_mod, _inputs, _output, open_ranges=open_ranges):
            open_ranges.pop().__exit__(None, None, None)
        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post))
    return handles


class KinetoDir:
    """DIR/NAME_DTYPE_bBATCH.json: one profiled eager call per inference row, as a Kineto
    Chrome trace (calib/profile/kineto.go)."""

    def __init__(self, path):
        self.dir = path
        os.makedirs(path, exist_ok=True)
        if not on_gpu():
            print("kineto: CPU traces have no kernel events; calibrate times their top-level cpu_ops",
                  file=sys.stderr)

    def record(self, net, call, stem):
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu() else [])
        hooks = annotate_modules(net)
        try:
            sync()
            with profile(activities=acts, record_shapes=False) as prof:
                call()
                sync()
        finally:
            for h in hooks:
                h.remove()
        path = os.path.join(self.dir, stem + ".json")
        if torch.autograd.kineto_available():
            prof.export_chrome_trace(path)
        else:
            labels = {p for p, _ in net.named_modules() if p}
            with open(path, "w") as f:
                json.dump(kineto_envelope(prof.events(), labels), f)
        print("kineto: wrote %s" % path, file=sys.stderr)


def kineto_envelope(events, labels):
    """A Kineto Chrome trace of a profiler without Kineto (Debian's torch 1.13 is built without
    it, and its export_chrome_trace writes the older autograd profiler's bare event list, which
    carries no categories): the same CPU ranges as "X" events, the record_function ranges named
    in labels as cat user_annotation and the rest as cpu_op, as libkineto's ChromeTraceLogger
    writes them. There are no kernel events: this happens on CPU-only builds."""
    out = []
    for e in events:
        out.append({"ph": "X", "cat": "user_annotation" if e.name in labels else "cpu_op",
                    "name": e.name, "pid": 0, "tid": e.thread, "ts": e.time_range.start,
                    "dur": e.time_range.end - e.time_range.start, "args": {}})
    return {"schemaVersion": 1, "traceName": "measure_gpu.py: torch %s without Kineto" % torch.__version__,
            "traceEvents": out}


INFER_FIELDS = ["model", "mode", "dtype", "batch", "eager_ms", "graph_ms", "kernel_ms",
                "kernels", "peak_mib", "power_w"]


def open_table(path, fields):
    """The usual output CSV; a --device cpu run heads it with CPU_NOTE."""
    f = open(path, "w", newline="")
    if not on_gpu():
        f.write("# %s\n" % CPU_NOTE)
    w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    return f, w


def software():
    """What ran the calls, for the calibration's source: PyTorch's version, with the CUDA and
    cuDNN it was built with where it has them."""
    parts = ["PyTorch %s" % torch.__version__]
    if torch.version.cuda:
        parts.append("CUDA %s" % torch.version.cuda)
    try:
        v = torch.backends.cudnn.version()
    except (RuntimeError, AttributeError):
        v = None
    if v:
        # cuDNN 9 encodes 10000·major + 100·minor + patch, earlier ones 1000·major + 100·minor + patch.
        major, minor = (v // 10000, v // 100 % 100) if v >= 90000 else (v // 1000, v // 100 % 10)
        parts.append("cuDNN %d.%d.%d" % (major, minor, v % 100))
    return ", ".join(parts)


def provenance():
    """The comment lines onnxcost calibrate reads as the table's device (calib/provenance.go):
    the GPU as CUDA names it, its SMs, its CUDA-visible memory and the NVIDIA driver, so that a
    table calibrating another GPU is caught, and the software that ran the calls; "device: cpu"
    for a --device cpu dry run."""
    if not (on_gpu() and torch.cuda.is_available()):
        return ["device: cpu", "software: %s" % software()]
    p = torch.cuda.get_device_properties(0)
    lines = ["device: %s" % p.name, "sms: %d" % p.multi_processor_count,
             "memory_gib: %.1f" % (p.total_memory / 2**30)]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.split("\n")[0].strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    if out:
        lines.append("driver: %s" % out)
    lines.append("software: %s" % software())
    return lines


def host_cpu():
    """The host's CPU model and logical CPU count: an eager call's time is the host's (note58)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s (%d logical CPUs)" % (model, os.cpu_count() or 0)


def run_note():
    """Where and with what a run measured, for the calibration table's comment."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if on_gpu():
        where = "%s, CUDA %s, cuDNN %s" % (torch.cuda.get_device_name(), torch.version.cuda,
                                            torch.backends.cudnn.version())
    else:
        where = CPU_NOTE
    return "measure_gpu.py %s: torch %s, %s; host %s" % (when, torch.__version__, where, host_cpu())


def run_llama(a):
    if a.calib_dir or a.kineto:
        print("llama7b-decode: not exported or profiled (13 GB of fp16 weights in one module; "
              "price it with onnxcost zoo llama-7b --param decode=1 --param past=1024)", file=sys.stderr)
    bs = [int(x) for x in (a.batches or "1,8,32").split(",")]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=INFER_FIELDS, lineterminator="\n")
        w.writeheader()
        for row in llama_decode_rows(bs):
            w.writerow(row)
            f.flush()


def run_kernels(a, calib):
    f, w = open_table(a.out, ["op", "dtype", "shape", "ms"])
    with f:
        for row in kernel_rows(a.quick, calib):
            w.writerow(row)
            f.flush()


def model_points(a):
    """The (models, dtypes, batches) of a whole-model run."""
    models = a.models.split(",") if a.models else ["resnet50", "densenet121", "vgg16", "mobilenet_v2"]
    dtypes = a.dtypes.split(",") if a.dtypes else ["fp32", "tf32", "fp16"]
    batches = [int(b) for b in a.batches.split(",")] if a.batches else [1, 32, 128]
    if a.quick:
        models, dtypes, batches = ["resnet50"], ["fp16"], [1, 32]
    if not on_gpu():
        if a.quick:
            dtypes, batches = ["fp32"], [1, 2]
        left = [d for d in dtypes if d != "fp32"]
        if left:
            print("--device cpu: only fp32 (leaving out %s)" % ",".join(left), file=sys.stderr)
        dtypes = ["fp32"]
    return models, dtypes, batches


def run_models(a, calib, kineto):
    torch.backends.cudnn.benchmark = True
    iters = a.iters if on_gpu() else min(a.iters, 3)
    models, dtypes, batches = model_points(a)
    if a.train:
        models = []  # the training steps only
    f, w = open_table(a.out, INFER_FIELDS)
    with f:
        for name in models:
            for dt in dtypes:
                for b in batches:
                    t0 = time.time()
                    try:
                        w.writerow(infer_row(name, dt, b, iters, calib, kineto))
                    except Exception as e:  # one failed point must not lose the rest
                        print("skip %s %s %d: %s" % (name, dt, b, e), file=sys.stderr)
                    f.flush()
                    print("%s %s b%d %.1fs" % (name, dt, b, time.time() - t0), file=sys.stderr)
        if a.train or (not a.quick and not a.models and on_gpu()):
            for name, optim, b in [("resnet50", "sgd", 64), ("resnet50", "adam", 64),
                                   ("vgg16", "sgd", 32), ("densenet121", "adam", 32),
                                   ("bert_base", "adam", 8), ("bert_base", "adam", 32)]:
                try:
                    w.writerow(train_row(name, optim, b, 20, calib))
                except Exception as e:
                    print("skip train %s: %s" % (name, e), file=sys.stderr)
                f.flush()


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="one model, two points (with --kernels: two of each)")
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--kernels", action="store_true", help="single-kernel rows instead")
    ap.add_argument("--models", help="comma-separated subset, e.g. bert_base,bert_large")
    ap.add_argument("--batches", help="comma-separated batches (default 1,32,128)")
    ap.add_argument("--dtypes", help="comma-separated subset of fp32,tf32,fp16")
    ap.add_argument("--profile", help="MODEL:DTYPE:BATCH[:graph][,...] (MODEL a torchvision name, bert_base, "
                    "bert_large, llama_hf_small, gpt2_hf_small or llama7b-decode; :graph profiles one CUDA-graph "
                    "replay of the call): every kernel of one call of each instead")
    ap.add_argument("--gemm-choices", action="store_true",
                    help="which cuBLAS kernels (name, grid, block, time) run torch.matmul over a sweep of "
                    "LLM- and BERT-shaped products, in fp32, tf32 and fp16, instead")
    ap.add_argument("--wave-edges", action="store_true",
                    help="--gemm-choices' table for fp16 products stepping 128 rows at a time across one, two "
                    "and three waves of the GPU's SMs (wave_edge_points), instead")
    ap.add_argument("--linear-choices", action="store_true",
                    help="which cuBLAS kernels (name, grid, block, time) run F.linear with a bias over a sweep of "
                    "LLM- and BERT-shaped Linears, weights cold, in fp32, tf32 and fp16, instead")
    ap.add_argument("--layouts", action="store_true",
                    help="each of a sweep of fp32 products timed as A·B and as A·Bᵀ (F.linear's weight layout), "
                    "weights cold, with their kernels (layout_rows), instead")
    ap.add_argument("--conv-choices", action="store_true",
                    help="which cuDNN kernels (name, grid, block, time) run VGG-16's and ResNet-50's convolutions, "
                    "in fp16 (channels_last and NCHW) and fp32, instead")
    ap.add_argument("--conv-grads", action="store_true",
                    help="which cuDNN kernels (name, grid, block, time) run the data and the weight gradient of "
                    "ResNet-50's, VGG-16's and DeepBench's 5x5 convolutions, each alone, in fp32 and fp16 "
                    "channels_last, instead")
    ap.add_argument("--rnn", action="store_true",
                    help="one-layer LSTM and GRU calls (cuDNN) at 1, 25 and 200 steps: time and kernels per call")
    ap.add_argument("--power", action="store_true",
                    help="board power and SM clock of single kernels run back to back (op,dtype,shape,ms,power_w,"
                         "clock_mhz): a DRAM stream, dense products, a batch-1 convolution")
    ap.add_argument("--clock-window", action="store_true",
                    help="per-call time of an fp16 8192^3 product over runs of 1-256 calls after half a "
                         "second idle, alone and between DRAM streams, each call timed by its own events "
                         "(op,dtype,shape,mix,calls,idle_s,first_ms,median_ms,last_ms,clock_mhz), instead")
    ap.add_argument("--first-load", action="store_true",
                    help="per-call time of a small add repeated, alternating with a multiply on other "
                         "tensors and on its output, and the multiply alone (dtype,n,mode,ms), instead")
    ap.add_argument("--host-ops", action="store_true",
                    help="the host's cost per eager call by op kind, functional, as a module call and under "
                         "autocast (op,mode,kernels,us,kernel_us): tiny tensors, so runs are host-bound, instead")
    ap.add_argument("--host-link", action="store_true",
                    help="copies between host and device memory, each with a synchronize, pageable and "
                         "pinned, 4 KiB to 256 MiB (direction,memory,bytes,ms), instead")
    ap.add_argument("--llama-decode", action="store_true",
                    help="LLaMA-7B-shaped decode steps (past 1024) at --batches (default 1,8,32) instead")
    ap.add_argument("--train", action="store_true",
                    help="the six AMP training steps only (a full run ends with them), each also a "
                    "training row of --calib-dir's table")
    ap.add_argument("--calib-dir", metavar="DIR",
                    help="also append onnxcost calibrate's table to DIR/measurements.csv, with the "
                    "models exported graph-only to DIR/models/NAME.onnx")
    ap.add_argument("--kineto", metavar="DIR",
                    help="also write one profiled eager call per inference row, DIR/NAME_DTYPE_bBATCH.json")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: a dry run of the same code paths without a GPU (see the docstring)")
    return ap.parse_args()


def main():
    global DEV
    a = parse_args()
    DEV = a.device
    if on_gpu() and not torch.cuda.is_available():
        raise SystemExit("measure_gpu.py: no CUDA device here (--device cpu for a dry run)")
    if not on_gpu() and (a.llama_decode or a.train or (a.profile and "llama7b-decode" in a.profile)):
        raise SystemExit("measure_gpu.py: --llama-decode, --train and --profile llama7b-decode need --device cuda")
    if a.llama_decode:
        return run_llama(a)
    # The sweeps that write one table of their own, whichever flag is given.
    sweep = next(((fields, rows) for on, fields, rows in [
        (a.gemm_choices, GEMM_CHOICE_FIELDS, gemm_choice_rows),
        (a.wave_edges, GEMM_CHOICE_FIELDS, lambda quick=False: gemm_choice_rows(quick, wave_edge_points)),
        (a.linear_choices, LINEAR_CHOICE_FIELDS, linear_choice_rows),
        (a.layouts, LAYOUT_FIELDS, layout_rows),
        (a.conv_choices, CONV_CHOICE_FIELDS, conv_choice_rows),
        (a.conv_grads, CONV_GRAD_FIELDS, conv_grad_rows),
        (a.rnn, RNN_FIELDS, rnn_rows),
        (a.power, POWER_FIELDS, power_rows),
        (a.clock_window, CLOCK_WINDOW_FIELDS, clock_window_rows),
        (a.first_load, FIRST_LOAD_FIELDS, first_load_rows),
        (a.host_ops, HOST_OP_FIELDS, host_op_rows),
        (a.host_link, HOST_LINK_FIELDS, host_link_rows)] if on), None)
    if sweep:
        fields, rows = sweep
        f, w = open_table(a.out, fields)
        with f:
            for row in rows(a.quick):
                w.writerow(row)
                f.flush()
        return
    if a.profile:
        if a.calib_dir:
            print("--profile writes its kernel table (and with --kineto, traces) only: no --calib-dir", file=sys.stderr)
        kineto = KinetoDir(a.kineto) if a.kineto else None
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["spec", "i", "kernel", "us"], lineterminator="\n")
            w.writeheader()
            for spec in a.profile.split(","):
                w.writerows(dict(row, spec=spec) for row in profile_rows(spec, kineto))
                f.flush()
        return
    calib = CalibDir(a.calib_dir, run_note()) if a.calib_dir else None
    kineto = KinetoDir(a.kineto) if a.kineto else None
    if a.kernels:
        if kineto:
            print("--kineto: no traces for --kernels rows", file=sys.stderr)
        run_kernels(a, calib)
    else:
        run_models(a, calib, kineto)
    if calib:
        calib.close()
    if on_gpu():
        print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(),
              torch.cuda.get_device_name(), file=sys.stderr)
    else:
        print(torch.__version__, "cpu dry run", file=sys.stderr)


if __name__ == "__main__":
    main()
