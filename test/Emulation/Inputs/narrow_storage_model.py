"""Writes the model of test/Emulation/narrow-storage.test: layer norms read
by products (pre-LN, through a reshape, and post-LN where the norm is a
residual too, and through a transpose kernel), a Gemm with transB and
bias, a batched MatMul against a shared weight, a product of a product,
all weights initializers (what --cgc-narrow-storage stores in 16 bits).

usage: narrow_storage_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(7)

    def weight(name, *shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32), name)

    inits = [weight("gamma", 32), weight("beta", 32), weight("w1", 48, 32),
             weight("b1", 48), weight("w2", 48, 32), weight("w3", 32, 32),
             weight("w4", 32, 32), weight("w5", 32, 24), weight("w6", 32, 40),
             numpy_helper.from_array(np.array([32, 32], np.int64), "rows")]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], axis=-1),
        helper.make_node("Reshape", ["n", "rows"], ["n2"]),
        helper.make_node("Gemm", ["n2", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Tanh", ["h"], ["t"]),
        helper.make_node("MatMul", ["t", "w2"], ["h2"]),
        helper.make_node("Reshape", ["x", "rows"], ["x2"]),
        helper.make_node("Add", ["x2", "h2"], ["r"]),
        helper.make_node("LayerNormalization", ["r", "gamma", "beta"], ["m"], axis=-1),
        helper.make_node("MatMul", ["m", "w3"], ["p"]),
        helper.make_node("Add", ["m", "p"], ["y"]),
        helper.make_node("MatMul", ["n", "w4"], ["z"]),
        helper.make_node("MatMul", ["p", "w5"], ["q"]),
        helper.make_node("Transpose", ["n"], ["nt"], perm=[1, 0, 2]),
        helper.make_node("MatMul", ["nt", "w6"], ["v"]),
    ]
    graph = helper.make_graph(
        nodes, "narrow_storage",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 32]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 16, 32]),
         helper.make_tensor_value_info("q", TensorProto.FLOAT, [32, 24]),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [16, 2, 40])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1])
