#!/usr/bin/env python3
"""Where does a figure fall as the batch grows?

Sweeps every model given (default: the fixtures with a symbolic batch)
at batch 1..256 under each runtime and dtype, with and without --train,
on a set of GPUs, and lists each doubling of the batch at which the time,
the throughput or the peak memory falls. A summary by kind and GPU ends
the output. docs/accuracy.md ("Physical invariants") says which falls the
model means and why; internal/physics holds the ones physics forbids.

    go build -o /tmp/onnxcost ./cmd/onnxcost
    python3 scripts/batch_scan.py --onnxcost /tmp/onnxcost > scan.txt

Needs only python3 and an onnxcost binary (about a minute on 2 cores).
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--onnxcost", default="onnxcost")
    ap.add_argument("--gpus", default=GPUS)
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    models = a.models or sorted(glob.glob("testdata/models/*.onnx"))
    kinds = collections.Counter()
    by_gpu = collections.defaultdict(collections.Counter)
    steps = skipped = 0
    with ThreadPoolExecutor(8) as ex:
        for args, p in ex.map(run, sweeps(models, a.gpus, a.onnxcost)):
            what = " ".join(x for x in args[2:] if x not in (a.gpus, "--gpu", "--format", "json"))
            if p.returncode != 0:
                skipped += 1  # no batch to sweep, a dtype the model cannot take
                continue
            rows = collections.defaultdict(list)
            for r in json.loads(p.stdout)["rows"]:
                rows[r["gpu"]].append(r)
            for gpu, rs in rows.items():
                rs.sort(key=lambda r: r["batch"])
                for lo, hi in zip(rs, rs[1:]):
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
