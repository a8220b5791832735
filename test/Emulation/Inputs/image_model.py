"""Saves the image classifiers the make_conv_*.py generators build: one
float input `x` [N, 3, S, S], one output [N, classes], opset 17, checked
before it is written."""
import onnx
from onnx import TensorProto, helper


def save(path, name, nodes, inits, batch, size, output, classes=10):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, 3, size, size])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT,
                                       [batch, classes])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
