#!/usr/bin/env python3
"""The benchmark, on the GPU machine, in one process: every model through
cgc (the Python package over libcgrt) and its PyTorch peers on the same
inputs and weights, in each precision asked for, checked against an fp32
reference, timed with CUDA events.

    python3 bench/run.py --carry '.carry/bench/carry/pkgs.tar.xz.*' --out DIR \
        [--precisions fp32,tf32,bf16] [--families f,g] [--peers ...]

Precisions (--precisions; cgc's package for model NAME in precision P is
NAME.P, made by bench/compile.py --precisions):
  fp32   TF32 off (torch.backends.cuda.matmul.allow_tf32 and
         torch.backends.cudnn.allow_tf32 False, float32 matmul precision
         "highest"); cgc compiled without --precision
  tf32   the fp32 model and inputs with TF32 on: allow_tf32 True for
         matmul and cuDNN, set_float32_matmul_precision("high"), set before
         torch.compile and kept while timing; cgc --precision=tf32
  bf16, fp16
         the PyTorch model converted with .to(dtype) (a copy: every
         parameter, activation, norm and softmax in that type, as PyTorch
         computes them), floating-point inputs cast once outside the timed
         call, token ids stay int64; cgc --precision=bf16|fp16 (matmul and
         conv inputs in that type on tensor cores, fp32 accumulation;
         softmax, norms, reductions fp32; the package's inputs and outputs
         fp32 as in the ONNX model, so it is fed the fp32 inputs)

Peers (--peers, in the order their torch.compile phases run):
  cgc          Model.benchmark: CUDA events around the copy of the
               device-resident input into its static slot + the graph
               launch(es), in libcgrt's loop (always run); beside it
               cgc's Python call model(x) on the same CUDA tensors, timed
               as the peers are, and its host time per call
  eager        model(x)
  cuda_graph   a hand-captured torch.cuda.CUDAGraph: static_x.copy_(x);
               g.replay()
  compile      torch.compile(model, dynamic=False) (mode "default")
  compile_ro   torch.compile(model, mode="reduce-overhead", dynamic=False)
  compile_ma   torch.compile(model, mode="max-autotune", dynamic=False)
Every peer is timed the same way: after warm-up, per iteration a start
event, the call, an end event and a wait for it (latency of one inference
issued to an idle GPU); median and p99 over the iterations of a round
(about --round-seconds, between --min-iters and --iters iterations). Of
--rounds rounds the one with the lowest median is reported and the spread
between the rounds' medians kept. --profile N adds kernel counts and
kernel time per inference (torch.profiler/CUPTI) for cgc and eager, taken
after every timing of the run: once torch.profiler has loaded CUPTI it
stays in the process, and no latency or host time should be measured
with it there.

Accuracy. The fp32 references: eager PyTorch in fp32 with TF32 off, in this
run, on the fixed inputs and a fresh draw; and onnxruntime's fp32 outputs on
the same inputs where bench/compile.py carried them (refs/NAME.npz).
fp32: cgc's outputs must match eager fp32 to a relative L2 error of 1e-4
(as before). tf32, fp16: cgc's outputs against onnxruntime fp32 (eager fp32
where no onnxruntime reference came) within 2e-3; bf16 within 1e-2 (issue
15's bounds). Above its bound, or with inf/NaN where the reference is
finite (fp16 overflow), cgc is reported FAILED whatever its time. Every
PyTorch peer's own error in its precision against the same reference is
recorded too (fixed inputs).

--deadline: a step that would start too late (from the times measured so
far: a model's phase 1, each torch.compile mode) is recorded as not run
with the reason; a torch.compile still compiling at the deadline is stopped
and recorded so. Writes DIR/results.json after every step (a run cut short
keeps what it did), DIR/benchmarks.md and DIR/benchmarks.png at the end.
"""

import argparse
import copy
import glob
import json
import math
import os
import platform
import shlex
import shutil
import signal
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

PRECISIONS = ["fp32", "tf32", "fp16", "bf16"]
# cgc's relative L2 error bound per precision: fp32 against eager fp32 (the
# old check), the others against the fp32 reference (issue 15).
BOUNDS = {"fp32": 1e-4, "tf32": 2e-3, "fp16": 2e-3, "bf16": 1e-2}
TORCH_PEERS = ["eager", "cuda_graph", "compile", "compile_ro", "compile_ma"]
COMPILE_MODES = {"compile": "default", "compile_ro": "reduce-overhead",
                 "compile_ma": "max-autotune"}
# Seconds a first torch.compile of a mode is assumed to need before any was
# measured in this run (max-autotune times Triton candidates per product).
COMPILE_GUESS_S = {"compile": 45.0, "compile_ro": 45.0, "compile_ma": 150.0}
PHASE1_GUESS_S = 20.0
DEFAULT_PEERS = "eager,cuda_graph,compile_ro,compile_ma,compile"


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


def python_call(torch, model, xs, args):
    """cgc's Python call model(*xs) on CUDA tensors, timed as the peers are
    (CUDA events around each call, fresh outputs each call), and its host
    time: the median of --host-iters calls issued to an idle GPU, the clock
    stopped when the call returns (the run is enqueued on torch's stream,
    not waited for)."""
    result = {"call_path": model.call_path,
              "python_call": time_events(torch, lambda: model(*xs), args)}
    result["python_host"] = host_time(torch, lambda: model(*xs),
                                      args.host_iters)
    return result


def host_time(torch, fn, iters):
    """Median host time of fn() issued to an idle GPU (until it returns)."""
    samples = []
    for i in range(10 + iters):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if i >= 10:
            samples.append((time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    return stats(samples)


def capture_cuda_graph(torch, model, xs, warmup=3):
    """The torch.cuda.graph peer: model(*xs) captured after `warmup` calls
    on a side stream (torch's recipe). Returns (graph, step, static
    outputs); step() copies xs into the static inputs and replays."""
    static_x = [x.clone() for x in xs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            model(*static_x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = model(*static_x)

    def step():
        for sx, x in zip(static_x, xs):
            sx.copy_(x, non_blocking=True)
        g.replay()
    return g, step, static_y


def warm_gpu(torch, seconds=2.0):
    """Busy work so the clocks are up before the first timing."""
    a = torch.randn(4096, 4096, device="cuda")
    t = time.monotonic()
    while time.monotonic() - t < seconds:
        for _ in range(10):
            a = torch.tanh(a @ a * 1e-3)
        torch.cuda.synchronize()


def torch_dtype(torch, precision):
    """The dtype a PyTorch peer computes in."""
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(
        precision, torch.float32)


def set_precision(torch, precision):
    """PyTorch's global math settings for a precision: TF32 on for tf32
    only (matmul and cuDNN); bf16/fp16 peers are converted models, so
    their settings are fp32's."""
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def measure_ceilings(torch, precisions):
    """The card's measured ceilings in this run: device copy bandwidth (a
    1 GiB tensor copied, bytes read + written per second) and the matmul
    rate of each precision (8192^3 torch.mm; fp32 with TF32 off); best of
    10 each."""
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
    out = {"copy_bytes_per_s": 2 * 4 * n / copy_s,
           "method": "copy of a 1 GiB fp32 tensor (read + write), "
                     "torch.mm 8192x8192 per precision (fp32: TF32 off); "
                     "best of 10"}
    m = 8192
    for p in ["fp32"] + [q for q in precisions if q != "fp32"]:
        set_precision(torch, p)
        a = torch.randn(m, m, device="cuda", dtype=torch_dtype(torch, p))
        b = torch.randn(m, m, device="cuda", dtype=torch_dtype(torch, p))
        out["%s_flops_per_s" % p] = 2 * m ** 3 / best(lambda: torch.mm(a, b))
        del a, b
    set_precision(torch, "fp32")
    torch.cuda.empty_cache()
    return out


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


def compare(got, ref, bound):
    """Relative L2 error and max abs error of one output against its
    reference; ok when the relative L2 error is within bound and the
    non-finite values are where the reference has them."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return {"ok": False, "why": "shape %s, expected %s" % (
            list(got.shape), list(ref.shape))}
    fin = np.isfinite(ref)
    bad = int(np.count_nonzero(np.isfinite(got) != fin))
    if bad:
        inf = int(np.count_nonzero(np.isinf(got) & fin))
        return {"ok": False, "rel_l2": float("nan"), "max_abs": float("inf"),
                "why": "%d non-finite value(s) where the reference is finite"
                       " (%d inf%s)" % (bad, inf, ": overflow" if inf else "")}
    diff = got[fin] - ref[fin]
    rel = float(np.linalg.norm(diff) / max(np.linalg.norm(ref[fin]), 1e-30))
    return {"ok": rel <= bound, "rel_l2": rel,
            "max_abs": float(np.abs(diff).max()) if diff.size else 0.0}


def compare_all(outs, refs, bound):
    """The worst comparison over a model's outputs."""
    if len(outs) != len(refs):
        return {"ok": False, "why": "%d outputs, expected %d" % (
            len(outs), len(refs))}
    checks = [compare(got, ref, bound) for got, ref in zip(outs, refs)]

    def worst(key):
        vals = [c.get(key, float("nan")) for c in checks]
        if any(math.isnan(v) for v in vals):
            return float("nan")
        return float(max(vals)) if vals else 0.0
    bad = [c for c in checks if not c["ok"]]
    return {"ok": not bad, "rel_l2": worst("rel_l2"),
            "max_abs": worst("max_abs"),
            "why": bad[0].get("why") if bad else None}


def worst_check(checks):
    """The worst of several compare_all results (failed ones first)."""
    def key(c):
        rel = c.get("rel_l2")
        return (not c["ok"], math.inf if rel is None or math.isnan(rel)
                else rel)
    return max(checks, key=key)


def as_list(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def to_numpy(ys):
    return [y.detach().float().cpu().numpy() for y in ys]


def cast_inputs(torch, xs, dtype):
    """Floating-point inputs in dtype; integer inputs (token ids) as they
    are."""
    return [x.to(dtype) if x.is_floating_point() else x for x in xs]


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


class DeadlinePassed(BaseException):
    """Raised by the alarm in a torch.compile that runs past --deadline
    (a BaseException, so that no `except Exception` inside torch keeps
    it)."""


class alarm_at:
    """Raises DeadlinePassed in the main thread after `seconds`."""

    def __init__(self, seconds):
        self.seconds = max(1.0, seconds)

    def _fire(self, signum, frame):
        raise DeadlinePassed()

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, self._fire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.old)
        return False


class References:
    """A model's fp32 references on the fixed inputs (seed 0) and a fresh
    draw (seed 1): eager PyTorch fp32 with TF32 off (this run) and
    onnxruntime fp32 (bench/compile.py's refs/NAME.npz) where carried."""

    def __init__(self, eager, ort):
        self.eager = eager  # [seed0 outputs, seed1 outputs]
        self.ort = ort      # the same from onnxruntime, or None

    def for_precision(self, precision):
        """(name, [seed0 outputs, seed1 outputs]) that the precision's
        check is made against."""
        if precision == "fp32" or self.ort is None:
            return "torch eager fp32", self.eager
        return "onnxruntime fp32", self.ort


def load_ort_refs(packages, name, count):
    """onnxruntime's outputs from bench/compile.py, or None."""
    path = os.path.join(packages or "", "refs", name + ".npz")
    if not packages or not os.path.exists(path):
        return None
    data = np.load(path)
    try:
        return [[data["seed%d_%d" % (seed, k)] for k in range(count)]
                for seed in (0, 1)]
    except KeyError:
        return None


class Bench:
    def __init__(self, args):
        import torch
        self.torch = torch
        self.args = args
        self.t0 = time.monotonic()
        set_precision(torch, "fp32")
        self.results = {"env": env_info(torch), "models": {},
                        "settings": {"warmup": args.warmup,
                                     "iters": args.iters,
                                     "min_iters": args.min_iters,
                                     "round_seconds": args.round_seconds,
                                     "rounds": args.rounds,
                                     "tolerance_rel_l2": BOUNDS["fp32"],
                                     "bounds_rel_l2": BOUNDS,
                                     "precisions": args.precisions,
                                     "peers": ["cgc"] + args.peers,
                                     "deadline_s": args.deadline},
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
        self.phase1_s = []    # seconds of each (model, precision) phase 1
        self.deferred_profiles = []  # run_profiles: after every timing
        self.compile_s = {}   # peer -> {(name, precision): seconds}

    def left(self):
        return self.args.deadline - (time.monotonic() - self.t0)

    def save(self):
        os.makedirs(self.args.out, exist_ok=True)
        path = os.path.join(self.args.out, "results.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1, sort_keys=True)
        os.replace(path + ".tmp", path)

    def log(self, *a):
        print("[%6.1fs]" % (time.monotonic() - self.t0), *a, flush=True)

    def entry(self, name, precision):
        """results["models"][name]["precisions"][precision]."""
        r = self.results["models"][name]
        return r.setdefault("precisions", {}).setdefault(precision, {})

    # -- phase 1: cgc, eager, CUDA graph per precision ---------------------
    def run_family(self, family, names):
        """Builds the family's model (and its bf16/fp16 copies), runs phase
        1 of each model in each precision; returns {precision: model}."""
        torch = self.torch
        model = models.build_family(family)
        digest = models.state_digest(model)
        expected = self.manifest.get("families", {}).get(family, {}).get(
            "state_digest")
        model = model.cuda()
        built = {}
        for p in self.args.precisions:
            dtype = torch_dtype(torch, p)
            built[p] = model if dtype == torch.float32 else \
                copy.deepcopy(model).to(dtype)
        for name in names:
            r = self.results["models"].setdefault(name, {})
            st = self.status.get(name, {})
            r.update(family=family, batch=models.SPECS[name][1],
                     description=models.DESCRIPTIONS[family],
                     weights_match_export=(expected == digest
                                           if expected else None),
                     floor=st.get("floor"),
                     onnxruntime_rel_l2_vs_torch=st.get(
                         "onnxruntime_rel_l2_vs_torch"))
            try:
                refs = self.refs[name] = self.references(model, name, r)
            except Exception as e:
                r["error"] = "%s: %s" % (type(e).__name__, e)
                traceback.print_exc()
                self.save()
                continue
            for p in self.args.precisions:
                e = self.entry(name, p)
                need = max(self.phase1_s + [PHASE1_GUESS_S])
                if self.left() < need:
                    e["skipped"] = ("time budget of the run: %.0f s left of "
                                    "--deadline, phase 1 takes ~%.0f s"
                                    % (self.left(), need))
                    self.log(name, p, "skipped:", e["skipped"])
                    continue
                t = time.monotonic()
                try:
                    self.run_phase1(built[p], name, p, refs, e)
                except Exception as ex:
                    e["error"] = "%s: %s" % (type(ex).__name__, ex)
                    traceback.print_exc()
                finally:
                    set_precision(torch, "fp32")
                self.phase1_s.append(time.monotonic() - t)
                self.save()
        return built

    def inputs(self, name, seed):
        feeds = models.make_inputs(name, seed)
        return [self.torch.from_numpy(v).cuda() for v in feeds.values()]

    def references(self, model, name, r):
        torch = self.torch
        set_precision(torch, "fp32")
        eager = []
        with torch.inference_mode():
            for seed in (0, 1):
                eager.append(to_numpy(as_list(model(*self.inputs(name,
                                                                 seed)))))
        r["outputs"] = [list(o.shape) for o in eager[0]]
        ort = load_ort_refs(self.packages, name, len(eager[0]))
        if ort is not None:
            # onnxruntime against this run's eager fp32: the two references
            # agree (or the table says by how much they do not).
            r["onnxruntime_rel_l2_vs_eager"] = max(
                compare_all(o, e, math.inf).get("rel_l2", float("nan"))
                for o, e in zip(ort, eager))
        return References(eager, ort)

    def run_phase1(self, model, name, precision, refs, e):
        torch = self.torch
        args = self.args
        ref_name, ref = refs.for_precision(precision)
        e["reference"] = ref_name
        e["bound"] = BOUNDS[precision]
        xs = self.inputs(name, 0)
        xs_fresh = self.inputs(name, 1)
        e["cgc"] = self.run_cgc(name, precision, xs, xs_fresh, refs)
        self.log(name, precision, "cgc:",
                 {k: v for k, v in e["cgc"].items()
                  if k in ("status", "median_us", "rel_l2", "error")})
        set_precision(torch, precision)
        xp = cast_inputs(torch, xs, torch_dtype(torch, precision))
        peers = args.peers
        if "eager" in peers:
            with torch.inference_mode():
                y = to_numpy(as_list(model(*xp)))
                res = time_events(torch, lambda: model(*xp), args)
            res.update(status="ok", **self.peer_error(y, ref[0], precision))
            if args.profile:
                def eager_call(model=model, xp=xp):
                    with torch.inference_mode():
                        model(*xp)
                self.defer_profile(res, eager_call)
            e["eager"] = res
            self.log(name, precision, "eager: %.1f us" % res["median_us"])
        if "cuda_graph" in peers:
            try:
                e["cuda_graph"] = self.run_cuda_graph(model, xp, ref[0],
                                                      precision)
                self.log(name, precision, "cuda graph: %.1f us"
                         % e["cuda_graph"]["median_us"])
            except Exception as ex:
                e["cuda_graph"] = {"status": "error",
                                   "error": "%s: %s" % (type(ex).__name__, ex)}

    def peer_error(self, outs, ref, precision):
        """A PyTorch peer's own error in its precision (fixed inputs)
        against the reference of the precision."""
        c = compare_all(outs, ref, BOUNDS[precision])
        return {"rel_l2": c.get("rel_l2"), "max_abs": c.get("max_abs"),
                "within_bound": c["ok"], "why": c.get("why")}

    def run_cgc(self, name, precision, xs, xs_fresh, refs):
        import cgc
        torch = self.torch
        st = self.status.get(name, {})
        pst = st.get("precisions", {}).get(precision)
        if pst is None and precision == "fp32" and "ok" in st:
            pst = st  # a status.json from before precisions: NAME/ is fp32
            folder = name
        else:
            folder = "%s.%s" % (name, precision)
        if not self.packages:
            return {"status": "not run", "error": "no packages given"}
        if pst is None:
            return {"status": "not compiled",
                    "error": "no package was compiled for this model in %s"
                             % precision}
        if not pst.get("ok"):
            return {"status": "not compiled", "error": pst.get("error", "")}
        out = {"status": "ok", "kernels": pst.get("kernels"),
               "graph_nodes": pst.get("graph_nodes"),
               "compile_s": pst.get("seconds"), "package": folder}
        try:
            model = cgc.load(os.path.join(self.packages, folder))
        except cgc.RuntimeError as e:
            return dict(out, status="load failed", error=str(e))
        try:
            # The package's input types (fp32 unless cgc was told
            # otherwise): feed those.
            types = [t.torch_dtype for t in model.inputs]
            xs = [x.to(t) for x, t in zip(xs, types)]
            xs_fresh = [x.to(t) for x, t in zip(xs_fresh, types)]
            outs = [to_numpy(as_list(model(*x))) for x in (xs, xs_fresh)]
            ref_name, ref = refs.for_precision(precision)
            bound = BOUNDS[precision]
            worst = worst_check([compare_all(o, r, bound)
                                 for o, r in zip(outs, ref)])
            out.update(check_ok=worst["ok"], rel_l2=worst.get("rel_l2"),
                       max_abs=worst.get("max_abs"), why=worst.get("why"),
                       reference=ref_name, bound=bound)
            # The other reference, for the record.
            other = refs.ort if ref_name.startswith("torch") else refs.eager
            if other is not None:
                o = worst_check([compare_all(a, b, math.inf)
                                 for a, b in zip(outs, other)])
                out["rel_l2_other_reference"] = o.get("rel_l2")
                out["other_reference"] = ("onnxruntime fp32"
                                          if other is refs.ort
                                          else "torch eager fp32")
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
            out.update(python_call(torch, model, xs, self.args))
            if self.args.profile:
                package = os.path.join(self.packages, folder)
                self.defer_profile(out, lambda: cgc.load(package), xs)
            if not out["check_ok"]:
                out["status"] = "FAILED"
        except cgc.RuntimeError as e:
            out.update(status="run failed", error=str(e))
        finally:
            model.close()
        return out

    def run_cuda_graph(self, model, xs, ref, precision):
        torch = self.torch
        with torch.inference_mode():
            g, step, static_y = capture_cuda_graph(torch, model, xs)
            static_y = as_list(static_y)
            step()
            torch.cuda.synchronize()
            err = self.peer_error(to_numpy(static_y), ref, precision)
            r = time_events(torch, step, self.args)
            # Host time of a replay (beside cgc's Python call's).
            r["host"] = host_time(torch, step, self.args.host_iters)
        r.update(status="ok", **err)
        del g
        return r

    # -- phase 2: torch.compile ------------------------------------------
    def compile_need(self, key, name, precision):
        """Seconds a torch.compile of this mode is expected to take: a guess
        before any was measured in this run, else 1.5x the slowest of the
        mode so far (at least 10 s), and no less than 1.2x this model's
        time in another precision. A compile that outruns the estimate is
        still stopped at the deadline."""
        seen = self.compile_s.get(key, {})
        need = max(10.0, 1.5 * max(seen.values())) if seen \
            else COMPILE_GUESS_S[key]
        same = [v for (n, _), v in seen.items() if n == name]
        return max([need] + [1.2 * v for v in same])

    def run_compile(self, model, name, precision, key):
        torch = self.torch
        mode = COMPILE_MODES[key]
        e = self.entry(name, precision)
        if e.get("skipped") or e.get("error"):
            return
        need = self.compile_need(key, name, precision)
        if self.left() < need:
            e[key] = {"status": "not run",
                      "error": "time budget of the run: %.0f s left of "
                               "--deadline, torch.compile %s needs ~%.0f s"
                               % (max(self.left(), 0), mode, need)}
            self.log(name, precision, key, e[key]["error"])
            return
        _, ref = self.references_for(name, precision)
        set_precision(torch, precision)
        xs = cast_inputs(torch, self.inputs(name, 0),
                         torch_dtype(torch, precision))
        torch._dynamo.reset()
        t = time.monotonic()
        try:
            with alarm_at(self.left()):
                compiled = torch.compile(model, mode=mode, dynamic=False)
                mark = (torch.compiler.cudagraph_mark_step_begin
                        if mode != "default" else (lambda: None))

                def step():
                    mark()
                    return compiled(*xs)
                with torch.inference_mode():
                    y = to_numpy(as_list(step()))
                    step()
                    torch.cuda.synchronize()
                    compile_s = time.monotonic() - t
            self.compile_s.setdefault(key, {})[(name, precision)] = compile_s
            with torch.inference_mode():
                res = time_events(torch, step, self.args)
            res.update(status="ok", compile_s=compile_s,
                       **self.peer_error(y, ref[0], precision))
        except DeadlinePassed:
            res = {"status": "not run",
                   "error": "torch.compile %s stopped at --deadline after "
                            "%.0f s" % (mode, time.monotonic() - t)}
        except Exception as ex:
            res = {"status": "error", "error": "%s: %s" % (
                type(ex).__name__, str(ex).splitlines()[0][:300]
                if str(ex) else "")}
            traceback.print_exc()
        finally:
            set_precision(torch, "fp32")
        e[key] = res
        self.log(name, precision, key,
                 {k: res.get(k) for k in ("median_us", "compile_s", "rel_l2",
                                          "error")})
        torch._dynamo.reset()

    def references_for(self, name, precision):
        return self.refs[name].for_precision(precision)

    # -- kernel profiles, after every timing ------------------------------
    def defer_profile(self, result, call, inputs=None):
        """Profiles later (run_profiles): torch.profiler loads CUPTI, which
        stays in the process, so nothing is timed after it. `call` is the call to profile, or with `inputs`
        a function that loads a cgc model to call on them (closed after)."""
        self.deferred_profiles.append((result, call, inputs))

    def run_profiles(self):
        for result, call, inputs in self.deferred_profiles:
            model = None
            try:
                if inputs is not None:
                    model = call()
                    fn = (lambda m=model: m(*inputs))
                else:
                    fn = call
                result["profile"] = kernel_profile(self.torch, fn,
                                                   self.args.profile)
            except Exception as e:
                result["profile_error"] = "%s: %s" % (type(e).__name__, e)
            finally:
                if model is not None:
                    model.close()
        self.deferred_profiles = []

    def run(self):
        names = self.args.names
        families = [f for f in models.FAMILIES
                    if any(models.SPECS[n][0] == f for n in names)]
        warm_gpu(self.torch)
        try:
            self.results["ceilings"] = measure_ceilings(
                self.torch, self.args.precisions)
            self.log("ceilings", self.results["ceilings"])
        except Exception as e:  # report, do not stop
            self.results["ceilings_error"] = "%s: %s" % (type(e).__name__, e)
        built = {}
        self.refs = {}
        for family in families:
            members = [n for n in names if models.SPECS[n][0] == family]
            self.log("family", family, members)
            built[family] = self.run_family(family, members)
        for key in [p for p in self.args.peers if p in COMPILE_MODES]:
            for precision in self.args.precisions:
                for name in names:
                    if name not in self.refs:
                        continue
                    model = built[models.SPECS[name][0]][precision]
                    self.run_compile(model, name, precision, key)
                    self.save()
        self.run_profiles()
        self.results["wall_s"] = time.monotonic() - self.t0
        self.save()


def unpack_carry(pattern, dest):
    import transfer
    parts = sorted(glob.glob(pattern))
    if not parts:
        sys.exit("no parts match %s" % pattern)
    # A machine kept warm between calls still has the last call's packages.
    shutil.rmtree(dest, ignore_errors=True)
    transfer.unpack(dest, parts)
    return dest


def parse_list(parser, text, known, what):
    items = [x for x in text.split(",") if x]
    bad = [x for x in items if x not in known]
    if bad or not items:
        parser.error("%s: %r; known: %s" % (what, text, ",".join(known)))
    return items


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", help="folder of compiled packages "
                        "(NAME.PREC/, status.json, manifest.json, refs/, "
                        "runtime/)")
    parser.add_argument("--carry", help="glob of packed parts to unpack "
                        "into /tmp/cgc-bench first (bench/compile.py's)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--families", help="comma-separated families (%s)"
                        % ",".join(models.FAMILIES))
    parser.add_argument("--precisions", default="fp32",
                        help="comma-separated, of %s (default fp32)"
                        % ",".join(PRECISIONS))
    parser.add_argument("--peers", default=DEFAULT_PEERS,
                        help="comma-separated PyTorch peers, of %s; the "
                        "torch.compile modes run in this order, so the first "
                        "get the time (default %s)"
                        % (",".join(TORCH_PEERS), DEFAULT_PEERS))
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
                        help="seconds; steps that would start too late are "
                        "reported as not run, a torch.compile still "
                        "compiling then is stopped")
    parser.add_argument("--no-compile", action="store_true",
                        help="no torch.compile peer (as --peers "
                        "eager,cuda_graph)")
    args = parser.parse_args()
    args.command = "python3 bench/run.py " + " ".join(
        shlex.quote(a) for a in sys.argv[1:])
    args.precisions = parse_list(parser, args.precisions, PRECISIONS,
                                 "--precisions")
    args.peers = parse_list(parser, args.peers, TORCH_PEERS, "--peers")
    if args.no_compile:
        args.peers = [p for p in args.peers if p not in COMPILE_MODES]
    try:
        args.names = models.select(args.models, args.families)
    except ValueError as e:
        parser.error(str(e))
    if args.carry:
        args.packages = unpack_carry(args.carry, "/tmp/cgc-bench")
    if args.packages:
        lib = os.path.join(args.packages, "runtime", "libcgrt.so")
        if os.path.exists(lib) and "CGC_RUNTIME_LIB" not in os.environ:
            os.environ["CGC_RUNTIME_LIB"] = lib
        if not args.models and not args.families:
            # The models the carried packages were compiled for.
            path = os.path.join(args.packages, "status.json")
            if os.path.exists(path):
                with open(path) as f:
                    compiled = json.load(f)
                args.names = [n for n in args.names if n in compiled]
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
