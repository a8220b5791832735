"""Writes a copy of an ONNX model (.onnx or .onnxtxt) whose named graph
inputs are initializers with seeded random values: the weights of test
models written as inputs become the constants a compiler folds and
stores (--cgc-narrow-storage narrows constants only).

usage: weights_as_initializers.py MODEL OUT.onnx NAME...
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def load(path):
    if path.endswith(".onnxtxt"):
        with open(path) as f:
            text = "".join(l for l in f if not l.lstrip().startswith("#"))
        return onnx.parser.parse_model(text)
    return onnx.load(path)


def main(path, out, names):
    model = load(path)
    graph = model.graph
    rng = np.random.default_rng(11)
    for name in names:
        (vi,) = [i for i in graph.input if i.name == name]
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        scale = 1.0 / np.sqrt(shape[-1]) if shape else 1.0
        value = (rng.standard_normal(shape) * scale).astype(dtype)
        graph.initializer.append(numpy_helper.from_array(value, name))
        graph.input.remove(vi)
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
