"""100-step loss curves of public model code (issue 16): cgc's training
packages against PyTorch on the same GPU, from the same weights and the
same batches, in fp32 (TF32 off on torch's side).

The models are utils/train/export_public_models.py's (torchvision's
ResNet-18, transformers' GPT-2 and BERT), made again here with the same
seeds; cgc's packages were compiled from their ONNX exports with
`cgc --train --loss=cross_entropy --optimizer=...` (SGD lr 0.01 momentum
0.9; AdamW lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.01), and
torch trains the module itself with torch.optim and
F.cross_entropy. Checked per package: every torch parameter is a state
tensor of the package with the same initial value, and the two loss
curves' largest relative difference over the steps; reported too: the
relative L2 difference of all parameters after the last step, and the
step's latency (CUDA events around each call, median of 50) of cgc's
train_step, torch eager and the whole torch step captured in one
torch.cuda.graph. The module's float buffers (BatchNorm's running
statistics, updated by both sides) against the package's state after the
first step (same weights on both sides) and after the last.

Packages named NAME_bB.OPTIMIZER (export_public_models.py --speed-batches)
are the speed rows: B sequences a step, `--speed-steps` steps of curve, and
torch.compile of the step timed too (default and reduce-overhead: the
forward and loss compiled, backward, the compiled optimizer step), with
the captured recipe's peak allocated memory against cgc's arena.

Usage: public_curves.py --packages DIR [--steps 100] [--speed-steps 10]
                        [--only NAME,...] --out FILE.json
  (DIR holds NAME.OPTIMIZER package folders, e.g. resnet18.sgd, gpt2_b8.adamw)
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import export_public_models as pub  # noqa: E402
import cgc  # noqa: E402

F = torch.nn.functional
# The peers' attention: transformers' eager attention builds its masks
# from host scalars (torch.tensor(0.0, device=...)), a copy that
# torch.cuda.graph cannot capture; "sdpa" computes the same function with
# PyTorch's fused attention and captures. cgc's packages come from the
# "eager" export; both start from the same weights.
PEER_ATTENTION = "sdpa"
# torch.compile's modes timed for the speed rows (--compile-modes).
COMPILE_MODES = ["default", "reduce-overhead"]


def optimizer(kind, params, capturable=False, foreach=False, lr=None):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr or 0.01, momentum=0.9)
    return torch.optim.AdamW(params, lr=lr or 1e-3, betas=(0.9, 0.999),
                             eps=1e-8,
                             weight_decay=0.01, foreach=foreach,
                             capturable=capturable)


def split_name(name):
    """'gpt2_b8' -> ('gpt2', 8); 'gpt2' -> ('gpt2', the curves' batch)."""
    base, _, batch = name.partition("_b")
    if batch:
        return base, int(batch)
    return base, pub.BATCH_IMAGES if base == "resnet18" else pub.BATCH_TOKENS


def batches(name, steps, seed=0, device="cuda"):
    base, batch = split_name(name)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if base == "resnet18":
            x = rng.standard_normal((batch, 3, 64, 64), dtype=np.float32)
            label = rng.integers(0, 10, (batch,))
        else:
            x = rng.integers(0, pub.VOCAB, (batch, pub.TOKENS))
            classes = pub.VOCAB if base == "gpt2" else 4
            rows = batch * (pub.TOKENS if base == "gpt2" else 1)
            label = rng.integers(0, classes, (rows,))
        yield (torch.from_numpy(x).to(device),
               torch.from_numpy(label.astype(np.int64)).to(device))


def cuda_ms(fn, iters=50, warmup=10):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start, end = (torch.cuda.Event(enable_timing=True),
                      torch.cuda.Event(enable_timing=True))
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def torch_step(model, opt, x, label):
    opt.zero_grad(set_to_none=False)
    loss = F.cross_entropy(model(x), label)
    loss.backward()
    opt.step()
    return loss


def captured_step(name, kind, x, label):
    """The recipe cgc descends from: warm up on a side stream, capture
    forward + backward + optimizer.step() in one graph, replay. Returns the
    replay and the peak bytes allocated for it (weights, gradients, state,
    activations and the graph's pool: what cgc's one arena holds)."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    model = pub.make_model(split_name(name)[0], PEER_ATTENTION).cuda().train()
    opt = optimizer(kind, model.parameters(), capturable=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch_step(model, opt, x, label)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch_step(model, opt, x, label)
    graph.replay()
    torch.cuda.synchronize()
    return graph.replay, torch.cuda.max_memory_allocated() - base


def float64_curve(name, kind, steps):
    """torch's own curve in float64 on the same batches: how far float32
    rounding alone moves the curve (the torch float32 curve against this
    one) says how well conditioned the run is; a run that amplifies
    rounding cannot hold any two float32 implementations together."""
    model = pub.make_model(split_name(name)[0]).cuda().double().train()
    opt = optimizer(kind, model.parameters())
    losses = []
    for x, label in batches(name, steps):
        if x.is_floating_point():
            x = x.double()
        losses.append(torch_step(model, opt, x, label).item())
    return losses


def compiled_step(name, kind, x, label, mode):
    """torch.compile of the step: the forward and loss compiled, backward,
    the compiled optimizer step (PyTorch's recipe for compiled training)."""
    model = pub.make_model(split_name(name)[0], PEER_ATTENTION).cuda().train()
    opt = optimizer(kind, model.parameters(), foreach=True)
    loss_fn = torch.compile(lambda xx, yy: F.cross_entropy(model(xx), yy),
                            mode=None if mode == "default" else mode)
    opt_step = torch.compile(opt.step)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, label)
        loss.backward()
        opt_step()
        return loss
    return step


def check(name, kind, folder, steps):
    model = pub.make_model(split_name(name)[0]).cuda().train()
    m = cgc.Model(folder)
    state = {t.name for t in m.state}
    params = dict(model.named_parameters())
    missing = sorted(n for n in params if n not in state)
    init_diff = max((float(np.abs(m.read_state(n) -
                                  p.detach().cpu().numpy()).max())
                     for n, p in params.items() if n in state), default=0.0)
    # The TorchScript export traces the module in training mode, so its
    # running statistics (the initializers) are the buffers after the
    # tracing forward, not a fresh module's: both sides start from the
    # package's.
    with torch.no_grad():
        for n, b in model.named_buffers():
            if n in state and b.is_floating_point():
                b.copy_(torch.from_numpy(m.read_state(n)))
    opt = optimizer(kind, model.parameters())
    ours, theirs, buffers_first = [], [], None
    for x, label in batches(name, steps):
        theirs.append(torch_step(model, opt, x, label).item())
        ours.append(float(m.train_step(x, label)))
        if buffers_first is None:
            buffers_first = buffer_diff(model, m)
    rel = [abs(a - b) / max(abs(b), 1e-30) for a, b in zip(ours, theirs)]
    exact = float64_curve(name, kind, steps)
    torch_vs_float64 = max(abs(a - b) / max(abs(b), 1e-30)
                           for a, b in zip(theirs, exact))
    cgc_vs_float64 = max(abs(a - b) / max(abs(b), 1e-30)
                         for a, b in zip(ours, exact))
    buffers_last = buffer_diff(model, m)
    num = sum(float(np.sum((m.read_state(n) - p.detach().cpu().numpy()) ** 2))
              for n, p in params.items() if n in state)
    den = sum(float(np.sum(p.detach().cpu().numpy() ** 2))
              for n, p in params.items() if n in state)
    x, label = next(batches(name, 1, seed=1))
    timing = {"cgc_us": 1e3 * cuda_ms(lambda: m.train_step(x, label)),
              "eager_us": 1e3 * cuda_ms(lambda: torch_step(model, opt, x,
                                                           label))}
    try:
        replay, peak = captured_step(name, kind, x, label)
        timing["cuda_graph_us"] = 1e3 * cuda_ms(replay)
        timing["cuda_graph_peak_bytes"] = peak
    except Exception as e:  # reported, not hidden
        timing["cuda_graph_error"] = "%s: %s" % (type(e).__name__, e)
    if "_b" in name:
        for mode in COMPILE_MODES:
            try:
                timing["compile_%s_us" % mode] = 1e3 * cuda_ms(
                    compiled_step(name, kind, x, label, mode))
            except Exception as e:  # reported, not hidden
                timing["compile_%s_error" % mode] = "%s: %s" % (
                    type(e).__name__, e)
    meta = json.load(open(os.path.join(folder, "metadata.json")))
    timing["cgc_arena_bytes"] = meta["arena_bytes"]
    timing["cgc_kernels"] = meta["model_kernels"]
    m.close()
    return {"model": name, "optimizer": kind, "steps": steps,
            "missing_parameters": missing, "init_max_abs_diff": init_diff,
            "max_rel_loss_diff": max(rel),
            "torch_float32_vs_float64_max_rel": torch_vs_float64,
            "cgc_vs_torch_float64_max_rel": cgc_vs_float64,
            "torch_float64_losses": exact, "final_weights_rel_l2":
            (num / den) ** 0.5, "cgc_losses": ours, "torch_losses": theirs,
            "buffers_after_first_step": buffers_first,
            "buffers_after_last_step": buffers_last, **timing}


def buffer_diff(model, m):
    """The module's float buffers (BatchNorm's running statistics) against
    the package's state of the same names: how many there are, how many
    the package lacks, and the largest relative difference (max abs over
    max abs of torch's) among them."""
    state = {t.name for t in m.state}
    found = {n: b for n, b in model.named_buffers()
             if b.is_floating_point()}
    worst = 0.0
    for n, b in found.items():
        if n in state:
            want = b.detach().cpu().numpy()
            worst = max(worst, float(np.abs(m.read_state(n) - want).max() /
                                     max(np.abs(want).max(), 1e-30)))
    return {"count": len(found),
            "missing": sorted(n for n in found if n not in state),
            "max_rel_diff": worst}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--packages", required=True)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--speed-steps", type=int, default=10)
    p.add_argument("--compile-modes", default=",".join(COMPILE_MODES))
    p.add_argument("--only", default="")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    COMPILE_MODES[:] = [m for m in args.compile_modes.split(",") if m]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    results = []
    # The curves first, the speed rows (torch.compile's compile times)
    # after them.
    for entry in sorted(os.listdir(args.packages),
                        key=lambda e: ("_b" in e, e)):
        name, _, kind = entry.partition(".")
        if kind not in ("sgd", "adamw") or (args.only and
                                            name not in args.only.split(",")):
            continue
        steps = args.speed_steps if "_b" in name else args.steps
        r = check(name, kind, os.path.join(args.packages, entry), steps)
        results.append(r)
        print("%-9s %-5s missing %d, init diff %.2g, losses %.4f -> %.4f "
              "(torch %.4f -> %.4f), max rel diff %.2e (torch fp32 vs fp64 "
              "%.2e, cgc vs fp64 %.2e), final weights rel "
              "L2 %.2e; step us: cgc %.0f, eager %.0f, cuda graph %s" % (
                  name, kind, len(r["missing_parameters"]),
                  r["init_max_abs_diff"], r["cgc_losses"][0],
                  r["cgc_losses"][-1], r["torch_losses"][0],
                  r["torch_losses"][-1], r["max_rel_loss_diff"],
                  r["torch_float32_vs_float64_max_rel"],
                  r["cgc_vs_torch_float64_max_rel"],
                  r["final_weights_rel_l2"], r["cgc_us"], r["eager_us"],
                  "%.0f" % r["cuda_graph_us"] if "cuda_graph_us" in r
                  else r.get("cuda_graph_error")), flush=True)
        if r["buffers_after_first_step"]["count"]:
            print("          buffers (%d, %d missing): max rel diff %.2e after "
                  "the first step, %.2e after the last" % (
                      r["buffers_after_first_step"]["count"],
                      len(r["buffers_after_first_step"]["missing"]),
                      r["buffers_after_first_step"]["max_rel_diff"],
                      r["buffers_after_last_step"]["max_rel_diff"]),
                  flush=True)
        for key in sorted(k for k in r if k.startswith("compile_")):
            print("          %s %s" % (key, r[key]), flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
