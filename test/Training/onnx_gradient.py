"""ONNX's Gradient op (ai.onnx.preview.training) against analytic
gradients written in numpy.

Each case is a small float64 model with a Gradient node; cgc-interp runs
it and every output is compared with the numpy formula (relative 1e-12,
float64). The cases cover what the ONNX backend tests
(test_gradient_of_add*) do not: an initializer and an intermediate tensor
in xs, a y of several elements (the gradient of their sum), an x that y
does not depend on (zeros), a skipped output, and a second-order gradient
(a Gradient of a Gradient's output).

Usage: onnx_gradient.py CGC_INTERP WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RTOL = 1e-12
TRAINING = "ai.onnx.preview.training"
rng = np.random.default_rng(11)


def gradient(xs, y, outputs, zs=()):
    return helper.make_node("Gradient", list(xs) + list(zs), outputs,
                            domain=TRAINING, xs=list(xs), y=y,
                            **({"zs": list(zs)} if zs else {}))


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.DOUBLE, shape)


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", [tensor(n, s) for n, s in inputs],
                              [tensor(n, None) for n in outputs],
                              [numpy_helper.from_array(v, n)
                               for n, v in inits])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 20), helper.make_opsetid(TRAINING, 1)])
    m.ir_version = 9
    return m


def weight_of_a_matmul():
    """s = sum((x W)^2) with W an initializer: ds/dW = 2 x^T (x W)."""
    x, w = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3, 4))
    m = model([helper.make_node("MatMul", ["x", "W"], ["h"]),
               helper.make_node("Mul", ["h", "h"], ["q"]),
               helper.make_node("ReduceSum", ["q"], ["s"], keepdims=0),
               gradient(["W"], "s", ["dW"], zs=["x"])],
              [("x", [2, 3])], ["s", "dW"], [("W", w)])
    return m, {"x": x}, {"s": np.sum((x @ w) ** 2), "dW": 2 * x.T @ (x @ w)}


def intermediate_tensor():
    """s = sum(tanh(x W)) differentiated at h = x W: 1 - tanh(h)^2."""
    x, w = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3, 4))
    h = x @ w
    m = model([helper.make_node("MatMul", ["x", "W"], ["h"]),
               helper.make_node("Tanh", ["h"], ["t"]),
               helper.make_node("ReduceSum", ["t"], ["s"], keepdims=0),
               gradient(["h"], "s", ["dh"])],
              [("x", [2, 3])], ["dh"], [("W", w)])
    return m, {"x": x}, {"dh": 1 - np.tanh(h) ** 2}


def tensor_valued_y():
    """y = a b (broadcast [2,3] by [3]): of sum(y), b summed over rows and
    a; c does not reach y (zeros)."""
    a, b, c = (rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,)),
               rng.uniform(-1, 1, (4,)))
    m = model([helper.make_node("Mul", ["a", "b"], ["y"]),
               gradient(["a", "b", "c"], "y", ["da", "db", "dc"])],
              [("a", [2, 3]), ("b", [3]), ("c", [4])], ["da", "db", "dc"])
    return (m, {"a": a, "b": b, "c": c},
            {"da": np.broadcast_to(b, (2, 3)), "db": a.sum(axis=0),
             "dc": np.zeros(4)})


def skipped_output():
    """The first output is left out (an empty name): only d/db is made."""
    a, b = rng.uniform(-1, 1, (3,)), rng.uniform(0.5, 1.5, (3,))
    m = model([helper.make_node("Div", ["a", "b"], ["y"]),
               gradient(["a", "b"], "y", ["", "db"])],
              [("a", [3]), ("b", [3])], ["db"])
    return m, {"a": a, "b": b}, {"db": -a / b ** 2}


def second_order():
    """y = sum(a^3): dy/da = 3 a^2, and the gradient of its sum 6 a."""
    a = rng.uniform(-1, 1, (5,))
    m = model([helper.make_node("Mul", ["a", "a"], ["a2"]),
               helper.make_node("Mul", ["a2", "a"], ["a3"]),
               helper.make_node("ReduceSum", ["a3"], ["y"], keepdims=0),
               gradient(["a"], "y", ["g"]),
               gradient(["a"], "g", ["h"])],
              [("a", [5])], ["g", "h"])
    return m, {"a": a}, {"g": 3 * a ** 2, "h": 6 * a}


CASES = [weight_of_a_matmul, intermediate_tensor, tensor_valued_y,
         skipped_output, second_order]


def check(interp, workdir, case):
    name = case.__name__
    m, inputs, expected = case()
    path = os.path.join(workdir, name + ".onnx")
    onnx.save(m, path)
    in_dir, out_dir = (os.path.join(workdir, name + ".in"),
                       os.path.join(workdir, name + ".out"))
    os.makedirs(in_dir, exist_ok=True)
    for k, v in inputs.items():
        np.save(os.path.join(in_dir, k + ".npy"), v)
    subprocess.run([interp, path, "--inputs", in_dir, "--outputs", out_dir],
                   check=True, stdout=subprocess.DEVNULL)
    ok = True
    for k, want in expected.items():
        got = np.load(os.path.join(out_dir, k + ".npy"))
        scale = max(np.linalg.norm(want), 1e-30)
        err = (np.linalg.norm(got - want) / scale if got.shape == want.shape
               else np.inf)
        ok &= bool(err <= RTOL)
        print(f"{name:20s} {k:3s} rel {err:.1e} "
              f"{'ok' if err <= RTOL else 'FAIL'}")
    return ok


def main():
    interp, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    passed = sum(check(interp, workdir, c) for c in CASES)
    print(f"{passed} of {len(CASES)} Gradient models match numpy")
    return 0 if passed == len(CASES) else 1


if __name__ == "__main__":
    sys.exit(main())
