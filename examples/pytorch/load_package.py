#!/usr/bin/env python3
"""From PyTorch, way 1: a cgc package called like a torch op. Compiles
examples/tiny_mlp/model.onnx (or takes --package), loads it, and calls it
on torch CUDA tensors: asynchronously on torch's current stream, into a
preallocated output (out=), and inside a torch.cuda.graph capture, where
cgc's graphs become child graphs of the captured one. Every result is
compared with onnxruntime on the CPU.

    python3 examples/pytorch/load_package.py [--package pkg]

Exit status 0, 1 if a result disagrees, 2 on an error.
"""

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "tiny_mlp" / "model.onnx"

try:
    import cgc
except ImportError:  # not installed: use the source tree's package
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    import cgc

import numpy as np
import torch


def reference(x):
    import onnxruntime
    session = onnxruntime.InferenceSession(
        str(MODEL), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x.cpu().numpy()})[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        package = args.package
        if not package or not (Path(package) / "libmodel.so").is_file():
            package = cgc.compile(MODEL, package or Path(tmp) / "pkg",
                                  progress=False)
        model = cgc.load(package)
        print("call path:", model.call_path)
        x = torch.randn(1, 64, device="cuda")
        ok = True

        def check(what, got, x):
            nonlocal ok
            err = float(np.abs(got.cpu().numpy() - reference(x)).max())
            print("%-32s max abs diff vs onnxruntime %.2e" % (what, err))
            ok &= err < 1e-4

        y = model(x)                    # enqueued on the current stream
        check("model(x)", y, x)
        out = torch.empty(1, 64, device="cuda")
        model(x * 2, out=out)           # into a preallocated output
        check("model(2x, out=out)", out, x * 2)
        static_x = x.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model(static_x)             # warm-up off the default stream
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = torch.tanh(model(static_x))
        static_x.copy_(torch.randn(1, 64, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        err = float(np.abs(static_y.cpu().numpy()
                           - np.tanh(reference(static_x))).max())
        print("%-32s max abs diff vs onnxruntime %.2e" % (
            "tanh(model(x)) in a CUDA graph", err))
        ok &= err < 1e-4
        model.close()
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except cgc.Error as e:
        print("error:", e, file=sys.stderr)
        sys.exit(2)
