#!/usr/bin/env python3
"""Renders bench/run.py's results.json as docs/benchmarks.md (and a plot).

    python3 bench/report.py results.json [more.json ...] --md docs/benchmarks.md
        [--plot PNG] [--json merged.json]

bench/run.py calls this itself at the end of a run; this command re-renders
results, and merges the results of several runs (a benchmark split over
device calls by family or precision: each model and precision comes from
the last file that has it; --json writes the merged results). One table per
precision, with the ratios cgc ÷ peer and the output errors. results.json
files from before precisions (peers at the top of each model) read as fp32.
The plot needs matplotlib.
"""

import argparse
import copy
import json
import math
import sys

PEERS = [("cgc", "cgc"), ("eager", "eager"), ("cuda_graph", "torch.cuda.graph"),
         ("compile", "torch.compile"),
         ("compile_ro", "torch.compile reduce-overhead"),
         ("compile_ma", "torch.compile max-autotune")]
PEER_KEYS = [key for key, _ in PEERS]
SHORT = {"eager": "eager", "cuda_graph": "graph", "compile": "compile",
         "compile_ro": "reduce-overhead", "compile_ma": "max-autotune"}
PRECISION_ORDER = ["fp32", "tf32", "fp16", "bf16"]
# How bench/run.py's reasons for a peer left out for time begin.
TIME_BUDGET = "time budget of the run"
RUN_KEYS = ("env", "settings", "command", "cgc_build", "ceilings",
            "ceilings_error", "export", "wall_s")


# ------------------------------------------------------------- results --
def normalize(results):
    """Results in the merged form: {"runs": [one dict of RUN_KEYS a run],
    "models": {name: {..., "precisions": {p: {peers..., "run": k}}}}}.
    Takes bench/run.py's results.json (one run), an older one without
    precisions (its peers are fp32), or an already merged file."""
    if "runs" in results:
        return results
    run = {k: results[k] for k in RUN_KEYS if k in results}
    out = {"runs": [run], "models": {}}
    for name, r in results.get("models", {}).items():
        r = copy.deepcopy(r)
        if "precisions" not in r:
            fp32 = {k: r.pop(k) for k in [key for key, _ in PEERS]
                    if k in r}
            fp32["bound"] = (run.get("settings", {})
                             .get("tolerance_rel_l2", 1e-4))
            fp32["reference"] = "torch eager fp32"
            r["precisions"] = {"fp32": fp32}
        for e in r["precisions"].values():
            e["run"] = 0
        out["models"][name] = r
    return out


def _usable(v):
    return isinstance(v, dict) and v.get("status") in ("ok", "FAILED")


def merge(many):
    """Merged results of several runs, peer by peer: a later run's
    measurement of a model, precision and peer replaces an earlier one,
    unless the later one did not run (time budget, error) where the
    earlier did. Each peer keeps the index of its run ("run"), which says
    whose ceilings its floor uses."""
    out = {"runs": [], "models": {}}
    for results in many:
        results = normalize(results)
        base = len(out["runs"])
        out["runs"].extend(results["runs"])
        for name, r in results["models"].items():
            mine = out["models"].setdefault(name, {})
            for k, v in r.items():  # newer facts about the model win
                if k != "precisions" and v is not None:
                    mine[k] = v
            precs = mine.setdefault("precisions", {})
            for p, e in r.get("precisions", {}).items():
                run = e.get("run", 0) + base
                old = precs.setdefault(p, {})
                for k, v in e.items():
                    if k in PEER_KEYS:
                        if _usable(v) or not _usable(old.get(k)):
                            old[k] = dict(v, run=run)
                    elif k not in ("run", "skipped", "error"):
                        old[k] = v
                for k in ("skipped", "error"):  # only while nothing ran
                    if e.get(k) and not any(_usable(old.get(q))
                                            for q in PEER_KEYS):
                        old[k] = e[k]
                    elif any(_usable(old.get(q)) for q in PEER_KEYS):
                        old.pop(k, None)
                cgc = old.get("cgc")
                old["run"] = cgc.get("run", run) if isinstance(cgc, dict) \
                    else run
    return out


def _order(results):
    try:
        import models
        order = list(models.SPECS)
    except ImportError:
        order = []
    names = list(results.get("models", {}))
    return sorted(names, key=lambda n: order.index(n) if n in order else 99)


def _precisions(results):
    found = {p for r in results["models"].values()
             for p in r.get("precisions", {})}
    return [p for p in PRECISION_ORDER if p in found] + sorted(
        found - set(PRECISION_ORDER))


def _run(results, e):
    runs = results.get("runs") or [{}]
    return runs[min(e.get("run", 0), len(runs) - 1)]


# --------------------------------------------------------------- cells --
def _peer(e, key):
    """(median, p99) of a usable timing, else None."""
    v = e.get(key)
    if not isinstance(v, dict) or v.get("status") != "ok" or \
            v.get("median_us") is None:
        return None
    return v["median_us"], v["p99_us"]


def _status(e, key):
    v = e.get(key)
    if isinstance(v, dict):
        return v.get("status", "not run")
    if e.get("skipped"):
        return "skipped"
    return "not run"


def _cgc_cell(e):
    c = e.get("cgc", {})
    st = c.get("status") or ("skipped" if e.get("skipped") else "not run")
    if st == "ok":
        return "**%.1f** (%.1f)" % (c["median_us"], c["p99_us"])
    if st == "FAILED":
        return "**FAILED**: error %s over the bound, time withheld" % (
            _num(c.get("rel_l2"), "%.2g"))
    return st


def _cell(e, key):
    t = _peer(e, key)
    if t:
        return "%.1f (%.1f)" % t
    return _status(e, key)


def _ratio(e, key):
    """cgc's latency ÷ the peer's (below 1: cgc is faster)."""
    t, c = _peer(e, key), _peer(e, "cgc")
    if not t or not c:
        return "—"
    return "%.2f×" % (c[0] / t[0])


def _num(v, f):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        return f % v
    return "—"


def _error_cell(c):
    """cgc's relative L2 error (max abs error) against its reference."""
    if not isinstance(c, dict) or c.get("rel_l2") is None and not c.get("why"):
        return "—"
    if c.get("why") and (c.get("rel_l2") is None
                         or math.isnan(c.get("rel_l2"))):
        return _short(c["why"], 60)
    return "%s (%s)" % (_num(c.get("rel_l2"), "%.1e"),
                        _num(c.get("max_abs"), "%.1e"))


def _peer_error_cell(e, key):
    v = e.get(key)
    if not isinstance(v, dict) or v.get("status") != "ok":
        return "—"
    if v.get("why"):
        return _short(v["why"], 60)
    return _num(v.get("rel_l2"), "%.1e")


def floor_us(results, r, e, precision):
    """The physical floor of one inference in a precision: max(bytes /
    copy bandwidth, FLOPs / that precision's matmul rate), both measured
    in the same run; bf16/fp16 weights count 2 bytes, inputs and outputs
    stay fp32."""
    ceil, fl = _run(results, e).get("ceilings"), r.get("floor")
    if not ceil or not fl:
        return None
    rate = ceil.get("%s_flops_per_s" % precision)
    if not rate:
        return None
    nbytes = fl["bytes"]
    if precision in ("bf16", "fp16") and "weight_bytes" in fl:
        nbytes = fl["weight_bytes"] / 2 + fl["io_bytes"]
    return 1e6 * max(nbytes / ceil["copy_bytes_per_s"], fl["flops"] / rate)


def _floor_cells(results, r, e, precision):
    f, c = floor_us(results, r, e, precision), _peer(e, "cgc")
    if f is None:
        return "—", "—"
    return "%.1f" % f, ("%.0f%%" % (100 * f / c[0]) if c else "—")


def _short(text, n=220):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _ceilings_text(ceil):
    if not ceil:
        return "not measured"
    rates = ", ".join(
        "%s %.0f" % (p, ceil["%s_flops_per_s" % p] / 1e12)
        for p in PRECISION_ORDER if ceil.get("%s_flops_per_s" % p))
    return "%.2f TB/s copy; matmul TFLOP/s: %s" % (
        ceil["copy_bytes_per_s"] / 1e12, rates)


# ---------------------------------------------------------- markdown --
def _peers_present(results, precision):
    """The peer columns of a precision's table: those any row has."""
    keys = set()
    for r in results["models"].values():
        keys.update(r.get("precisions", {}).get(precision, {}))
    return [(k, label) for k, label in PEERS if k in keys or k == "cgc"]


def _entries(results, names, precision):
    """(name, model record, its entry for `precision`) for each of `names`
    that ran in that precision."""
    for name in names:
        r = results["models"][name]
        e = r.get("precisions", {}).get(precision)
        if e is not None:
            yield name, r, e


def _goals(results, names, precision, peers):
    """Issue 15's goals counted over a precision's rows: cgc faster than
    every peer measured; batch-1 rows at most 0.5x torch.cuda.graph;
    outputs within the bound."""
    faster = rows = b1 = b1_ok = acc = acc_ok = 0
    for name, r, e in _entries(results, names, precision):
        c = e.get("cgc", {})
        if c.get("status") in ("ok", "FAILED"):
            acc += 1
            acc_ok += c.get("status") == "ok"
        cgc = _peer(e, "cgc")
        times = [_peer(e, k) for k, _ in peers[1:]]
        times = [t for t in times if t]
        if cgc and times:
            rows += 1
            faster += all(cgc[0] < t[0] for t in times)
        graph = _peer(e, "cuda_graph")
        if r.get("batch") == 1 and cgc and graph:
            b1 += 1
            b1_ok += cgc[0] <= 0.5 * graph[0]
    return ("cgc faster than every peer measured on %d of %d rows; batch-1 "
            "rows at most 0.5× torch.cuda.graph: %d of %d; outputs within "
            "the bound: %d of %d." % (faster, rows, b1_ok, b1, acc_ok, acc))


def _precision_table(results, names, precision):
    peers = _peers_present(results, precision)
    many_runs = len(results.get("runs", [])) > 1
    bounds = sorted({e.get("bound") for r in results["models"].values()
                     for p, e in r.get("precisions", {}).items()
                     if p == precision and e.get("bound") is not None})
    refs = sorted({e.get("reference") for r in results["models"].values()
                   for p, e in r.get("precisions", {}).items()
                   if p == precision and e.get("reference")})
    lines = [
        "## %s" % precision, "",
        "%s Error: cgc's worst relative L2 error (max abs error) on the "
        "fixed inputs and a fresh draw against %s, bound %s; `torch error`: "
        "eager PyTorch's own in this precision, same reference, fixed "
        "inputs." % (_goals(results, names, precision, peers),
                     " / ".join(refs) or "the fp32 reference",
                     " / ".join("%g" % b for b in bounds) or "—"),
        "",
        "| model | batch | %s | %s | cgc error | torch error | floor µs "
        "| cgc %% of floor |%s" % (
            " | ".join(label for _, label in peers),
            " | ".join("cgc ÷ %s" % SHORT[k] for k, _ in peers[1:]),
            " run |" if many_runs else ""),
        "| --- | ---: |" + " ---: |" * (2 * len(peers) - 1 + 4) +
        (" ---: |" if many_runs else ""),
    ]
    for name, r, e in _entries(results, names, precision):
        cells = [_cgc_cell(e)] + [_cell(e, k) for k, _ in peers[1:]]
        ratios = [_ratio(e, k) for k, _ in peers[1:]]
        lines.append("| %s | %s | %s | %s | %s | %s | %s |%s" % (
            r.get("description", name), r.get("batch", "?"),
            " | ".join(cells), " | ".join(ratios),
            _error_cell(e.get("cgc")), _peer_error_cell(e, "eager"),
            " | ".join(_floor_cells(results, r, e, precision)),
            " %s |" % _runs_cell(e) if many_runs else ""))
    return lines


def _runs_cell(e):
    """The runs (1-based) a row's measurements come from."""
    runs = sorted({v.get("run", e.get("run", 0)) + 1 for k, v in e.items()
                   if k in PEER_KEYS and _usable(v)})
    return ",".join(str(k) for k in runs) or "—"


def _per_run(runs, text):
    """`text(run)` for every run: the one value when they agree, else each
    value with the runs (1-based) it comes from, so a merged table does not
    show the first run's versions for all of them."""
    values = {}
    for k, run in enumerate(runs):
        values.setdefault(text(run), []).append(str(k + 1))
    if len(values) == 1:
        return next(iter(values))
    return "; ".join("%s (run%s %s)" % (v, "s" if len(ks) > 1 else "",
                                        ",".join(ks))
                     for v, ks in values.items())


def _header(results, precisions):
    runs = results.get("runs") or [{}]
    st = runs[0].get("settings", {})

    def env(run):
        return run.get("env", {})

    def torch_line(run):
        e = env(run)
        return "%s (CUDA %s, cuDNN %s), Python %s" % (
            e.get("torch", "?"), e.get("cuda", "?"), e.get("cudnn", "?"),
            e.get("python", "?"))
    lines = [
        "# Benchmarks: cgc against PyTorch",
        "",
        "Generated by `bench/run.py` on the GPU machine (merged by "
        "`bench/report.py` where the benchmark took several runs); do not "
        "edit by hand (see `bench/README.md` for the whole flow).",
        "",
        "| | |", "| --- | --- |",
        "| GPU | %s |" % _per_run(runs, lambda r: env(r).get("gpu", "?")),
        "| driver | %s |" % _per_run(runs,
                                     lambda r: env(r).get("driver", "?")),
        "| torch | %s |" % _per_run(runs, torch_line),
        "| cgc | %s |" % _per_run(runs, lambda r: r.get("cgc_build", {}).get(
            "version", "?")),
    ]
    for k, run in enumerate(runs):
        label = "run %d" % (k + 1) if len(runs) > 1 else "run"
        built = ("; packages compiled %s" % run.get("cgc_build", {}).get(
            "date", "?")) if len(runs) > 1 else ""
        lines.append("| %s | %s, `%s`%s; ceilings: %s |" % (
            label, run.get("env", {}).get("date", "?"),
            run.get("command", "?"), built,
            _ceilings_text(run.get("ceilings"))))
    lines += [
        "",
        "Latency of one inference in µs, median (p99), from CUDA events, "
        "inputs already on the GPU. Every peer is timed per call (start "
        "event, call, end event, wait): the latency of one inference issued "
        "to an idle GPU, host launch cost included. A timing round is about "
        "%s s (%s to %s iterations) after %s warm-up calls; of %s rounds the "
        "one with the lowest median is shown (the spread between rounds is "
        "in the details). cgc: `Model.benchmark` of the Python package (the "
        "copy of the device-resident input into its static arena slot plus "
        "the graph launch, timed in libcgrt's C loop, so no Python overhead; "
        "the end-to-end Python call is in the details). torch.cuda.graph: a "
        "hand-captured graph, timed as `static_x.copy_(x); g.replay()` from "
        "Python. torch.compile in modes default, reduce-overhead (CUDA "
        "graphs) and max-autotune (Triton/cuBLAS candidates timed at "
        "compile time, CUDA graphs), `dynamic=False`; a mode that did not "
        "fit the run's time budget is shown as not run. `cgc ÷ peer` is "
        "cgc's latency over the peer's: below 1 cgc is faster (issue 15 "
        "asks for below 1 everywhere and at most 0.5 against "
        "torch.cuda.graph at batch 1)." % (
            st.get("round_seconds", "?"), st.get("min_iters", "?"),
            st.get("iters", "?"), st.get("warmup", "?"), st.get("rounds", 1)),
        "",
        "Precision, per peer. **fp32**: PyTorch with TF32 off "
        "(`torch.backends.cuda.matmul.allow_tf32 = "
        "torch.backends.cudnn.allow_tf32 = False`, "
        "`set_float32_matmul_precision(\"highest\")`); cgc compiled without "
        "`--precision`. **tf32**: the same fp32 model and inputs with TF32 "
        "on in PyTorch (both `allow_tf32` True, "
        "`set_float32_matmul_precision(\"high\")`, set before "
        "`torch.compile` and while timing); cgc `--precision=tf32`. "
        "**bf16 / fp16**: every PyTorch peer runs the model converted with "
        "`.to(torch.bfloat16 / torch.float16)` (weights, activations, norms "
        "and softmax in that type as PyTorch computes them), its "
        "floating-point inputs cast once outside the timed call, token ids "
        "int64; cgc `--precision=bf16 / fp16`: matmul, conv and attention "
        "inputs in that type on tensor cores with fp32 accumulation, "
        "softmax, norms' statistics and reductions in fp32, the package's "
        "inputs and outputs fp32 as in the ONNX model (so cgc is fed and "
        "returns fp32).",
        "",
        "Accuracy, in each table. fp32: cgc's outputs against eager PyTorch "
        "fp32 of the same run, relative L2 error at most %g (as before "
        "precisions). tf32, fp16, bf16: against onnxruntime's fp32 outputs "
        "(CPU, graph optimizations off, computed by `bench/compile.py` on "
        "the same fixed inputs and fresh draw; eager fp32 where none was "
        "carried), relative L2 error at most 2e-3 for tf32 and fp16 and "
        "1e-2 for bf16 (issue 15). Above the bound, or with inf/NaN where "
        "the reference is finite (fp16 overflow), cgc is reported FAILED "
        "and its time withheld." % st.get("tolerance_rel_l2", 1e-4),
        "",
        "Floor: the physical floor of one inference, max(bytes moved / copy "
        "bandwidth, FLOPs / the precision's matmul rate), the rates measured "
        "in the same run (8192³ `torch.mm`; above); bytes = weights (2 bytes "
        "each in bf16/fp16) and inputs read once plus outputs written once, "
        "FLOPs = 2 per multiply-add of MatMul/Gemm/Conv. `cgc % of floor` = "
        "floor ÷ cgc's latency.",
    ]
    return lines


def _details(results, names, precisions):
    lines = [
        "", "## Details", "",
        "cgc: kernels in the package, graph nodes and graph launches per "
        "inference, error against the other fp32 reference (onnxruntime for "
        "fp32 rows, eager fp32 for the others), the Python call "
        "`model(x)` on CUDA tensors (CUDA events around the call, as the "
        "peers; the section \"Python call\" has more), its compile time. GPU kernel time per inference (sum of kernel "
        "durations from torch.profiler/CUPTI, a little inflated by the "
        "profiling; latency minus this is launch overhead and idle GPU) for "
        "cgc and eager PyTorch, with eager's kernel count. Errors of the "
        "other PyTorch peers in their precision. Spread: the difference "
        "between the timing rounds' medians (max/min - 1) for cgc, for "
        "torch.cuda.graph and the largest of the other peers. Peers that "
        "launch kernel by kernel from Python (eager, torch.compile default) "
        "are bound by the host and are much noisier than graph replays "
        "(cgc, torch.cuda.graph, reduce-overhead, max-autotune).",
        "",
        "| model | batch | precision | cgc status | kernels | graph nodes "
        "| launches | cgc error vs other ref. | cgc `model(x)` µs | cgc "
        "kernel µs | eager kernels | eager kernel µs | cgc compile s | "
        "torch.compile s (default / RO / MA) | error graph / RO / MA | "
        "spread (cgc / graph / others) |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for precision in precisions:
        for name, r, e in _entries(results, names, precision):
            c = e.get("cgc", {})
            pc = c.get("python_call", {})
            cp = c.get("profile", {})
            ep = (e.get("eager") or {}).get("profile", {})
            comp = " / ".join(_num((e.get(k) or {}).get("compile_s"), "%.0f")
                              for k in ("compile", "compile_ro",
                                        "compile_ma"))
            errs = " / ".join(_peer_error_cell(e, k) for k in
                              ("cuda_graph", "compile_ro", "compile_ma"))

            def spread(keys):
                vals = [e[k]["spread"] for k in keys
                        if isinstance(e.get(k), dict)
                        and e[k].get("spread") is not None]
                return "%.0f%%" % (100 * max(vals)) if vals else "—"
            spreads = "%s / %s / %s" % (
                spread(["cgc"]), spread(["cuda_graph"]),
                spread(["eager", "compile", "compile_ro", "compile_ma"]))
            lines.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
                "| %s | %s | %s | %s |" % (
                    r.get("description", name), r.get("batch", "?"),
                    precision, c.get("status") or _status(e, "cgc"),
                    _num(c.get("kernels"), "%d"),
                    _num(c.get("graph_nodes"), "%d"),
                    _num(c.get("launches"), "%d"),
                    _num(c.get("rel_l2_other_reference"), "%.1e"),
                    _num(pc.get("median_us"), "%.1f"),
                    _num(cp.get("kernel_us_per_call"), "%.1f"),
                    _num(ep.get("kernels_per_call"), "%.0f"),
                    _num(ep.get("kernel_us_per_call"), "%.1f"),
                    _num(c.get("compile_s"), "%.1f"), comp, errs, spreads))
    return lines


def _python_call(results, names, precisions):
    """cgc's Python call against its C runtime, per model (issue 19's
    bound: at most 1.1x)."""
    rows = []
    for precision in precisions:
        for name, r, e in _entries(results, names, precision):
            c = e.get("cgc") or {}
            call = (c.get("python_call") or {}).get("median_us")
            host = (c.get("python_host") or {}).get("median_us")
            if call is None or "python_host" not in c:
                continue  # a run from before the native call path
            graph_host = ((e.get("cuda_graph") or {}).get("host") or
                          {}).get("median_us")
            rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r.get("description", name), r.get("batch", "?"), precision,
                c.get("call_path", "?"), _num(c.get("median_us"), "%.1f"),
                _num(call, "%.1f"),
                _num(call / c["median_us"] if c.get("median_us") else None,
                     "%.2fx"), _num(host, "%.1f"), _num(graph_host, "%.1f")))
    if not rows:
        return []
    return [
        "", "## Python call", "",
        "cgc's `model(*xs)` from Python on torch CUDA tensors (fresh outputs "
        "each call), timed as the peers are: CUDA events around the call. "
        "`C runtime µs` is the cgc column above (libcgrt's own loop); "
        "`host µs` is the median time until the call returns, issued to an "
        "idle GPU (the run is enqueued on torch's current stream, not "
        "waited for). `call path`: \"native\" (lib/Bindings/Python) or why "
        "the package takes the general ctypes path. `torch.cuda.graph host "
        "µs`: the same for the hand-captured graph's copy + replay.", "",
        "| model | batch | precision | call path | C runtime µs | `model(x)` "
        "µs | ratio | host µs | torch.cuda.graph host µs |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"] + rows


def _tops(results, names, precisions):
    tops = []
    for precision in precisions:
        for name in names:
            e = results["models"][name].get("precisions", {}).get(precision,
                                                                  {})
            top = e.get("cgc", {}).get("profile", {}).get("top")
            if top:
                tops.append((name, precision, top))
    if not tops:
        return []
    lines = ["", "## Where cgc's GPU time goes", "",
             "The three costliest kernels of each package per inference (µs, "
             "share of its kernel time); names are `<kind>_<hash>` as in the "
             "package's kernels.cu.", "",
             "| model | precision | kernels |", "| --- | --- | --- |"]
    for name, precision, top in tops:
        lines.append("| %s | %s | %s |" % (name, precision, "; ".join(
            "`%s` %.1f (%.0f%%)" % (k, us, 100 * share)
            for k, us, share in top[:3])))
    return lines


def _problems(results, names, precisions):
    problems = []
    budget = {}  # peer label -> rows it did not fit the time budget of
    for name in names:
        r = results["models"][name]
        if r.get("error"):
            problems.append("- %s: harness error: %s" % (name,
                                                          _short(r["error"])))
        agree = r.get("onnxruntime_rel_l2_vs_eager")
        if isinstance(agree, float) and not agree <= 1e-5:
            problems.append("- %s: the two fp32 references differ: "
                            "onnxruntime against eager PyTorch fp32, "
                            "relative L2 %s" % (name, _num(agree, "%.2g")))
        if r.get("weights_match_export") is False:
            problems.append("- %s: the weights built here differ from the "
                            "exported ones (state digest)" % name)
        for precision in precisions:
            e = r.get("precisions", {}).get(precision)
            if e is None:
                continue
            where = "%s %s" % (name, precision)
            if e.get("skipped"):
                problems.append("- %s: not run: %s" % (where,
                                                       _short(e["skipped"])))
                continue
            if e.get("error"):
                problems.append("- %s: harness error: %s" % (
                    where, _short(e["error"])))
            c = e.get("cgc", {})
            if c.get("status") not in (None, "ok"):
                why = c.get("error") or c.get("why") or ""
                if c.get("status") == "FAILED":
                    why = "relative L2 error %s (max abs %s) against %s, " \
                          "bound %g%s" % (
                              _num(c.get("rel_l2"), "%.3g"),
                              _num(c.get("max_abs"), "%.3g"),
                              c.get("reference") or e.get("reference",
                                                          "the reference"),
                              c.get("bound") or e.get("bound", float("nan")),
                              "; " + c["why"] if c.get("why") else "")
                problems.append("- %s: cgc %s: %s" % (where, c.get("status"),
                                                      _short(why, 400)))
            for key, label in PEERS[1:]:
                v = e.get(key, {})
                if not isinstance(v, dict) or v.get("status") in (None, "ok"):
                    continue
                error = v.get("error", "")
                if error.startswith(TIME_BUDGET):
                    budget.setdefault(label, []).append(where)
                    continue
                problems.append("- %s: %s %s: %s" % (
                    where, label, v.get("status"), _short(error)))
    for label, rows in budget.items():
        problems.append("- %s not run (%s) on %d row(s): %s" % (
            label, TIME_BUDGET, len(rows), ", ".join(rows)))
    return problems


def _first_call_section(path):
    """The load and first-call section from bench/first_call.py's results
    (docs/first_call.json): per run, each package's load time, first three
    calls and the median of the rest."""
    with open(path) as f:
        data = json.load(f)
    lines = ["", "## Load and first call", "",
             "%s, %s: `%s`. Each package in a fresh process: `cgc.load` "
             "(ms, the CUDA context included), then synchronous calls timed "
             "with `perf_counter` (µs)." % (data["gpu"], data["date"],
                                           data["command"]),
             "", data.get("summary", "")]
    for run in data["runs"]:
        lines += ["", "**%s**" % run["what"], "",
                  "| package | load ms | 1st | 2nd | 3rd | median | 1st / median |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in run["results"]:
            if "error" in r:
                lines.append("| %s | error | | | | | |" % r["package"])
                continue
            lines.append("| %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f |" % (
                r["package"], r["load_ms"], r["first_us"], r["second_us"],
                r["third_us"], r["median_us"], r["first_over_median"]))
    return lines


def _torch_entry_section(path):
    """cgc's PyTorch entry points (bench/torch_entry.py's results,
    docs/torch_entry.json): accuracy against eager and latency against
    torch.cuda.graph and reduce-overhead."""
    with open(path) as f:
        data = json.load(f)
    lines = ["", "## From PyTorch: make_graphed_callables and "
             "torch.compile(backend=\"cgc\")", "",
             "%s, torch %s, fp32: `%s`. Per model: cgc.make_graphed_callables "
             "and torch.compile(backend=\"cgc\", dynamic=False) under "
             "no_grad, their relative L2 error against eager PyTorch, the "
             "graphs TorchDynamo handed over and how many cgc ran, and the "
             "latency of one call (CUDA events around it, median, best of 3 "
             "rounds) beside eager, a hand-captured torch.cuda.graph (copy "
             "in + replay) and torch.compile mode=\"reduce-overhead\". The "
             "packages came from a package cache filled on the build machine "
             "from a CPU export (compile_only=True): the GPU machine has no "
             "compiler." % (data["gpu"], data["torch"], data["command"]), ""]
    rows, notes = torch_entry_rows(data["models"])
    lines += rows
    return lines + ([""] + notes if notes else [])


def torch_entry_rows(entries):
    """The table of bench/torch_entry.py's results, and notes for the models
    that did not run."""
    lines = ["| model | graphed rel. L2 | torch.compile(cgc) rel. L2 | graphs "
             "(cgc/all) | eager µs | cgc graphed µs | cgc torch.compile µs | "
             "torch.cuda.graph µs | reduce-overhead µs |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    notes = []
    for r in entries:
        if "error" in r:
            lines.append("| %s | not run: see below | | | | | | | |"
                         % r["model"])
            notes.append("- %s (%s): %s" % (r["model"], r.get("date", ""),
                                             r["error"][:300]))
            continue
        lat = r["latency_us"]
        graphs = r["compile_graphs"]
        lines.append("| %s | %.1e | %.1e | %d/%d | %.1f | %.1f | %.1f | %.1f "
                     "| %s |" % (
                         r["model"], r["graphed_rel_l2"], r["compile_rel_l2"],
                         sum(g["runner"] == "cgc" for g in graphs),
                         len(graphs), lat["eager"], lat["cgc_graphed"],
                         lat["cgc_compile"], lat["cuda_graph"],
                         _num(lat.get("compile_ro"), "%.1f")))
    return lines, notes


def write_markdown(results, path, first_call=None, torch_entry=None):
    results = normalize(results)
    names = _order(results)
    precisions = _precisions(results)
    lines = _header(results, precisions)
    for precision in precisions:
        lines += [""] + _precision_table(results, names, precision)
    lines += _details(results, names, precisions)
    lines += _python_call(results, names, precisions)
    lines += _tops(results, names, precisions)
    problems = _problems(results, names, precisions)
    if problems:
        lines += ["", "## What did not run, or failed", ""] + problems
    if first_call:
        lines += _first_call_section(first_call)
    if torch_entry:
        lines += _torch_entry_section(torch_entry)
    lines += ["", "![latency per model](benchmarks.png)", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def summary_table(results):
    results = normalize(results)
    keys = [k for k, _ in PEERS]
    rows = ["%-14s %5s %4s %12s %10s %10s %10s %10s %10s  %s" % (
        "model", "batch", "prec", "cgc", "eager", "graph", "compile", "RO",
        "MA", "cgc error")]
    for precision in _precisions(results):
        for name, r, e in _entries(results, _order(results), precision):

            def v(k):
                t = _peer(e, k)
                return "%.1f" % t[0] if t else _status(e, k)[:10]
            c = e.get("cgc", {})
            rows.append("%-14s %5s %4s %12s %10s %10s %10s %10s %10s  %s" % (
                name, r.get("batch"), precision,
                v("cgc") if c.get("status") == "ok"
                else (c.get("status") or _status(e, "cgc"))[:12],
                *[v(k) for k in keys[1:]],
                _num(c.get("rel_l2"), "%.1e")))
    return "\n".join(rows)


def write_plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results = normalize(results)
    precisions = _precisions(results) or ["fp32"]
    fig, axes = plt.subplots(len(precisions), 1, squeeze=False,
                             figsize=(max(8, 1.3 * len(_order(results))),
                                      3.6 * len(precisions)))
    colors = ["#d62728", "#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd",
              "#ff7f0e"]
    width = 0.8 / len(PEERS)
    env = (results.get("runs") or [{}])[0].get("env", {})
    for ax, precision in zip(axes[:, 0], precisions):
        names = [n for n in _order(results) if precision in
                 results["models"][n].get("precisions", {})]
        for k, (key, label) in enumerate(PEERS):
            xs, ys = [], []
            for i, name in enumerate(names):
                e = results["models"][name].get("precisions", {}).get(
                    precision, {})
                t = _peer(e, key)
                x = i + (k - (len(PEERS) - 1) / 2) * width
                if t:
                    xs.append(x)
                    ys.append(t[0])
                elif key == "cgc" and e:
                    st = e.get("cgc", {}).get("status", "")
                    ax.text(x, 1.2, {"FAILED": "FAILED"}.get(st, "n/a"),
                            rotation=90, ha="center", va="bottom",
                            fontsize=7, color=colors[0])
            if xs:
                ax.bar(xs, ys, width, label=label, color=colors[k])
        ax.set_yscale("log")
        ax.set_ylim(bottom=1)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20, ha="right")
        ax.set_ylabel("median latency, µs (log)")
        ax.set_title("cgc vs PyTorch, %s, %s, torch %s" % (
            precision, env.get("gpu", "?"), env.get("torch", "?")))
        ax.legend(fontsize=7, ncol=3)
        ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--md", required=True)
    parser.add_argument("--plot")
    parser.add_argument("--json", help="write the merged results here")
    parser.add_argument("--first-call",
                        help="bench/first_call.py's results to add as the "
                             "load and first-call section "
                             "(docs/first_call.json)")
    parser.add_argument("--torch-entry",
                        help="bench/torch_entry.py's results to add as the "
                             "PyTorch entry points' section "
                             "(docs/torch_entry.json)")
    args = parser.parse_args()
    many = []
    for path in args.results:
        with open(path) as f:
            many.append(json.load(f))
    results = merge(many) if len(many) > 1 else normalize(many[0])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    write_markdown(results, args.md, args.first_call, args.torch_entry)
    if args.plot:
        write_plot(results, args.plot)
    print(summary_table(results))


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    main()
