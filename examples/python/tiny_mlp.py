#!/usr/bin/env python3
"""The Python example: compile examples/tiny_mlp/model.onnx with cgc, load
the package on the GPU, run it on a numpy array (and on a torch CUDA tensor
where torch has CUDA), and compare with onnxruntime.

    python3 examples/python/tiny_mlp.py                 # compile into a temp dir
    python3 examples/python/tiny_mlp.py --package pkg   # use (or write) pkg
    python3 examples/python/tiny_mlp.py --compile-only  # no GPU needed

x[i] = sin(0.37 i); it prints the first outputs and their sum as the C and
C++ examples do. Exit status 0, 1 if onnxruntime disagrees, 2 on an error.
"""

import argparse
import math
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", help="package folder (compiled if it "
                        "has no libmodel.so)")
    parser.add_argument("--compile-only", action="store_true")
    args = parser.parse_args()

    tmp = None
    if args.package and (Path(args.package) / "libmodel.so").is_file():
        pkg = Path(args.package)
    else:
        if not args.package:
            tmp = tempfile.TemporaryDirectory(prefix="cgc-example-")
        out = Path(args.package or Path(tmp.name) / "tiny_mlp")
        try:
            pkg = cgc.compile(MODEL, out)  # progress on stderr
        except cgc.CompileError as e:
            print("tiny_mlp.py: %s" % e, file=sys.stderr)
            return 2
    info = cgc.package_info(pkg)
    print("package %s: inputs %s, outputs %s, %d kernels" % (
        pkg.name, [(t.name, t.shape) for t in info["inputs"]],
        [(t.name, t.shape) for t in info["outputs"]], info["kernels"]))
    if args.compile_only:
        return 0

    x = np.array([math.sin(0.37 * i) for i in range(64)],
                 np.float32).reshape(1, 64)
    try:
        model = cgc.load(pkg)
    except cgc.RuntimeError as e:  # e.g. NoDeviceError without a GPU
        print("tiny_mlp.py: %s: %s" % (type(e).__name__, e.message),
              file=sys.stderr)
        return 2
    with model:
        y = model(x)
        print("y[0:4] = %.6f %.6f %.6f %.6f" % tuple(y[0, :4]))
        print("sum(y) = %.6f" % sum(float(v) for v in y.ravel()))
        status = 0
        try:
            import onnxruntime
            session = onnxruntime.InferenceSession(
                str(MODEL), providers=["CPUExecutionProvider"])
            ref = session.run(None, {"x": x})[0]
            diff = float(np.max(np.abs(y - ref)))
            ok = diff <= 1e-4 + 1e-4 * float(np.max(np.abs(ref)))
            print("onnxruntime: max abs diff %.2e: %s"
                  % (diff, "match" if ok else "MISMATCH"))
            status = 0 if ok else 1
        except ImportError:
            print("onnxruntime: not installed, no comparison")
        try:
            import torch
            if torch.cuda.is_available():
                yt = model(torch.from_numpy(x).cuda())  # stays on the GPU
                same = bool(torch.equal(yt.cpu(), torch.from_numpy(y)))
                print("torch CUDA tensor in, %s out: %s" % (
                    yt.device, "same as numpy" if same else "DIFFERS"))
                status = status or (0 if same else 1)
        except ImportError:
            pass
    return status


if __name__ == "__main__":
    sys.exit(main())
