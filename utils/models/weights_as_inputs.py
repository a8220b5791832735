#!/usr/bin/env python3
"""Rewrites an ONNX model so that its float initializers are graph inputs:
the compiled package then carries no weights (cgc-run feeds seeded random
values), which is what timing a model on the GPU machine needs when the
transfer limits matter more than the values.

    weights_as_inputs.py IN.onnx OUT.onnx [--min-elements 64]

Initializers of fewer elements (shapes, axes, small constants that later
ops read as values) and non-float ones stay initializers.
"""

import argparse
import sys

import onnx
from onnx import TensorProto, helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--min-elements", type=int, default=64)
    args = parser.parse_args()
    model = onnx.load(args.input)
    graph = model.graph
    keep, moved = [], 0
    for init in graph.initializer:
        elements = 1
        for d in init.dims:
            elements *= d
        if init.data_type == TensorProto.FLOAT and elements >= args.min_elements:
            graph.input.append(helper.make_tensor_value_info(
                init.name, TensorProto.FLOAT, list(init.dims)))
            moved += 1
        else:
            keep.append(init)
    del graph.initializer[:]
    graph.initializer.extend(keep)
    onnx.save(model, args.output)
    print("%s: %d initializers became inputs, %d stayed" %
          (args.output, moved, len(keep)))


if __name__ == "__main__":
    sys.exit(main())
