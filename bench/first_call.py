#!/usr/bin/env python3
"""Load time and first-call latency of cgc packages against their steady
state (issue 21: the first inference should run at steady-state speed).

    first_call.py PKG... [--calls 200] [--inputs numpy|torch] [--out F.json]

Each package is measured in a fresh process, so that the process's own
one-time costs (CUDA context, imports) land in the load, as they would for
an application: the child times cgc.load(PKG), then `--calls` synchronous
calls model(x) with the same inputs (perf_counter around each: a call
returns once its outputs are complete). Printed per package: load ms, the
first three calls and the median of the rest in µs, first / median.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
pkg, calls, kind, prewarm, warmups, pause = (
    sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]),
    int(sys.argv[5]), float(sys.argv[6]))
if prewarm:
    # Diagnosis: keep the GPU busy first, so its clocks are up at the load.
    import torch
    a = torch.randn(4096, 4096, device="cuda")
    end = time.perf_counter() + prewarm
    while time.perf_counter() < end:
        a @ a
    torch.cuda.synchronize()
t0 = time.perf_counter()
import cgc
t1 = time.perf_counter()
model = cgc.load(pkg, warm_up=0)  # the untimed calls are --warmup-calls
t2 = time.perf_counter()
rng = np.random.default_rng(0)
xs = []
for info in model.inputs:
    shape = [d if d is not None else 1 for d in info.shape]
    dt = np.dtype(info.numpy_dtype)
    x = (rng.standard_normal(shape).astype(dt) if dt.kind == "f"
         else np.zeros(shape, dt))
    if kind == "torch":
        import torch
        x = torch.from_numpy(x).cuda()
        torch.cuda.synchronize()
    xs.append(x)
if kind == "raw":
    # cgrt_model_run through ctypes with its arguments built once: the
    # runtime's host path without the Python wrapper's per-call work.
    from cgc import _runtime as rt
    keep, bufs = [], []
    ins = (rt._Tensor * max(1, len(xs)))()
    for i, x in enumerate(xs):
        ins[i], _ = model._input_tensor(i, x, keep, False)
    outs = (rt._Tensor * max(1, len(model.outputs)))()
    for i, info in enumerate(model.outputs):
        buf = np.empty(max(1, info.bytes), np.uint8)
        o = outs[i]
        o.data, o.memory, o.bytes = buf.ctypes.data, rt.MEMORY_HOST, info.bytes
        o.dtype, o.rank = rt._CODES[info.dtype], len(info.shape)
        for k, d in enumerate(info.shape):
            o.dims[k] = -1 if d is None else d
        bufs.append(buf)
    run, handle = model._lib.cgrt_model_run, model._handle
def call():
    if kind == "raw":
        rt._check(model._lib, run(handle, ins, len(xs), outs,
                                  len(model.outputs)))
    elif kind != "graph":
        model(*xs)
for _ in range(warmups):
    call()
times = []
for _ in range(calls):
    if pause:
        time.sleep(pause)
    if kind == "raw":
        s = time.perf_counter()
        rt._check(model._lib, run(handle, ins, len(xs), outs,
                                  len(model.outputs)))
        times.append((time.perf_counter() - s) * 1e6)
        continue
    if kind == "graph":
        # One run timed by the runtime's CUDA events: the device side alone.
        times.append(model.benchmark(0, 1).median_us)
        continue
    s = time.perf_counter()
    model(*xs)
    times.append((time.perf_counter() - s) * 1e6)
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "load_ms": (t2 - t1) * 1e3,
                  "calls_us": times}))
"""


def measure(pkg, calls, kind, env, prewarm=0.0, warmups=0, pause=0.0):
    proc = subprocess.run([sys.executable, "-c", CHILD, str(pkg), str(calls),
                           kind, str(prewarm), str(warmups), str(pause)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"package": str(pkg), "error": proc.stderr[-2000:]}
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    rest = sorted(r["calls_us"][3:])
    median = rest[len(rest) // 2] if rest else float("nan")
    return {"package": Path(pkg).name, "load_ms": r["load_ms"],
            "first_us": r["calls_us"][0], "second_us": r["calls_us"][1],
            "third_us": r["calls_us"][2], "median_us": median,
            "first_over_median": r["calls_us"][0] / median}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="+")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--inputs", choices=("numpy", "torch", "raw", "graph"),
                        default="numpy",
                        help="numpy or torch CUDA inputs to model(x); raw: "
                             "cgrt_model_run with numpy inputs and arguments "
                             "built once; graph: model.benchmark(0, 1), one "
                             "run timed on the device by the runtime")
    parser.add_argument("--prewarm", type=float, default=0.0,
                        help="seconds of torch matmuls before the load "
                             "(diagnosis: GPU clocks)")
    parser.add_argument("--warmup-calls", type=int, default=0,
                        help="untimed calls right after the load (what a "
                             "warm-up at load would do)")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds of sleep before each timed call (a "
                             "call after idle time)")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE for the children (repeatable)")
    parser.add_argument("--out")
    args = parser.parse_args()
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in args.env)
    results = []
    print("%-28s %9s %9s %9s %9s %9s %7s" % ("package", "load ms", "1st us",
                                             "2nd us", "3rd us", "median",
                                             "1st/med"))
    for pkg in args.packages:
        r = measure(pkg, max(args.calls, 4), args.inputs, env, args.prewarm,
                    args.warmup_calls, args.pause)
        results.append(r)
        if "error" in r:
            print("%-28s error: %s" % (Path(pkg).name, r["error"]))
            continue
        print("%-28s %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f" % (
            r["package"], r["load_ms"], r["first_us"], r["second_us"],
            r["third_us"], r["median_us"], r["first_over_median"]))
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"date": time.strftime("%Y-%m-%d"), "inputs": args.inputs,
             "env": args.env, "results": results}, indent=1))


if __name__ == "__main__":
    main()
