"""Writes the narrow-types test model (argv[1]): int4 `a` [6] and float8
e4m3fn `b` [6] in; `s` = float(a) + float(b) (float32), `c` = s as float8
e4m3fn (saturating), `n` = -a as int4 (0 where -a leaves int4: -(-8))."""

import sys

import onnx
from onnx import TensorProto, helper


def build():
    nodes = [
        helper.make_node("Cast", ["a"], ["af"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["af", "bf"], ["s"]),
        helper.make_node("Cast", ["s"], ["c"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Neg", ["af"], ["nf"]),
        helper.make_node("Cast", ["nf"], ["n"], to=TensorProto.INT4),
    ]
    graph = helper.make_graph(
        nodes, "narrow_types",
        [helper.make_tensor_value_info("a", TensorProto.INT4, [6]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT8E4M3FN, [6])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT8E4M3FN, [6]),
         helper.make_tensor_value_info("n", TensorProto.INT4, [6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


if __name__ == "__main__":
    onnx.save(build(), sys.argv[1])
