#!/usr/bin/env python3
"""A whole training step (forward, loss, backward, optimizer) as one cgc
package against PyTorch's step on the same model, weights and batch.

    # build machine: packages and batches for the trip to the GPU machine
    python3 bench/train_step.py build --model M.onnx --batches 1,32 --out DIR
    # GPU machine, in one process: loss curves and step latency
    python3 bench/train_step.py run --dir DIR --out OUT [--steps 10] [--iters 200]

`build` fixes the model's batch dim at each size (the ONNX model's first
input's first dim), compiles `cgc --train --loss=mse --optimizer=adamw:...`
to DIR/pkgs/NAME_bB and writes the batch (x, and a random regression
target as the label) to DIR/batches/NAME_bB. The ONNX files travel too:
`run` makes the PyTorch side from them (an evaluator of the ONNX graph in
torch ops, its float initializers as the parameters: what cgc trains).

`run` checks that cgc's loss curve follows PyTorch's (eager, fp32, TF32
off; the same AdamW), then times one step per call with CUDA events around
each call, median of `--iters`, for cgc (cgc.Model(pkg)(x, label)) and
PyTorch: eager (fused AdamW), torch.cuda.graph (the whole step captured,
capturable AdamW), torch.compile (default and reduce-overhead: the forward
and loss compiled, backward, the compiled optimizer step). Writes
OUT/train_step.json and OUT/train_step.md (ratios cgc / peer).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OPTIMIZER = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
             "weight_decay": 0.01}


def optimizer_flag():
    o = OPTIMIZER
    return "adamw:lr=%g,betas=%g/%g,eps=%g,weight_decay=%g" % (
        o["lr"], o["betas"][0], o["betas"][1], o["eps"], o["weight_decay"])


# -- build ------------------------------------------------------------------

def with_batch(model, batch):
    """The model with its first input's first dim fixed at `batch`; shapes
    inferred inside are dropped (cgc infers them again)."""
    import onnx
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = batch
    del m.graph.value_info[:]
    for out in m.graph.output:
        dims = out.type.tensor_type.shape.dim
        if dims:
            dims[0].dim_value = batch
    return m


def build(args):
    import onnx
    base = onnx.load(args.model)
    name = os.path.splitext(os.path.basename(args.model))[0]
    cgc = args.cgc or os.path.join(REPO, "build", "bin", "cgc")
    for sub in ("onnx", "pkgs", "batches"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    rng = np.random.default_rng(20261204)
    for batch in [int(b) for b in args.batches.split(",")]:
        tag = "%s_b%d" % (name, batch)
        path = os.path.join(args.out, "onnx", tag + ".onnx")
        onnx.save(with_batch(base, batch), path)
        pkg = os.path.join(args.out, "pkgs", tag)
        cmd = [cgc, path, "--train", "--loss=mse",
               "--optimizer=" + optimizer_flag(), "--emit=lib", "-o", pkg]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        meta = json.load(open(os.path.join(pkg, "metadata.json")))
        batch_dir = os.path.join(args.out, "batches", tag)
        os.makedirs(batch_dir, exist_ok=True)
        for io in meta["inputs"]:
            shape = tuple(io["shape"])
            np.save(os.path.join(batch_dir, io["name"] + ".npy"),
                    rng.standard_normal(shape).astype(np.float32))


# -- run: the PyTorch side --------------------------------------------------

class OnnxInTorch:
    """An ONNX graph evaluated with torch ops: `params` (the float
    initializers, trainable) and `constants` (the rest) by name. Ops outside
    the table are an error naming the node."""

    def __init__(self, model, torch, device):
        from onnx import numpy_helper
        self.torch = torch
        self.graph = model.graph
        self.params = torch.nn.ParameterDict()
        self.constants = {}
        self.names = {}
        for init in model.graph.initializer:
            value = torch.tensor(numpy_helper.to_array(init).copy(),
                                 device=device)
            if value.is_floating_point():
                key = "p%d" % len(self.names)
                self.names[init.name] = key
                self.params[key] = torch.nn.Parameter(value)
            else:
                self.constants[init.name] = value
        # Constant nodes made once, on the device (nothing is copied from
        # the host while a step is captured).
        for node in model.graph.node:
            if node.op_type == "Constant":
                value = self.attrs(node)["value"]
                self.constants[node.output[0]] = torch.tensor(
                    numpy_helper.to_array(value).copy(), device=device)
        self.device = device
        # Attributes read once: the evaluator runs plain Python over plain
        # values (no onnx calls in the step, which torch.compile traces).
        self.nodes = [(n.op_type, n.name, list(n.input), n.output[0],
                       self.attrs(n)) for n in model.graph.node
                      if n.op_type != "Constant"]
        self.input_names = [i.name for i in model.graph.input]
        self.output_names = [o.name for o in model.graph.output]

    def attrs(self, node):
        from onnx import helper
        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def __call__(self, *inputs):
        torch = self.torch
        F = torch.nn.functional
        env = dict(self.constants)
        for init_name, key in self.names.items():
            env[init_name] = self.params[key]
        for name, value in zip(self.input_names, inputs):
            env[name] = value
        for op, node_name, node_inputs, output, a in self.nodes:
            x = [env[i] if i else None for i in node_inputs]
            if op == "Identity":
                y = x[0]
            elif op == "Gemm":
                A = x[0].t() if a.get("transA", 0) else x[0]
                B = x[1].t() if a.get("transB", 0) else x[1]
                y = a.get("alpha", 1.0) * (A @ B)
                if len(x) > 2 and x[2] is not None:
                    y = y + a.get("beta", 1.0) * x[2]
            elif op == "MatMul":
                y = x[0] @ x[1]
            elif op in ("Add", "Sub", "Mul", "Div"):
                y = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul,
                     "Div": torch.div}[op](x[0], x[1])
            elif op in ("Erf", "Relu", "Tanh", "Sigmoid", "Exp", "Sqrt",
                        "Neg"):
                y = getattr(torch, op.lower())(x[0])
            elif op == "LayerNormalization":
                axis = a.get("axis", -1)
                shape = x[0].shape[axis:] if axis != -1 else x[0].shape[-1:]
                y = F.layer_norm(x[0], shape, x[1],
                                 x[2] if len(x) > 2 else None,
                                 a.get("epsilon", 1e-5))
            elif op == "Softmax":
                y = torch.softmax(x[0], a.get("axis", -1))
            else:
                raise NotImplementedError(
                    "node '%s' (%s): no torch form in bench/train_step.py"
                    % (node_name, op))
            env[output] = y
        outs = [env[o] for o in self.output_names]
        return outs[0] if len(outs) == 1 else tuple(outs)


def cuda_time(torch, fn, iters, warmup=20):
    """Median and mean microseconds of fn() with CUDA events around each
    call (what the peers and cgc's Python call are timed with)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        start[i].record()
        fn()
        stop[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(start, stop))
    return times[len(times) // 2], sum(times) / len(times)


peers_peak = {}


def torch_peers(torch, model_path, x, label, args):
    """{peer: step function} for PyTorch, each on its own copy of the
    weights (a fresh evaluator)."""
    import onnx
    model = onnx.load(model_path)
    F = torch.nn.functional
    peers = {}

    def fresh(**adamw):
        f = OnnxInTorch(model, torch, "cuda")
        opt = torch.optim.AdamW(f.params.values(), lr=OPTIMIZER["lr"],
                                betas=OPTIMIZER["betas"],
                                eps=OPTIMIZER["eps"],
                                weight_decay=OPTIMIZER["weight_decay"],
                                **adamw)
        return f, opt

    f, opt = fresh(fused=True)

    def eager():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(f(x), label)
        loss.backward()
        opt.step()
        return loss
    peers["eager"] = eager

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    g, gopt = fresh(fused=True, capturable=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            gopt.zero_grad(set_to_none=True)
            F.mse_loss(g(x), label).backward()
            gopt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    gopt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = F.mse_loss(g(x), label)
        static_loss.backward()
        gopt.step()

    graph.replay()
    torch.cuda.synchronize()
    # What the captured recipe holds: weights, gradients, optimizer state,
    # activations and the graph's pool (against cgc's one arena).
    peers_peak["cuda_graph"] = torch.cuda.max_memory_allocated() - base

    def cuda_graph():
        graph.replay()
        return static_loss
    peers["cuda_graph"] = cuda_graph

    for mode in args.compile_modes.split(","):
        if not mode:
            continue
        c, copt = fresh(fused=False, foreach=True)
        loss_fn = torch.compile(lambda xx, yy: F.mse_loss(c(xx), yy),
                                mode=None if mode == "default" else mode)
        opt_step = torch.compile(copt.step)

        def compiled(loss_fn=loss_fn, copt=copt, opt_step=opt_step):
            copt.zero_grad(set_to_none=True)
            loss = loss_fn(x, label)
            loss.backward()
            opt_step()
            return loss
        peers["compile_" + mode] = compiled
    return peers


def loss_curve_torch(torch, model_path, x, label, steps):
    import onnx
    F = torch.nn.functional
    f = OnnxInTorch(onnx.load(model_path), torch, "cuda")
    opt = torch.optim.AdamW(f.params.values(), lr=OPTIMIZER["lr"],
                            betas=OPTIMIZER["betas"], eps=OPTIMIZER["eps"],
                            weight_decay=OPTIMIZER["weight_decay"],
                            foreach=False)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(f(x), label)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def run(args):
    import torch
    sys.path.insert(0, os.path.join(REPO, "python"))
    import cgc
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%d"), "optimizer": OPTIMIZER,
               "command": " ".join(sys.argv), "models": {}}
    pkgs = sorted(os.listdir(os.path.join(args.dir, "pkgs")))
    for tag in pkgs:
        pkg = os.path.join(args.dir, "pkgs", tag)
        model_path = os.path.join(args.dir, "onnx", tag + ".onnx")
        batch_dir = os.path.join(args.dir, "batches", tag)
        m = cgc.Model(pkg)
        names = [t.name for t in m.inputs]
        xs = [np.load(os.path.join(batch_dir, n + ".npy")) for n in names]
        x, label = [torch.tensor(a, device="cuda") for a in xs]
        entry = {"inputs": {n: list(a.shape) for n, a in zip(names, xs)}}
        # Loss curves: cgc (numpy in, numpy out) and torch eager.
        cgc_losses = [float(m(*xs)) for _ in range(args.steps)]
        ref = loss_curve_torch(torch, model_path, x, label, args.steps)
        rel = max(abs(a - b) / max(abs(b), 1e-30)
                  for a, b in zip(cgc_losses, ref))
        entry.update({"cgc_losses": cgc_losses, "torch_losses": ref,
                      "max_rel_loss_diff": rel})
        print("%s: loss max rel diff %.3g over %d steps (cgc %s, torch %s)"
              % (tag, rel, args.steps, cgc_losses[:3], ref[:3]), flush=True)
        # Latency of one step per call.
        m.reset_state()
        times = {"cgc": cuda_time(torch, lambda: m(x, label), args.iters)}
        print("  call path: %s" % getattr(m, "call_path", "?"), flush=True)
        for peer, fn in torch_peers(torch, model_path, x, label,
                                    args).items():
            t0 = time.time()
            times[peer] = cuda_time(torch, fn, args.iters)
            print("  %-22s median %8.1f us (%.0f s)" % (
                peer, times[peer][0], time.time() - t0), flush=True)
        print("  %-22s median %8.1f us" % ("cgc", times["cgc"][0]))
        entry["median_us"] = {k: v[0] for k, v in times.items()}
        meta = json.load(open(os.path.join(pkg, "metadata.json")))
        entry["cgc_arena_bytes"] = meta["arena_bytes"]
        entry["cgc_kernels"] = meta["model_kernels"]
        entry["torch_cuda_graph_peak_bytes"] = peers_peak.get("cuda_graph")
        entry["mean_us"] = {k: v[1] for k, v in times.items()}
        results["models"][tag] = entry
        m.close()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "train_step.json"), "w") as f:
        json.dump(results, f, indent=2)
    with open(os.path.join(args.out, "train_step.md"), "w") as f:
        f.write(render(results))
    print(render(results))


def render(results):
    lines = ["%s, torch %s, %s; AdamW %s; `%s`" % (
        results["gpu"], results["torch"], results["date"],
        results["optimizer"], results["command"]), ""]
    peers = None
    for tag, e in results["models"].items():
        if peers is None:
            peers = [p for p in e["median_us"] if p != "cgc"]
            lines += ["| model | loss rel. diff | cgc kernels | cgc arena MB | "
                      "torch.cuda.graph peak MB | cgc us | " +
                      " | ".join("%s us (cgc/it)" % p for p in peers) + " |",
                      "|---" * (6 + len(peers)) + "|"]
        cgc_us = e["median_us"]["cgc"]
        peak = e.get("torch_cuda_graph_peak_bytes") or 0
        lines.append("| %s | %.2g | %d | %.1f | %.1f | %.1f | %s |" % (
            tag, e["max_rel_loss_diff"], e.get("cgc_kernels", 0),
            e.get("cgc_arena_bytes", 0) / 2**20, peak / 2**20, cgc_us,
            " | ".join(
                "%.1f (%.2fx)" % (e["median_us"][p], cgc_us / e["median_us"][p])
                for p in peers)))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--model", required=True)
    b.add_argument("--batches", default="1,32")
    b.add_argument("--out", required=True)
    b.add_argument("--cgc")
    r = sub.add_parser("run")
    r.add_argument("--dir", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--steps", type=int, default=10)
    r.add_argument("--iters", type=int, default=200)
    r.add_argument("--compile-modes", default="default,reduce-overhead")
    args = parser.parse_args()
    build(args) if args.command == "build" else run(args)


if __name__ == "__main__":
    main()
