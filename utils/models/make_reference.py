#!/usr/bin/env python3
"""Writes seeded random inputs for an ONNX model and onnxruntime's (CPU)
outputs for them, as .npy files named the way cgc-run expects
(<name>.npy with characters outside [A-Za-z0-9._-] replaced by '_').

    make_reference.py MODEL.onnx OUTDIR [--dim N=1] [--seed 0]

OUTDIR/inputs/ holds the inputs, OUTDIR/ref/ the reference outputs.
"""

import argparse
import os
import re

import numpy as np
import onnxruntime as ort


def file_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("outdir")
    parser.add_argument("--dim", action="append", default=[])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shift", type=float, default=0.0,
                        help="added to float inputs (to steer data-dependent "
                             "branches)")
    args = parser.parse_args()
    dims = {}
    for binding in args.dim:
        name, _, value = binding.partition("=")
        if not name or not value.isdigit() or int(value) < 1:
            parser.error("expected --dim NAME=N with N >= 1, got %r" % binding)
        dims[name] = int(value)

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(args.model, options,
                                   providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(args.seed)
    feeds = {}
    for info in session.get_inputs():
        unbound = [d for d in info.shape
                   if not isinstance(d, int) and d not in dims]
        if unbound:
            # A symbolic dim without a size: say which, as cgc does.
            parser.error("input %r has symbolic dim(s) %s: give sizes with %s"
                         % (info.name, ", ".join(map(repr, map(str, unbound))),
                            " ".join("--dim %s=SIZE" % d for d in unbound)))
        shape = [d if isinstance(d, int) else dims[d] for d in info.shape]
        if "int64" in info.type:
            feeds[info.name] = rng.integers(0, 100, size=shape).astype(np.int64)
        elif "bool" in info.type:
            feeds[info.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            feeds[info.name] = (rng.standard_normal(shape) +
                                args.shift).astype(np.float32)
    outputs = session.run(None, feeds)
    os.makedirs(os.path.join(args.outdir, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(args.outdir, "ref"), exist_ok=True)
    for name, value in feeds.items():
        np.save(os.path.join(args.outdir, "inputs", file_name(name)), value)
    for info, value in zip(session.get_outputs(), outputs):
        np.save(os.path.join(args.outdir, "ref", file_name(info.name)), value)


if __name__ == "__main__":
    main()
