#!/usr/bin/env python3
"""Where does a figure fall as the batch grows, or a power rise over its cap?

Sweeps every model given (default: the fixtures) at batch 1..256 under
each runtime and dtype, with and without --train, on a set of GPUs, and
lists each doubling of the batch at which the time, the throughput or the
peak memory falls. With --caps it instead prices the same cases at batch
16 on every GPU of the database at its minimum power limit and lists each
report whose average power is above the cap (the limiter holds the run's
average; a dense kernel may draw more within it) or any kernel above TDP. With --decode it
sweeps the zoo's decoders in decode (one token over a KV cache) on every
GPU at five dtypes and lists each doubling that loses tokens/s, saying
whether the larger batch fits. A summary ends the output. docs/accuracy.md ("Physical invariants") says which findings the
model means and why; internal/physics holds the ones physics forbids.

    go build -o /tmp/onnxcost ./cmd/onnxcost
    python3 scripts/batch_scan.py --onnxcost /tmp/onnxcost > scan.txt
    python3 scripts/batch_scan.py --onnxcost /tmp/onnxcost --caps > caps.txt
    python3 scripts/batch_scan.py --onnxcost /tmp/onnxcost --decode > decode.txt

Needs only python3 and an onnxcost binary (a few minutes each on 2 cores).
"""
import argparse
import collections
import glob
import itertools
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

GPUS = ("T4,A100-SXM4-40GB,H100-SXM5-80GB,L4,L40S,V100-SXM2-16GB,MI300X,A10,"
        "P100-PCIe-16GB,RTX-4090,H200-SXM-141GB,B200,M40")
RUNTIMES = ["", "pytorch", "graph", "onnxruntime", "pytorch-compile", "tensorrt"]
DTYPES = ["fp32", "fp16", "tf32", "fp16-amp", "int8"]


def sweeps(models, gpus, onnxcost):
    for m, rt, dt, train in itertools.product(models, RUNTIMES, DTYPES, (False, True)):
        if train and dt == "int8":
            continue
        args = [onnxcost, "sweep", m, "--gpu", gpus, "--batch", "1..256",
                "--dtype", dt, "--format", "json"]
        if rt:
            args += ["--runtime", rt]
        if train:
            args.append("--train")
        yield args


def run(args):
    return args, subprocess.run(args, capture_output=True, text=True)


def doublings(sweep_json):
    """Each GPU's consecutive rows of a sweep's JSON: (gpu, smaller, larger)."""
    rows = collections.defaultdict(list)
    for r in json.loads(sweep_json)["rows"]:
        rows[r["gpu"]].append(r)
    for gpu, rs in rows.items():
        rs.sort(key=lambda r: r["batch"])
        for lo, hi in zip(rs, rs[1:]):
            yield gpu, lo, hi


def cases(models, onnxcost, gpus):
    """Reports at each GPU's minimum power limit: (args, cap)."""
    for m, rt, dt, train in itertools.product(models, RUNTIMES, DTYPES, (False, True)):
        if train and dt == "int8":
            continue
        for g in gpus:
            if not g.get("min_power_w"):
                continue
            args = [onnxcost, "report", m, "--gpu", g["name"], "--batch", "16", "--dtype", dt,
                    "--power-cap", str(g["min_power_w"]), "--format", "json"]
            if rt:
                args += ["--runtime", rt]
            if train:
                args.append("--train")
            yield args


def caps(models, onnxcost):
    gpus = json.loads(subprocess.run([onnxcost, "gpus", "--format", "json"], capture_output=True,
                                     text=True, check=True).stdout)
    tdp = {g["name"]: g.get("tdp_w") or float("inf") for g in gpus}
    over = collections.Counter()
    n = 0
    with ThreadPoolExecutor(8) as ex:
        for args, p in ex.map(run, cases(models, onnxcost, gpus)):
            if p.returncode != 0:
                continue
            n += 1
            r = json.loads(p.stdout)
            cap = float(args[args.index("--power-cap") + 1])
            gpu = args[args.index("--gpu") + 1]
            what = " ".join(x for x in args[2:] if x not in ("--format", "json"))
            avg = r["totals"].get("avg_power_w", 0)
            node = max([nd.get("avg_power_w", 0) for nd in r["nodes"]] + [0])
            if avg > cap * 1.001 or node > tdp[gpu] * 1.001:
                over[gpu] += 1
                print(f"over the cap: {what}: {avg:.1f} W on average, {node:.1f} W in its hungriest kernel")
    print(f"\n{n} reports at the minimum power limit; over the cap: {sum(over.values())}", dict(over.most_common()))
    return 0


DECODERS = ["zoo:llama-7b?decode=1&past=1024", "zoo:llama-13b?decode=1&past=512",
            "zoo:llama-70b?decode=1&past=512", "zoo:gpt2-small?decode=1&past=1000",
            "zoo:gpt2-medium?decode=1&past=512", "zoo:llama-tiny?decode=1&past=256"]


def decode(onnxcost):
    gpus = ",".join(g["name"] for g in json.loads(subprocess.run(
        [onnxcost, "gpus", "--format", "json"], capture_output=True, text=True, check=True).stdout))
    jobs = [[onnxcost, "sweep", m, "--gpu", gpus, "--batch", "1..256", "--dtype", dt, "--format", "json"]
            for m, dt in itertools.product(DECODERS, ("fp32", "tf32", "fp16", "bf16", "int8"))]
    falls = collections.Counter()
    steps = 0
    with ThreadPoolExecutor(4) as ex:
        for args, p in ex.map(run, jobs):
            if p.returncode != 0:
                continue
            for gpu, lo, hi in doublings(p.stdout):
                steps += 1
                if hi["throughput_per_s"] < lo["throughput_per_s"] * (1 - 1e-3):
                    fit = "fits" if hi["fits"] else "does not fit"
                    falls[fit] += 1
                    print(f"tokens/s falls {1 - hi['throughput_per_s'] / lo['throughput_per_s']:.2%}: "
                          f"{args[2]} --dtype {args[args.index('--dtype') + 1]} on {gpu}, batch "
                          f"{lo['batch']} -> {hi['batch']} ({fit})")
    print(f"\n{steps} decode batch doublings checked; tokens/s falls:", dict(falls))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--onnxcost", default="onnxcost")
    ap.add_argument("--gpus", default=GPUS)
    ap.add_argument("--caps", action="store_true", help="check power at each GPU's minimum power limit")
    ap.add_argument("--decode", action="store_true", help="check the zoo decoders' tokens/s against batch")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    models = a.models or sorted(glob.glob("testdata/models/*.onnx"))
    if a.caps:
        return caps(models, a.onnxcost)
    if a.decode:
        return decode(a.onnxcost)
    kinds = collections.Counter()
    by_gpu = collections.defaultdict(collections.Counter)
    steps = skipped = 0
    with ThreadPoolExecutor(8) as ex:
        for args, p in ex.map(run, sweeps(models, a.gpus, a.onnxcost)):
            what = " ".join(x for x in args[2:] if x not in (a.gpus, "--gpu", "--format", "json"))
            if p.returncode != 0:
                skipped += 1  # no batch to sweep, a dtype the model cannot take
                continue
            for gpu, lo, hi in doublings(p.stdout):
                steps += 1
                for kind, key in (("time", "time_s"), ("throughput", "throughput_per_s"),
                                  ("peak memory", "peak_memory_bytes")):
                    if hi[key] < lo[key]:
                        kinds[kind] += 1
                        by_gpu[kind][gpu] += 1
                        print(f"{kind} falls {1 - hi[key] / lo[key]:.4%}: {what} on {gpu}, "
                              f"batch {lo['batch']} -> {hi['batch']}: {lo[key]:.6g} -> {hi[key]:.6g}")
    print(f"\n{steps} batch doublings checked ({skipped} sweeps skipped: no batch to sweep or dtype refused)")
    for kind in ("time", "throughput", "peak memory"):
        print(f"{kind} falls: {kinds[kind]}", dict(by_gpu[kind].most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
