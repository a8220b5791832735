"""cgc's Python call against its C runtime, per package, in one process
(GPU machine): libcgrt's own benchmark loop (Model.benchmark: CUDA events
around the copy of the device input into its slot + the graph launches),
then `model(*xs)` on torch CUDA tensors timed as bench/run.py times the
PyTorch peers (CUDA events around each call, fresh outputs each call), and
the host time of a call (until it returns; the run is enqueued on torch's
current stream), and where that host time goes: torch.empty, the runtime's
enqueue alone, and cuGraphLaunch alone on a graph of the same kernels.
bench/run.py measures the same for the bench models ("Python call" in
docs/benchmarks.md); this is the quick form for any packages.

    python3 bench/python_call.py PKG_DIR... [--json FILE]
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))

import run as bench_run  # noqa: E402  (bench/run.py: the peers' timing)


def sample_inputs(torch, model):
    """Device inputs of the package's shapes: normal floats, zero ids."""
    g = torch.Generator(device="cuda").manual_seed(0)
    xs = []
    for t in model.inputs:
        dt = t.torch_dtype
        if dt.is_floating_point:
            xs.append(torch.randn(*t.shape, device="cuda", generator=g)
                      .to(dt))
        else:
            xs.append(torch.zeros(*t.shape, device="cuda", dtype=dt))
    return xs


def c_async_call(torch, model, xs, outs, other_outs=None):
    """cgrt_model_run_async alone (through ctypes, descriptors made once,
    fixed buffers): the runtime's and the driver's share of a call. With
    other_outs, calls alternate between the two sets of outputs, as
    model(x) does when the caller keeps the last result while it calls
    again (the pool's two sets): each call rebinds the kernels that write
    the outputs."""
    import ctypes
    from cgc import _runtime as rt

    def tensors(values, infos):
        arr = (rt._Tensor * len(values))()
        for t, v, info in zip(arr, values, infos):
            t.data = v.data_ptr()
            t.bytes = v.numel() * v.element_size()
            t.dtype = rt._CODES[info.dtype]
            t.rank = v.dim()
            for k, d in enumerate(v.shape):
                t.dims[k] = d
            t.memory = rt.MEMORY_DEVICE
        return arr
    ins = tensors(xs, model.inputs)
    sets = [tensors(outs, model.outputs)]
    if other_outs is not None:
        sets.append(tensors(other_outs, model.outputs))
    lib, handle = model._lib, model._handle
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    n_in, n_out = len(xs), len(outs)
    turn = [0]

    def call():
        outs_c = sets[turn[0] % len(sets)]
        turn[0] += 1
        status = lib.cgrt_model_run_async(handle, ins, n_in, outs_c, n_out,
                                          stream)
        if status:
            rt._check(lib, status)
    return call


def graph_launch_alone(torch, model, xs, outs):
    """cuGraphLaunch alone (ctypes into libcuda) of a graph holding this
    model's run: model(*xs, out=) captured in a torch.cuda.graph, cgc's
    graphs its child graphs. What launching these kernels as one graph
    costs any caller on this machine, the floor of a call's host time."""
    import ctypes
    out = outs[0] if len(outs) == 1 else outs
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model(*xs, out=out)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(*xs, out=out)
    graph_exec = ctypes.c_void_p(g.raw_cuda_graph_exec())
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    launch = ctypes.CDLL("libcuda.so.1").cuGraphLaunch
    launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

    def call():
        result = launch(graph_exec, stream)
        if result != 0:
            raise RuntimeError("cuGraphLaunch failed (%d)" % result)
    call.graph = g  # alive as long as the launcher
    return call


def driver_calls_alone(torch):
    """The host time of each driver call cgrt_model_run_async makes besides
    the launch (ctypes into libcuda, torch's current stream): where the
    runtime's own share of a call goes."""
    import ctypes
    cuda = ctypes.CDLL("libcuda.so.1")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    status, ctx = ctypes.c_int(), ctypes.c_void_p()
    event = ctypes.c_void_p()
    if cuda.cuEventCreate(ctypes.byref(event), 2) != 0:  # DISABLE_TIMING
        raise RuntimeError("cuEventCreate failed")
    calls = {
        "cuCtxGetCurrent": lambda: cuda.cuCtxGetCurrent(ctypes.byref(ctx)),
        "cuStreamIsCapturing": lambda: cuda.cuStreamIsCapturing(
            stream, ctypes.byref(status)),
        "cuEventRecord": lambda: cuda.cuEventRecord(event, stream),
        "ctypes call alone": lambda: cuda.cuDriverGetVersion(
            ctypes.byref(status)),
    }
    return {name: bench_run.host_time(torch, fn, 300)["median_us"]
            for name, fn in calls.items()}


def python_pieces(torch, model, xs, iters):
    """The host time of each Python-level step of the native call path
    (lib/Bindings/Python/NativeRunner.cpp), each alone, timed as a call is:
    where `model(x)`'s share above cgrt_model_run_async goes."""
    x = xs[0]
    runner = model._runner
    raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    use_count = getattr(torch._C, "_storage_Use_Count", None)
    capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None)
    storage = x.untyped_storage()._cdata
    pieces = {
        "x.dtype": lambda: x.dtype,
        "x.get_device()": lambda: x.get_device(),
        "x.is_contiguous()": lambda: x.is_contiguous(),
        "x.shape": lambda: x.shape,
        "x.data_ptr()": lambda: x.data_ptr(),
        "x.detach()": lambda: x.detach(),
        "current raw stream": (lambda: raw_stream(0)) if raw_stream else None,
        "is capturing": capturing,
        "storage use count": (lambda: use_count(storage)) if use_count
        else None,
        "runner(xs, None)": (lambda: runner(tuple(xs), None)) if runner
        else None,
        "model(*xs)": lambda: model(*xs),
        "empty Python call": lambda: None,
    }
    return {name: bench_run.host_time(torch, fn, iters)["median_us"]
            for name, fn in pieces.items() if fn is not None}


def measure(torch, cgc, folder, args):
    model = cgc.load(folder)
    try:
        xs = sample_inputs(torch, model)
        model(*xs)
        torch.cuda.synchronize()
        estimate = model.benchmark(5, 10, inputs=list(xs)).median_us
        iters = bench_run.iterations_for(estimate, args)
        rounds = []
        for k in range(args.rounds):
            b = model.benchmark(args.warmup if k == 0 else 0, iters)
            rounds.append({"median_us": b.median_us, "p99_us": b.p99_us,
                           "mean_us": b.mean_us, "iterations": b.iterations})
        result = {"package": os.path.basename(os.path.normpath(folder)),
                  "c_runtime": bench_run.best_round(rounds)}
        result.update(bench_run.python_call(torch, model, xs, args))
        result["ratio"] = (result["python_call"]["median_us"]
                           / result["c_runtime"]["median_us"])
        # Where the host time goes: the outputs' allocation alone, and a
        # call into preallocated outputs (fixed addresses: no rebinding).
        outs = [torch.empty(*t.shape, dtype=t.torch_dtype, device="cuda")
                for t in model.outputs]
        out = outs[0] if len(outs) == 1 else outs
        result["host_torch_empty"] = bench_run.host_time(
            torch, lambda: [torch.empty(*t.shape, dtype=t.torch_dtype,
                                        device="cuda")
                            for t in model.outputs], args.host_iters)
        result["host_out"] = bench_run.host_time(torch, lambda: model(*xs, out=out),
                                     args.host_iters)
        result["python_call_out"] = bench_run.time_events(
            torch, lambda: model(*xs, out=outs[0] if len(outs) == 1
                                 else outs), args)
        result["host_c_async"] = bench_run.host_time(
            torch, c_async_call(torch, model, xs, outs), args.host_iters)
        others = [torch.empty_like(o) for o in outs]
        result["host_c_async_alternating"] = bench_run.host_time(
            torch, c_async_call(torch, model, xs, outs, others),
            args.host_iters)
        result["host_graph_launch"] = bench_run.host_time(
            torch, graph_launch_alone(torch, model, xs, outs),
            args.host_iters)
        result["python_pieces_us"] = python_pieces(torch, model, xs,
                                                   args.host_iters)
        return result
    finally:
        model.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.
                                     RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="+")
    parser.add_argument("--json")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--iters", type=int, default=5000)
    parser.add_argument("--min-iters", type=int, default=200)
    parser.add_argument("--round-seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--host-iters", type=int, default=500)
    args = parser.parse_args()
    import torch
    import cgc
    bench_run.warm_gpu(torch)
    results = []
    print("| package | call path | C runtime us | model(x) us | ratio | "
          "host us | model(x, out=) us | its host us | torch.empty host us | "
          "cgrt_model_run_async host us | the same, two output sets in turn | "
          "cuGraphLaunch alone host us |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
          "---: | ---: | ---: |")
    for folder in args.packages:
        r = measure(torch, cgc, folder, args)
        results.append(r)
        print("| %s | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.1f | %.1f "
              "| %.1f | %.1f | %.1f |"
              % (r["package"], r["call_path"], r["c_runtime"]["median_us"],
                 r["python_call"]["median_us"], r["ratio"],
                 r["python_host"]["median_us"],
                 r["python_call_out"]["median_us"],
                 r["host_out"]["median_us"],
                 r["host_torch_empty"]["median_us"],
                 r["host_c_async"]["median_us"],
                 r["host_c_async_alternating"]["median_us"],
                 r["host_graph_launch"]["median_us"]), flush=True)
        print("  python pieces (host us): " + ", ".join(
            "%s %.2f" % item for item in r["python_pieces_us"].items()),
            flush=True)
    driver = driver_calls_alone(torch)
    print("driver calls alone (host us, through ctypes): " + ", ".join(
        "%s %.2f" % item for item in driver.items()), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "results": results,
                       "driver_calls_us": driver}, f, indent=1)


if __name__ == "__main__":
    main()
