#!/usr/bin/env python3
"""Writes model.onnx: a 2-layer, 64-wide MLP block (Gemm, GELU, LayerNorm,
residual) in the shape that exporters produce, used by `make demo`.

    python3 make_model.py            # rewrites model.onnx (fixed seed)
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WIDTH, LAYERS = 64, 2


def main():
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "x"
    consts = {"sqrt2": np.float32(np.sqrt(2.0)), "one": np.float32(1.0),
              "half": np.float32(0.5)}
    for name, value in consts.items():
        inits.append(numpy_helper.from_array(np.array(value), name))
    for i in range(LAYERS):
        w = rng.standard_normal((WIDTH, WIDTH)).astype(np.float32) / 8
        b = rng.standard_normal(WIDTH).astype(np.float32) / 8
        g = np.ones(WIDTH, np.float32)
        beta = np.zeros(WIDTH, np.float32)
        for n, v in ((f"w{i}", w), (f"b{i}", b), (f"g{i}", g), (f"beta{i}", beta)):
            inits.append(numpy_helper.from_array(v, n))
        p = f"l{i}_"
        nodes += [
            helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [p + "h"],
                             name=p + "gemm", transB=1),
            helper.make_node("Div", [p + "h", "sqrt2"], [p + "d"], name=p + "div"),
            helper.make_node("Erf", [p + "d"], [p + "e"], name=p + "erf"),
            helper.make_node("Add", [p + "e", "one"], [p + "e1"], name=p + "add1"),
            helper.make_node("Mul", [p + "h", p + "e1"], [p + "m"], name=p + "mul"),
            helper.make_node("Mul", [p + "m", "half"], [p + "gelu"], name=p + "half"),
            helper.make_node("LayerNormalization", [p + "gelu", f"g{i}", f"beta{i}"],
                             [p + "ln"], name=p + "layernorm", axis=-1),
            helper.make_node("Add", [x, p + "ln"], [p + "out"], name=p + "residual"),
        ]
        x = p + "out"
    nodes.append(helper.make_node("Identity", [x], ["y"], name="output"))
    graph = helper.make_graph(
        nodes, "tiny_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, WIDTH])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="cgc-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(os.path.dirname(__file__) or ".", "model.onnx"))


if __name__ == "__main__":
    main()
