#!/usr/bin/env python3
"""Checks the reference interpreter against onnxruntime (CPU) on the same
inputs: every model given, plus seeded random models built here from a pool
of ops (chains with broadcasting, matmul, reductions, normalizations, data
movement). Prints one line per model and a summary; exits 1 on a mismatch.

    compare_with_onnxruntime.py --interp build/bin/cgc-interp [--random N]
        [--pipeline plan] [MODEL.onnx[:DIM=V,...] ...]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def file_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def unary(rng, x, shape):
    op = rng.choice(["Relu", "Tanh", "Sigmoid", "Exp", "Abs", "Neg", "Erf",
                     "Softsign", "Floor"])
    return op, [x], {}, shape


def random_model(seed):
    """A chain of 4 to 8 ops on a [2, 3, 4, 5] float input and one weight."""
    rng = np.random.default_rng(seed)
    shape = [2, 3, 4, 5]
    nodes, inits = [], []
    x = "x"
    for i in range(rng.integers(4, 9)):
        out = f"t{i}"
        kind = rng.choice(["unary", "binary", "matmul", "reduce", "softmax",
                           "transpose", "norm", "concat_slice"])
        if kind == "unary":
            op, ins, attrs, shape = unary(rng, x, shape)
            nodes.append(helper.make_node(op, ins, [out], **attrs))
        elif kind == "binary":
            op = rng.choice(["Add", "Sub", "Mul", "Max", "Min"])
            bshape = [d if rng.random() < 0.5 else 1 for d in shape][1:]
            w = f"w{i}"
            inits.append(numpy_helper.from_array(
                rng.standard_normal(bshape).astype(np.float32), w))
            nodes.append(helper.make_node(op, [x, w], [out]))
        elif kind == "matmul":
            n = int(rng.integers(2, 7))
            w = f"w{i}"
            inits.append(numpy_helper.from_array(
                rng.standard_normal([shape[-1], n]).astype(np.float32), w))
            nodes.append(helper.make_node("MatMul", [x, w], [out]))
            shape = shape[:-1] + [n]
        elif kind == "reduce":
            op = rng.choice(["ReduceSum", "ReduceMean", "ReduceMax"])
            axis = int(rng.integers(0, len(shape)))
            axes = f"a{i}"
            if op == "ReduceSum":
                inits.append(numpy_helper.from_array(
                    np.array([axis], np.int64), axes))
                nodes.append(helper.make_node(op, [x, axes], [out], keepdims=1))
            else:
                nodes.append(helper.make_node(op, [x], [out], axes=[axis],
                                              keepdims=1))
            shape = shape[:axis] + [1] + shape[axis + 1:]
        elif kind == "softmax":
            op = rng.choice(["Softmax", "LogSoftmax"])
            nodes.append(helper.make_node(op, [x], [out],
                                          axis=int(rng.integers(-1, 1))))
        elif kind == "transpose":
            perm = [int(p) for p in rng.permutation(len(shape))]
            nodes.append(helper.make_node("Transpose", [x], [out], perm=perm))
            shape = [shape[p] for p in perm]
        elif kind == "norm":
            g, b = f"g{i}", f"b{i}"
            inits.append(numpy_helper.from_array(
                rng.standard_normal([shape[-1]]).astype(np.float32), g))
            inits.append(numpy_helper.from_array(
                rng.standard_normal([shape[-1]]).astype(np.float32), b))
            nodes.append(helper.make_node("LayerNormalization", [x, g, b],
                                          [out], axis=-1))
        else:
            axis = int(rng.integers(0, len(shape)))
            mid = f"c{i}"
            nodes.append(helper.make_node("Concat", [x, x], [mid], axis=axis))
            starts, ends, axes = f"s{i}", f"e{i}", f"x{i}"
            inits += [numpy_helper.from_array(np.array([1], np.int64), starts),
                      numpy_helper.from_array(
                          np.array([shape[axis] + 1], np.int64), ends),
                      numpy_helper.from_array(np.array([axis], np.int64), axes)]
            nodes.append(helper.make_node("Slice", [mid, starts, ends, axes],
                                          [out]))
        x = out
    graph = helper.make_graph(
        nodes, f"random{seed}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def compare(interp, path, dims, pipeline, rtol, atol, workdir):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options,
                                   providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    inputs = os.path.join(workdir, "inputs")
    ref = os.path.join(workdir, "ref")
    os.makedirs(inputs, exist_ok=True)
    os.makedirs(ref, exist_ok=True)
    feeds = {}
    for info in session.get_inputs():
        shape = [d if isinstance(d, int) else dims[d] for d in info.shape]
        if "int64" in info.type:
            value = rng.integers(0, 50, size=shape).astype(np.int64)
        else:
            value = rng.standard_normal(shape).astype(np.float32)
        feeds[info.name] = value
        np.save(os.path.join(inputs, file_name(info.name)), value)
    for info, value in zip(session.get_outputs(), session.run(None, feeds)):
        np.save(os.path.join(ref, file_name(info.name)), value)
    command = [interp, path, "--inputs", inputs, "--check", ref,
               "--rtol", str(rtol), "--atol", str(atol),
               f"--pipeline={pipeline}"]
    for name, value in dims.items():
        command += ["--dim", f"{name}={value}"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    message = (proc.stderr or proc.stdout).strip().splitlines()
    return proc.returncode == 0, message[-1] if message else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--interp", required=True)
    parser.add_argument("--random", type=int, default=20)
    parser.add_argument("--pipeline", default="none")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()

    failures = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for spec in args.models:
            path, _, dimtext = spec.partition(":")
            dims = dict((k, int(v)) for k, v in
                        (d.split("=") for d in dimtext.split(",") if d))
            jobs.append((os.path.basename(path), path, dims))
        for seed in range(args.random):
            path = os.path.join(tmp, f"random{seed}.onnx")
            onnx.save(random_model(seed), path)
            jobs.append((f"random{seed}", path, {}))
        for name, path, dims in jobs:
            total += 1
            ok, message = compare(args.interp, path, dims, args.pipeline,
                                  args.rtol, args.atol,
                                  os.path.join(tmp, name + ".data"))
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} {'' if ok else message}")
    print(f"onnxruntime: {total - failures} of {total} models match "
          f"(rtol {args.rtol}, atol {args.atol}, pipeline {args.pipeline})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
