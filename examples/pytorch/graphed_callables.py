#!/usr/bin/env python3
"""From PyTorch, way 2: cgc.make_graphed_callables. A small convolutional
classifier is exported with torch's ONNX exporter, compiled by cgc (or
found in the package cache, CGC_CACHE_DIR), and run as an nn.Module; its
outputs are compared with eager PyTorch and both are timed with CUDA
events, beside a hand-captured torch.cuda.graph.

    python3 examples/pytorch/graphed_callables.py
    python3 examples/pytorch/graphed_callables.py --compile-only  # no GPU: fill the cache

Exit status 0, 1 if cgc and eager disagree, 2 on an error.
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
try:
    import cgc
except ImportError:  # not installed: use the source tree's package
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    import cgc

import torch


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(32, 10)).eval()


def sample(device):
    return torch.randn(2, 3, 32, 32, generator=torch.Generator()
                       .manual_seed(1)).to(device)


def median_us(fn, iters=200):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compile-only", action="store_true")
    args = parser.parse_args()
    if args.compile_only:
        path = cgc.make_graphed_callables(make_model(), (sample("cpu"),),
                                          compile_only=True)
        print("package:", path)
        return 0
    model = make_model().cuda()
    x = sample("cuda")
    graphed = cgc.make_graphed_callables(model, (x,))
    print(graphed)
    with torch.no_grad():
        y, ref = graphed(x), model(x)
        err = float((y - ref).norm() / ref.norm())
        print("rel. L2 vs eager: %.2e" % err)
        static_x = x.clone()
        g = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model(static_x)
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(g):
            model(static_x)
        for _ in range(20):
            graphed(x), model(x), g.replay()
        print("latency (CUDA events, median): cgc %.1f us, eager %.1f us, "
              "torch.cuda.graph %.1f us" % (
                  median_us(lambda: graphed(x)), median_us(lambda: model(x)),
                  median_us(lambda: (static_x.copy_(x), g.replay()))))
    return 0 if err < 1e-5 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except cgc.Error as e:
        print("error:", e, file=sys.stderr)
        sys.exit(2)
