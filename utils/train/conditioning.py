"""How well conditioned a public model's training run is, in PyTorch
alone: the same 100 steps (utils/train/public_curves.py's seeded model
and batches) in float32 and in float64, per optimizer and learning rate;
the largest relative difference of the two loss curves is what float32
rounding alone does to the run. Where it is large, no two float32
implementations (cgc's and PyTorch's, or PyTorch's on two GPUs) can agree
closely either; the curves to compare are those where it is small.

Usage: conditioning.py MODEL sgd:LR,LR... adamw:LR,... [--steps 100] [--out F]
                       [--device cuda|cpu]
"""
import argparse
import json

import torch

import public_curves as pc


def curve(name, kind, lr, steps, dtype, device):
    model = pc.pub.make_model(pc.split_name(name)[0]).to(device, dtype)
    model.train()
    opt = pc.optimizer(kind, model.parameters(), lr=lr)
    losses = []
    for x, label in pc.batches(name, steps, device=device):
        if x.is_floating_point():
            x = x.to(dtype)
        losses.append(pc.torch_step(model, opt, x, label).item())
    return losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("runs", nargs="+")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--out", default="conditioning.json")
    p.add_argument("--device", default="cuda",
                   help="cuda, or cpu (any PyTorch with torchvision)")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    results = []
    for run in args.runs:
        kind, _, lrs = run.partition(":")
        for lr in [float(v) for v in lrs.split(",")]:
            f32 = curve(args.model, kind, lr, args.steps, torch.float32,
                        args.device)
            f64 = curve(args.model, kind, lr, args.steps, torch.float64,
                        args.device)
            rel = [abs(a - b) / abs(b) for a, b in zip(f32, f64)]
            first = next((k for k, r in enumerate(rel) if r > 1e-4), None)
            results.append({"model": args.model, "optimizer": kind, "lr": lr,
                            "device": args.device,
                            "max_rel": max(rel), "first_step_over_1e-4": first,
                            "float32": f32, "float64": f64})
            print("%s %-5s lr %-7g losses %.4f -> %.4f, float32 vs float64 "
                  "max rel %.2e (first step over 1e-4: %s)" % (
                      args.model, kind, lr, f64[0], f64[-1], max(rel), first),
                  flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
