"""Writes the models of narrow-types.test (argv[1]; with a second path, a
Cast with an unknown round_mode there): the ONNX 1.16+ element types
(float8, float8e8m0, float4e2m1, int4, uint2) as Cast targets and as packed
initializers. The onnx text parser of the Debian onnx predates these types,
so the model is built with the pip onnx of the venv."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

FLOAT = TensorProto.FLOAT


def cast(name, source, to, **attrs):
    return helper.make_node("Cast", [source], [name], to=to, **attrs)


nodes = [
    cast("e4m3_nosat", "x", TensorProto.FLOAT8E4M3FN, saturate=0),
    cast("e4m3_sat", "x", TensorProto.FLOAT8E4M3FN),
    cast("e5m2_nosat", "x", TensorProto.FLOAT8E5M2, saturate=0),
    cast("i4", "x", TensorProto.INT4),
    cast("e8m0_up", "x", TensorProto.FLOAT8E8M0),
    cast("e8m0_down", "x", TensorProto.FLOAT8E8M0, round_mode="down"),
    cast("f4", "x", TensorProto.FLOAT4E2M1),
    cast("packed_i4", "w_i4", FLOAT),
    cast("packed_u2", "w_u2", FLOAT),
]
# Output types: each Cast's `to` (the packed ones give float [5]).
outputs = []
for n in nodes:
    to = next(a.i for a in n.attribute if a.name == "to")
    size = 5 if n.output[0].startswith("packed") else 8
    outputs.append(helper.make_tensor_value_info(n.output[0], to, [size]))
# raw_data packs two int4 (four uint2) to a byte, the first in the low bits;
# an odd count leaves the last high nibble zero.
w_i4 = helper.make_tensor("w_i4", TensorProto.INT4, [5], [-8, 7, 1, -1, 0])
w_u2 = helper.make_tensor("w_u2", TensorProto.UINT2, [5], [3, 0, 1, 2, 3])
graph = helper.make_graph(nodes, "narrow",
                          [helper.make_tensor_value_info("x", FLOAT, [8])],
                          outputs, initializer=[w_i4, w_u2])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
model.ir_version = 11
onnx.save(model, sys.argv[1])

if len(sys.argv) > 2:
    bad = helper.make_graph(
        [cast("y", "x", TensorProto.FLOAT8E8M0, round_mode="sideways")],
        "bad", [helper.make_tensor_value_info("x", FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E8M0, [8])])
    model = helper.make_model(bad, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    onnx.save(model, sys.argv[2])
