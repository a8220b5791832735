#!/usr/bin/env python3
"""Writes ONNX models that exercise If and Loop as CUDA conditional nodes,
with inputs and onnxruntime (CPU) references, and compiles each with cgc:

  loop_early_exit   Loop whose condition turns false before the trip count
                    runs out; the body reads the iteration number
  loop_zero_trips   a trip count of 0: the results are the initial values
  if_in_loop        an If inside a Loop body, taking both branches across
                    iterations
  loop_in_if        a Loop inside one branch of an If

  utils/models/control_flow_cases.py --cgc build/bin/cgc --out DIR

DIR/<case>/{model.onnx, pkg/, in/, ref/}; on the GPU machine:
  cgc-run DIR/<case>/pkg --inputs DIR/<case>/in --check DIR/<case>/ref
"""

import argparse
import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

F = TensorProto.FLOAT
SHAPE = [4, 8]


def const(name, value, dtype):
    tensor = helper.make_tensor(name + "_v", dtype, [], [value])
    return helper.make_node("Constant", [], [name], value=tensor)


def loop_body(name, nodes, extra_outputs=()):
    """A Loop body (i, cond, v) -> (cond_out, v_out)."""
    return helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", F, SHAPE)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, SHAPE), *extra_outputs])


def loop_early_exit():
    # v_out = v * 0.5 + float(i); continue while i < 2 (3 iterations of 6).
    body = loop_body("body", [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        const("half", 0.5, F),
        helper.make_node("Mul", ["v", "half"], ["h"]),
        helper.make_node("Add", ["h", "fi"], ["v_out"]),
        const("two", 2, TensorProto.INT64),
        helper.make_node("Less", ["i", "two"], ["cond_out"]),
    ])
    nodes = [const("trips", 6, TensorProto.INT64),
             const("yes", True, TensorProto.BOOL),
             helper.make_node("Loop", ["trips", "yes", "x"], ["y"], body=body)]
    return nodes


def loop_zero_trips():
    body = loop_body("body", [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Exp", ["v"], ["v_out"]),
    ])
    return [const("trips", 0, TensorProto.INT64),
            const("yes", True, TensorProto.BOOL),
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Loop", ["trips", "yes", "r"], ["y"], body=body)]


def branch(name, op, output):
    return helper.make_graph(
        [helper.make_node(op, ["v"], [output])], name, [],
        [helper.make_tensor_value_info(output, F, SHAPE)])


def if_in_loop():
    # Iterations alternate: even i -> v + 1, odd i -> v * -0.5.
    then_g = helper.make_graph(
        [const("one", 1.0, F), helper.make_node("Add", ["v", "one"], ["a"])],
        "then", [], [helper.make_tensor_value_info("a", F, SHAPE)])
    else_g = helper.make_graph(
        [const("mh", -0.5, F), helper.make_node("Mul", ["v", "mh"], ["b"])],
        "else", [], [helper.make_tensor_value_info("b", F, SHAPE)])
    body = loop_body("body", [
        const("two", 2, TensorProto.INT64),
        helper.make_node("Mod", ["i", "two"], ["m"]),
        const("zero", 0, TensorProto.INT64),
        helper.make_node("Equal", ["m", "zero"], ["even"]),
        helper.make_node("If", ["even"], ["v_out"], then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ])
    return [const("trips", 5, TensorProto.INT64),
            const("yes", True, TensorProto.BOOL),
            helper.make_node("Loop", ["trips", "yes", "x"], ["y"], body=body)]


def loop_in_if():
    body = loop_body("body", [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Sin", ["v"], ["v_out"]),
    ])
    then_g = helper.make_graph(
        [const("trips", 4, TensorProto.INT64),
         const("yes", True, TensorProto.BOOL),
         helper.make_node("Loop", ["trips", "yes", "x"], ["t"], body=body)],
        "then", [], [helper.make_tensor_value_info("t", F, SHAPE)])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", F, SHAPE)])
    return [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            const("zero", 0.0, F),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                             else_branch=else_g)]


CASES = {"loop_early_exit": loop_early_exit, "loop_zero_trips": loop_zero_trips,
         "if_in_loop": if_in_loop, "loop_in_if": loop_in_if}


def write_case(name, nodes, out, cgc, shift):
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "in"), exist_ok=True)
    os.makedirs(os.path.join(folder, "ref"), exist_ok=True)
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", F, SHAPE)],
                              [helper.make_tensor_value_info("y", F, SHAPE)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    x = (np.random.default_rng(7).standard_normal(SHAPE) + shift).astype(
        np.float32)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    np.save(os.path.join(folder, "in", "x.npy"), x)
    np.save(os.path.join(folder, "ref", "y.npy"), y)
    subprocess.run([cgc, path, "-o", os.path.join(folder, "pkg")], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cgc", default="build/bin/cgc")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    for name, make in CASES.items():
        write_case(name, make(), args.out, args.cgc, 0.0)
    # The If of loop_in_if both ways.
    write_case("loop_in_if_else", loop_in_if(), args.out, args.cgc, -2.0)
    write_case("loop_in_if_then", loop_in_if(), args.out, args.cgc, 2.0)


if __name__ == "__main__":
    main()
