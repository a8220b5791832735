#!/usr/bin/env python3
"""The benchmark, on the GPU machine, in one process: every model through
cgc (the Python package over libcgrt) and its PyTorch peers on the same
inputs and weights, checked against PyTorch eager, timed with CUDA events.

    python3 bench/run.py --carry '.carry/bench/carry/pkgs.tar.xz.*' --out DIR

Peers (fp32; TF32 off for matmul and cuDNN):
  cgc          Model.benchmark: CUDA events around the copy of the
               device-resident input into its static slot + the graph
               launch(es), in libcgrt's loop
  eager        model(x)
  cuda graph   a hand-captured torch.cuda.CUDAGraph: static_x.copy_(x);
               g.replay()
  compile      torch.compile(model, dynamic=False) (mode "default")
  compile RO   torch.compile(model, mode="reduce-overhead", dynamic=False)
Every peer is timed the same way: after warm-up, per iteration a start
event, the call, an end event and a wait for it (latency of one inference
issued to an idle GPU); median and p99 over the iterations of a round
(about --round-seconds, between --min-iters and --iters iterations). Of
--rounds rounds the one with the lowest median is reported and the spread
between the rounds' medians kept. --profile N adds kernel counts and
kernel time per inference (torch.profiler/CUPTI) for cgc and eager.

cgc's outputs (fixed inputs and a fresh draw) must match eager's to a
relative L2 error of 1e-4, or cgc is reported FAILED whatever its time.
Writes DIR/results.json (after every step, so a run cut short keeps what
it did), DIR/benchmarks.md and DIR/benchmarks.png.
"""

import argparse
import glob
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import numpy as np  # noqa: E402

import models  # noqa: E402
import report  # noqa: E402

TOLERANCE = 1e-4
PEERS = ["cgc", "eager", "cuda_graph", "compile", "compile_ro"]


def stats(samples):
    """Median, p99 (the same definition as libcgrt's) and mean, in us."""
    s = np.sort(np.asarray(samples, np.float64))
    n = len(s)
    p99 = s[min(n, max(int(math.ceil(0.99 * n)), 1)) - 1]
    return {"median_us": float(np.median(s)), "p99_us": float(p99),
            "mean_us": float(s.mean()), "iterations": n}


def iterations_for(estimate_us, args):
    """Iterations of one round: about --round-seconds of work, between
    --min-iters and --iters."""
    n = int(args.round_seconds * 1e6 / max(estimate_us, 1.0))
    return max(args.min_iters, min(args.iters, n))


def best_round(rounds):
    """The round with the lowest median, with every round's median and the
    spread between them (max/min - 1) kept."""
    best = dict(min(rounds, key=lambda r: r["median_us"]))
    medians = [r["median_us"] for r in rounds]
    best["round_medians_us"] = medians
    best["spread"] = max(medians) / min(medians) - 1
    return best


def time_events(torch, fn, args):
    """Warm-up, then --rounds rounds of per-call CUDA-event timing."""
    for _ in range(args.warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    def one():
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3
    estimate = float(np.median([one() for _ in range(5)]))
    iters = iterations_for(estimate, args)
    return best_round([stats([one() for _ in range(iters)])
                       for _ in range(args.rounds)])


def warm_gpu(torch, seconds=2.0):
    """Busy work so the clocks are up before the first timing."""
    a = torch.randn(4096, 4096, device="cuda")
    t = time.monotonic()
    while time.monotonic() - t < seconds:
        for _ in range(10):
            a = torch.tanh(a @ a * 1e-3)
        torch.cuda.synchronize()


def measure_ceilings(torch):
    """The card's measured ceilings in this run: device copy bandwidth (a
    1 GiB tensor copied, bytes read + written per second) and fp32 matmul
    rate (8192^3 torch.mm with TF32 off); best of 10 each."""
    def best(fn, reps=10):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        fn()
        times = []
        for _ in range(reps):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        return min(times)
    n = 1 << 28
    x = torch.empty(n, device="cuda")
    y = torch.empty_like(x)
    copy_s = best(lambda: y.copy_(x))
    del x, y
    m = 8192
    a = torch.randn(m, m, device="cuda")
    b = torch.randn(m, m, device="cuda")
    mm_s = best(lambda: torch.mm(a, b))
    del a, b
    torch.cuda.empty_cache()
    return {"copy_bytes_per_s": 2 * 4 * n / copy_s,
            "fp32_flops_per_s": 2 * m ** 3 / mm_s,
            "method": "copy of a 1 GiB fp32 tensor (read + write), "
                      "torch.mm 8192x8192 fp32 TF32 off; best of 10"}


def kernel_profile(torch, fn, n):
    """GPU activity of n calls of fn from torch.profiler (CUPTI sees every
    kernel of the process, CUDA graph nodes of libcgrt included): per call,
    kernel count, kernel time, memcpy/memset time, and the top kernels."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    kernels, copies, count = {}, 0.0, 0
    for e in prof.events():
        if e.device_type != DeviceType.CUDA:
            continue
        us = e.time_range.elapsed_us()
        if e.name.startswith(("Memcpy", "Memset")):
            copies += us
            continue
        count += 1
        kernels[e.name] = kernels.get(e.name, 0.0) + us
    total = sum(kernels.values())
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:5]
    return {"kernels_per_call": count / n, "kernel_us_per_call": total / n,
            "copy_us_per_call": copies / n,
            "top": [[name[:80], us / n, us / total if total else 0]
                    for name, us in top]}


def compare(got, ref):
    """Relative L2 error and max abs error of one output against eager."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return {"ok": False, "why": "shape %s, expected %s" % (
            list(got.shape), list(ref.shape))}
    if not np.all(np.isfinite(got) == np.isfinite(ref)):
        return {"ok": False, "why": "non-finite values differ",
                "rel_l2": float("nan")}
    fin = np.isfinite(ref)
    diff = got[fin] - ref[fin]
    rel = float(np.linalg.norm(diff) / max(np.linalg.norm(ref[fin]), 1e-30))
    return {"ok": rel <= TOLERANCE, "rel_l2": rel,
            "max_abs": float(np.abs(diff).max()) if diff.size else 0.0}


def compare_all(outs, refs):
    """The worst comparison over a model's outputs."""
    checks = [compare(got, ref) for got, ref in zip(outs, refs)]
    if len(outs) != len(refs):
        return {"ok": False, "why": "%d outputs, expected %d" % (
            len(outs), len(refs))}
    rels = [c.get("rel_l2", float("nan")) for c in checks]
    bad = [c for c in checks if not c["ok"]]
    return {"ok": not bad, "rel_l2": float(max(rels)) if rels else 0.0,
            "max_abs": float(max(c.get("max_abs", float("nan"))
                                 for c in checks)) if checks else 0.0,
            "why": bad[0].get("why") if bad else None}


def as_list(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def to_numpy(ys):
    return [y.detach().float().cpu().numpy() for y in ys]


def env_info(torch):
    info = {"date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "python": platform.python_version(),
            "gpu": torch.cuda.get_device_name(0)}
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version",
             "--format=csv,noheader"], capture_output=True, text=True,
            timeout=30).stdout.strip().splitlines()
        if out:
            info["gpu"], info["driver"] = [s.strip() for s in out[0].split(",")]
    except (OSError, subprocess.SubprocessError):
        pass
    return info


class Bench:
    def __init__(self, args):
        import torch
        self.torch = torch
        self.args = args
        self.t0 = time.monotonic()
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        self.results = {"env": env_info(torch), "models": {},
                        "settings": {"warmup": args.warmup,
                                     "iters": args.iters,
                                     "min_iters": args.min_iters,
                                     "round_seconds": args.round_seconds,
                                     "rounds": args.rounds,
                                     "tolerance_rel_l2": TOLERANCE},
                        "command": args.command}
        self.packages = args.packages
        self.status = {}
        self.manifest = {}
        if self.packages:
            for name, target in (("status.json", "status"),
                                 ("manifest.json", "manifest")):
                path = os.path.join(self.packages, name)
                if os.path.exists(path):
                    with open(path) as f:
                        setattr(self, target, json.load(f))
            self.results["cgc_build"] = self.status.get("_build", {})
        self.results["export"] = {k: self.manifest.get(k) for k in
                                  ("torch", "onnx", "date")}

    def left(self):
        return self.args.deadline - (time.monotonic() - self.t0)

    def save(self):
        os.makedirs(self.args.out, exist_ok=True)
        with open(os.path.join(self.args.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1, sort_keys=True)

    def log(self, *a):
        print("[%6.1fs]" % (time.monotonic() - self.t0), *a, flush=True)

    # -- phase 1: cgc, eager, CUDA graph ---------------------------------
    def run_family(self, family, names):
        torch = self.torch
        model = models.build_family(family)
        digest = models.state_digest(model)
        expected = self.manifest.get("families", {}).get(family, {}).get(
            "state_digest")
        model = model.cuda()
        for name in names:
            r = self.results["models"].setdefault(name, {})
            r.update(family=family, batch=models.SPECS[name][1],
                     description=models.DESCRIPTIONS[family],
                     weights_match_export=(expected == digest
                                           if expected else None),
                     floor=self.status.get(name, {}).get("floor"))
            try:
                self.run_phase1(model, name, r)
            except Exception as e:
                r["error"] = "%s: %s" % (type(e).__name__, e)
                traceback.print_exc()
            self.save()
        return model

    def inputs(self, name, seed):
        feeds = models.make_inputs(name, seed)
        return [self.torch.from_numpy(v).cuda() for v in feeds.values()]

    def run_phase1(self, model, name, r):
        torch = self.torch
        args = self.args
        xs = self.inputs(name, 0)
        xs_fresh = self.inputs(name, 1)
        with torch.inference_mode():
            ref = to_numpy(as_list(model(*xs)))
            ref_fresh = to_numpy(as_list(model(*xs_fresh)))
        r["outputs"] = [list(o.shape) for o in ref]
        # cgc
        r["cgc"] = self.run_cgc(name, xs, xs_fresh, ref, ref_fresh)
        self.log(name, "cgc:", {k: v for k, v in r["cgc"].items()
                               if k in ("status", "median_us", "rel_l2",
                                        "error")})
        # eager
        with torch.inference_mode():
            r["eager"] = time_events(torch, lambda: model(*xs), args)
        r["eager"]["status"] = "ok"
        if args.profile:
            try:
                with torch.inference_mode():
                    r["eager"]["profile"] = kernel_profile(
                        torch, lambda: model(*xs), args.profile)
            except Exception as e:
                r["eager"]["profile_error"] = "%s: %s" % (type(e).__name__, e)
        self.log(name, "eager: %.1f us" % r["eager"]["median_us"])
        # hand-captured CUDA graph
        try:
            r["cuda_graph"] = self.run_cuda_graph(model, xs, ref)
            self.log(name, "cuda graph: %.1f us" % r["cuda_graph"]["median_us"])
        except Exception as e:
            r["cuda_graph"] = {"status": "error",
                               "error": "%s: %s" % (type(e).__name__, e)}

    def run_cgc(self, name, xs, xs_fresh, ref, ref_fresh):
        import cgc
        st = self.status.get(name)
        if not self.packages:
            return {"status": "not run", "error": "no packages given"}
        if st is None:
            return {"status": "not compiled",
                    "error": "no package was compiled for this model"}
        if not st.get("ok"):
            return {"status": "not compiled", "error": st.get("error", "")}
        out = {"status": "ok", "kernels": st.get("kernels"),
               "graph_nodes": st.get("graph_nodes"),
               "compile_s": st.get("seconds")}
        try:
            model = cgc.load(os.path.join(self.packages, name))
        except cgc.RuntimeError as e:
            return dict(out, status="load failed", error=str(e))
        try:
            checks = []
            for x, want in ((xs, ref), (xs_fresh, ref_fresh)):
                got = as_list(model(*x))
                checks.append(compare_all(to_numpy(got), want))
            worst = max(checks, key=lambda c: (not c["ok"],
                                               c.get("rel_l2", 0)))
            out.update(check_ok=all(c["ok"] for c in checks),
                       rel_l2=worst.get("rel_l2"),
                       max_abs=worst.get("max_abs"), why=worst.get("why"))
            # timing on the fixed inputs (run() leaves them in the slots)
            estimate = model.benchmark(5, 10, inputs=list(xs)).median_us
            iters = iterations_for(estimate, self.args)
            rounds = []
            for k in range(self.args.rounds):
                b = model.benchmark(self.args.warmup if k == 0 else 0, iters)
                rounds.append({"median_us": b.median_us, "p99_us": b.p99_us,
                               "mean_us": b.mean_us,
                               "iterations": b.iterations})
            out.update(best_round(rounds), launches=b.launches_per_inference)
            if self.args.profile:
                try:
                    out["profile"] = kernel_profile(
                        self.torch, lambda: model(*xs), self.args.profile)
                except Exception as e:
                    out["profile_error"] = "%s: %s" % (type(e).__name__, e)
            # end to end through the Python call (host clock): stream sync,
            # output allocation, ctypes, run, D2D output copy, sync
            samples = []
            for i in range(10 + self.args.host_iters):
                t = time.perf_counter()
                model(*xs)
                if i >= 10:
                    samples.append((time.perf_counter() - t) * 1e6)
            out["python_call"] = stats(samples)
            if not out["check_ok"]:
                out["status"] = "FAILED"
        except cgc.RuntimeError as e:
            out.update(status="run failed", error=str(e))
        finally:
            model.close()
        return out

    def run_cuda_graph(self, model, xs, ref):
        torch = self.torch
        with torch.inference_mode():
            static_x = [x.clone() for x in xs]
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model(*static_x)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_y = as_list(model(*static_x))

            def step():
                for sx, x in zip(static_x, xs):
                    sx.copy_(x, non_blocking=True)
                g.replay()
            step()
            torch.cuda.synchronize()
            check = compare_all(to_numpy(static_y), ref)
            r = time_events(torch, step, self.args)
        r.update(status="ok", rel_l2=check.get("rel_l2"))
        del g
        return r

    # -- phase 2: torch.compile ------------------------------------------
    def run_compile(self, model, name, mode):
        torch = self.torch
        r = self.results["models"][name]
        key = "compile" if mode == "default" else "compile_ro"
        need = max(45.0, 1.5 * max([v.get("compile_s", 0) for m in
                                    self.results["models"].values()
                                    for k, v in m.items()
                                    if k in ("compile", "compile_ro")
                                    and isinstance(v, dict)] + [0]))
        if self.left() < need:
            r[key] = {"status": "not run",
                      "error": "time budget of the run (%.0f s left)"
                               % self.left()}
            return
        xs = self.inputs(name, 0)
        with torch.inference_mode():
            ref = to_numpy(as_list(model(*xs)))
        torch._dynamo.reset()
        try:
            compiled = torch.compile(model, mode=mode, dynamic=False)
            mark = (torch.compiler.cudagraph_mark_step_begin
                    if mode == "reduce-overhead" else (lambda: None))

            def step():
                mark()
                return compiled(*xs)
            with torch.inference_mode():
                t = time.monotonic()
                y = to_numpy(as_list(step()))
                step()
                torch.cuda.synchronize()
                compile_s = time.monotonic() - t
                check = compare_all(y, ref)
                res = time_events(torch, step, self.args)
            res.update(status="ok", compile_s=compile_s,
                       rel_l2=check.get("rel_l2"))
        except Exception as e:
            res = {"status": "error", "error": "%s: %s" % (
                type(e).__name__, str(e).splitlines()[0][:300])}
            traceback.print_exc()
        r[key] = res
        self.log(name, key, {k: res.get(k) for k in ("median_us",
                                                      "compile_s", "error")})
        torch._dynamo.reset()

    def run(self):
        names = self.args.models.split(",") if self.args.models \
            else list(models.SPECS)
        families = [f for f in models.FAMILIES
                    if any(models.SPECS[n][0] == f for n in names)]
        warm_gpu(self.torch)
        try:
            self.results["ceilings"] = measure_ceilings(self.torch)
            self.log("ceilings", self.results["ceilings"])
        except Exception as e:  # report, do not stop
            self.results["ceilings_error"] = "%s: %s" % (type(e).__name__, e)
        built = {}
        for family in families:
            members = [n for n in names if models.SPECS[n][0] == family]
            self.log("family", family, members)
            built[family] = self.run_family(family, members)
        if not self.args.no_compile:
            for mode in ("default", "reduce-overhead"):
                for name in names:
                    model = built[models.SPECS[name][0]]
                    self.run_compile(model, name, mode)
                    self.save()
        self.results["wall_s"] = time.monotonic() - self.t0
        self.save()


def unpack_carry(pattern, dest):
    import transfer
    parts = sorted(glob.glob(pattern))
    if not parts:
        sys.exit("no parts match %s" % pattern)
    transfer.unpack(dest, parts)
    return dest


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", help="folder of compiled packages "
                        "(NAME/, status.json, manifest.json, runtime/)")
    parser.add_argument("--carry", help="glob of packed parts to unpack "
                        "into /tmp/cgc-bench first (bench/compile.py's)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--iters", type=int, default=1000,
                        help="most iterations of a timing round")
    parser.add_argument("--min-iters", type=int, default=100,
                        help="fewest iterations of a timing round")
    parser.add_argument("--round-seconds", type=float, default=1.0,
                        help="a round runs about this long (between "
                        "--min-iters and --iters iterations)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="timing rounds; the one with the lowest median "
                        "is reported, the spread between them kept")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile N calls of cgc and eager with "
                        "torch.profiler (kernel counts and times)")
    parser.add_argument("--host-iters", type=int, default=200)
    parser.add_argument("--deadline", type=float, default=300,
                        help="seconds; torch.compile peers that would start "
                        "too late are reported as not run")
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    args.command = "python3 bench/run.py " + " ".join(
        shlex.quote(a) for a in sys.argv[1:])
    if args.carry:
        args.packages = unpack_carry(args.carry, "/tmp/cgc-bench")
    if args.packages:
        lib = os.path.join(args.packages, "runtime", "libcgrt.so")
        if os.path.exists(lib) and "CGC_RUNTIME_LIB" not in os.environ:
            os.environ["CGC_RUNTIME_LIB"] = lib
    bench = Bench(args)
    try:
        bench.run()
    finally:
        bench.save()
        report.write_markdown(bench.results,
                              os.path.join(args.out, "benchmarks.md"))
        try:
            report.write_plot(bench.results,
                              os.path.join(args.out, "benchmarks.png"))
        except Exception as e:  # matplotlib missing: the table still stands
            print("no plot: %s" % e)
        print(report.summary_table(bench.results))


if __name__ == "__main__":
    main()
