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
momentum, or Adam, under torch.autocast with fp32 master weights.

dtype fp32 disables TF32 everywhere (cuDNN and cuBLAS), tf32 enables it, fp16 runs
the model in half precision. Layout is channels_last for fp16/tf32 (the layout
cuDNN's tensor-core kernels want) and NCHW for fp32. cudnn.benchmark is on.

--kernels writes single-kernel rows instead (op, dtype, shape, ms): torch.matmul at square
and LLM-shaped sizes, and an elementwise add, each timed with CUDA events over back-to-back
calls of one CUDA graph holding 20 of them (so launch cost is amortised away).

--profile MODEL:DTYPE:BATCH writes every kernel of one eager call (name, µs) instead: how the
whole-model rows were explained (which kernels PyTorch runs that the ONNX export does not hold).
--models, --dtypes, --batches pick a subset; bert_base and bert_large are
scripts/export_fixtures.py's BertModel (testdata/models/bert_*.onnx) at sequence 128, run in
fp16 under autocast (dtype fp16-amp: the model adds an fp32 mask, as HF BERT does).

Committed results: testdata/measured/. Nothing here is fitted to: the rows are a held-out check of the cost model.
"""
import argparse
import csv
import statistics
import sys
import time

import torch
import torchvision


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
    import gc
    gc.collect()
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
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
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


def mean_power(fn, seconds=2.0):
    if not hasattr(torch.cuda, "power_draw"):
        return ""
    samples = []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        for _ in range(5):
            fn()
        samples.append(torch.cuda.power_draw() / 1e3)
    torch.cuda.synchronize()
    return "%.0f" % statistics.mean(samples[len(samples) // 4:])


def bert(layers, d, heads, ff):
    """The BERT of testdata/models/bert_*.onnx (scripts/export_fixtures.py), at sequence 128."""
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from export_fixtures import BertModel
    return BertModel(d, heads, layers, ff).eval()


BERTS = {"bert_base": (12, 768, 12, 3072), "bert_large": (24, 1024, 16, 4096)}


def infer_row(name, dt, batch, iters):
    set_dtype(dt)
    base = fresh_baseline()
    if name in BERTS:
        m = bert(*BERTS[name]).cuda()
        ids = torch.randint(0, 30522, (batch, 128), device="cuda")
        args = (ids, torch.zeros_like(ids), torch.ones_like(ids))
        if dt == "fp16":
            # The model adds an fp32 mask (as HF BERT does), so .half() fails; fp16 BERT
            # runs under autocast, as it is served: GEMMs in fp16, softmax/LayerNorm in fp32.
            inner, dt = m, "fp16-amp"

            def m(*a):
                with torch.autocast("cuda", dtype=torch.float16):
                    return inner(*a)
    else:
        m = build(name).cuda()
        x = torch.randn(batch, 3, 224, 224, device="cuda")
        if dt == "fp16":
            m = m.half()
            x = x.half()
        if dt in ("fp16", "tf32"):
            m = m.to(memory_format=torch.channels_last)
            x = x.to(memory_format=torch.channels_last)
        args = (x,)
    with torch.inference_mode():
        for _ in range(10):
            m(*args)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        eager = median_ms(lambda: m(*args), iters)
        peak = (torch.cuda.max_memory_allocated() - base) / 2**20
        kms, nk = kernel_stats(lambda: m(*args))
        g = capture(lambda: m(*args))
        for _ in range(4):
            g.replay()
        graph = median_ms(g.replay, iters)
        power = mean_power(g.replay)
    del g, m, args
    torch.cuda.empty_cache()
    return dict(model=name, mode="infer", dtype=dt, batch=batch, eager_ms="%.3f" % eager,
                graph_ms="%.3f" % graph, kernel_ms="%.3f" % kms, kernels="%.0f" % nk,
                peak_mib="%.0f" % peak, power_w=power)


def train_row(name, optim, batch, iters):
    set_dtype("fp16")
    base = fresh_baseline()
    m = getattr(torchvision.models, name)(weights=None).cuda().train()
    m = m.to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    opt = (torch.optim.Adam(m.parameters(), lr=1e-4) if optim == "adam"
           else torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9))
    scaler = torch.amp.GradScaler("cuda")
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = lossf(m(x), y)
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
    del m, x, opt
    torch.cuda.empty_cache()
    return dict(model=name, mode="train-" + optim, dtype="fp16-amp", batch=batch,
                eager_ms="%.3f" % eager, graph_ms="", kernel_ms="%.3f" % kms,
                kernels="%.0f" % nk, peak_mib="%.0f" % peak, power_w="")


def graph_ms(fn, reps=20, iters=10):
    """Per-call GPU time of fn: 20 calls captured in one CUDA graph, replayed."""
    g = capture(fn, reps)
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / reps)
    return statistics.median(ts)


def kernel_rows():
    tdt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    shapes = [(n, n, n) for n in (512, 1024, 2048, 4096, 8192)]
    shapes += [(m, 4096, 4096) for m in (1, 16, 128, 2048)]   # tokens x hidden x hidden
    shapes += [(2048, 11008, 4096), (2048, 4096, 11008)]      # LLaMA-7B MLP up / down
    for dt in ("fp16", "bf16", "tf32", "fp32"):
        set_dtype(dt)
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda", dtype=tdt[dt])
            b = torch.randn(k, n, device="cuda", dtype=tdt[dt])
            c = torch.empty(m, n, device="cuda", dtype=tdt[dt])
            ms = graph_ms(lambda: torch.matmul(a, b, out=c))
            yield dict(op="MatMul", dtype=dt, shape="%dx%dx%d" % (m, n, k), ms="%.5f" % ms)
    for dt in ("fp16", "fp32"):
        for lg in (16, 20, 24, 27):
            x = torch.randn(2**lg, device="cuda", dtype=tdt[dt])
            y = torch.randn(2**lg, device="cuda", dtype=tdt[dt])
            z = torch.empty_like(x)
            ms = graph_ms(lambda: torch.add(x, y, out=z))
            yield dict(op="Add", dtype=dt, shape="%d" % 2**lg, ms="%.5f" % ms)


def profile_rows(spec):
    """One call of MODEL:DTYPE:BATCH under the profiler: every kernel, in order, with its time."""
    name, dt, batch = spec.split(":")
    set_dtype(dt)
    if name == "llama7b-decode":
        call = llama_decode_step(int(batch))
    else:
        m = build(name).cuda()
        x = torch.randn(int(batch), 3, 224, 224, device="cuda")
        if dt == "fp16":
            m, x = m.half(), x.half()
        if dt in ("fp16", "tf32"):
            m = m.to(memory_format=torch.channels_last)
            x = x.to(memory_format=torch.channels_last)

        def call():
            return m(x)
    from torch.profiler import ProfilerActivity, profile
    with torch.inference_mode():
        for _ in range(10):
            call()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
    for i, e in enumerate(k for k in prof.events() if k.device_type == torch.autograd.DeviceType.CUDA):
        yield dict(i=i, kernel=e.name[:160], us="%.2f" % e.time_range.elapsed_us())


def llama_decode_step(b, past=1024):
    """One decode step of a LLaMA-2 7B-shaped decoder in fp16 (random weights), written as the
    zoo's llama-7b graph is (onnxcost zoo llama-7b --param decode=1 --param past=1024): RMSNorm as
    pow/mean/rsqrt, rotary with rotate_half, the KV cache grown by concatenation, attention as two
    matmuls and a softmax, SwiGLU, the LM head over 32000 tokens. Returns the step function."""
    d, heads, layers, ff, vocab = 4096, 32, 32, 11008, 32000
    hd = d // heads
    dev, dt = "cuda", torch.float16
    F = torch.nn.functional

    def w(*shape):
        return torch.randn(*shape, device=dev, dtype=dt) * 0.02

    L = [dict(q=w(d, d), k=w(d, d), v=w(d, d), o=w(d, d), g=w(ff, d), u=w(ff, d), dn=w(d, ff),
              n1=torch.ones(d, device=dev, dtype=dt), n2=torch.ones(d, device=dev, dtype=dt))
         for _ in range(layers)]
    head, nf = w(vocab, d), torch.ones(d, device=dev, dtype=dt)
    x0 = torch.randn(b, 1, d, device=dev, dtype=dt)
    cache = [(torch.randn(b, heads, past, hd, device=dev, dtype=dt),
              torch.randn(b, heads, past, hd, device=dev, dtype=dt)) for _ in range(layers)]
    cos = torch.randn(1, 1, 1, hd, device=dev, dtype=dt)
    sin = torch.randn(1, 1, 1, hd, device=dev, dtype=dt)

    def rms(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g

    def rot(x):
        return torch.cat((-x[..., hd // 2:], x[..., :hd // 2]), dim=-1)

    def step():
        x = x0
        for l, (pk, pv) in zip(L, cache):
            h = rms(x, l["n1"])
            q = F.linear(h, l["q"]).view(b, 1, heads, hd).transpose(1, 2)
            k = F.linear(h, l["k"]).view(b, 1, heads, hd).transpose(1, 2)
            v = F.linear(h, l["v"]).view(b, 1, heads, hd).transpose(1, 2)
            q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
            k, v = torch.cat((pk, k), dim=2), torch.cat((pv, v), dim=2)
            p = torch.softmax(q @ k.transpose(-1, -2) / hd ** 0.5, dim=-1)
            a = (p @ v).transpose(1, 2).reshape(b, 1, d)
            x = x + F.linear(a, l["o"])
            h = rms(x, l["n2"])
            x = x + F.linear(F.silu(F.linear(h, l["g"])) * F.linear(h, l["u"]), l["dn"])
        return F.linear(rms(x, nf), head)

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
            power = mean_power(g.replay)
        del g, step
        torch.cuda.empty_cache()
        yield dict(model="llama7b-decode-past%d" % past, mode="infer", dtype="fp16", batch=b,
                   eager_ms="%.3f" % eager, graph_ms="%.3f" % graph, kernel_ms="%.3f" % kms,
                   kernels="%.0f" % nk, peak_mib="", power_w=power)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="one model, two points")
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--kernels", action="store_true", help="single-kernel rows instead")
    ap.add_argument("--models", help="comma-separated subset, e.g. bert_base,bert_large")
    ap.add_argument("--batches", help="comma-separated batches (default 1,32,128)")
    ap.add_argument("--dtypes", help="comma-separated subset of fp32,tf32,fp16")
    ap.add_argument("--profile", help="MODEL:DTYPE:BATCH (MODEL a torchvision name or llama7b-decode): "
                    "every kernel of one call instead")
    ap.add_argument("--llama-decode", action="store_true",
                    help="LLaMA-7B-shaped decode steps (past 1024) at --batches (default 1,8,32) instead")
    a = ap.parse_args()
    if a.llama_decode:
        fields = ["model", "mode", "dtype", "batch", "eager_ms", "graph_ms", "kernel_ms",
                  "kernels", "peak_mib", "power_w"]
        bs = [int(x) for x in (a.batches or "1,8,32").split(",")]
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            for row in llama_decode_rows(bs):
                w.writerow(row)
                f.flush()
        return
    if a.profile:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["i", "kernel", "us"], lineterminator="\n")
            w.writeheader()
            w.writerows(profile_rows(a.profile))
        return
    if a.kernels:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["op", "dtype", "shape", "ms"], lineterminator="\n")
            w.writeheader()
            for row in kernel_rows():
                w.writerow(row)
                f.flush()
        return
    torch.backends.cudnn.benchmark = True
    models = ["resnet50", "densenet121", "vgg16", "mobilenet_v2"]
    dtypes = ["fp32", "tf32", "fp16"]
    batches = [1, 32, 128]
    if a.models:
        models = a.models.split(",")
    if a.dtypes:
        dtypes = a.dtypes.split(",")
    if a.batches:
        batches = [int(b) for b in a.batches.split(",")]
    if a.quick:
        models, dtypes, batches = ["resnet50"], ["fp16"], [1, 32]
    fields = ["model", "mode", "dtype", "batch", "eager_ms", "graph_ms", "kernel_ms",
              "kernels", "peak_mib", "power_w"]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for name in models:
            for dt in dtypes:
                for b in batches:
                    t0 = time.time()
                    try:
                        w.writerow(infer_row(name, dt, b, a.iters))
                    except Exception as e:  # one failed point must not lose the rest
                        print("skip %s %s %d: %s" % (name, dt, b, e), file=sys.stderr)
                    f.flush()
                    print("%s %s b%d %.1fs" % (name, dt, b, time.time() - t0), file=sys.stderr)
        if not a.quick and not a.models:
            for name, optim, b in [("resnet50", "sgd", 64), ("resnet50", "adam", 64),
                                   ("vgg16", "sgd", 32), ("densenet121", "adam", 32)]:
                try:
                    w.writerow(train_row(name, optim, b, 20))
                except Exception as e:
                    print("skip train %s: %s" % (name, e), file=sys.stderr)
                f.flush()
    print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(),
          torch.cuda.get_device_name(), file=sys.stderr)


if __name__ == "__main__":
    main()
