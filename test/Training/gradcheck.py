"""Checks every gradient rule against central finite differences.

For each op, a one-node ONNX model in float64 whose float inputs are all
initializers (so cgc --train differentiates with respect to every one of
them); the step's loss is the mean squared difference with a fixed label.
cgc-interp --train --optimizer=none gives the loss and the gradients; the
directional derivative along a random direction is compared with
(L(w + h d) - L(w - h d)) / 2h evaluated by cgc-interp on perturbed
models. Tolerance: 1e-6 relative (float64; issue 16 asks 1e-4 in fp32).

Usage: gradcheck.py CGC_INTERP WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RTOL = 1e-6
STEP = 1e-5

rng = np.random.default_rng(7)


def uniform(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape)


def positive(*shape):
    return uniform(*shape, low=0.5, high=1.5)


def i64(*values):
    return np.array(values, dtype=np.int64)


# name -> (op type, float inputs (trained), int inputs (constant), attrs,
# opset)
CASES = {
    "add_broadcast": ("Add", [uniform(3, 4), uniform(4)], [], {}),
    "sub": ("Sub", [uniform(3, 4), uniform(3, 1)], [], {}),
    "mul": ("Mul", [uniform(2, 3), uniform(1, 3)], [], {}),
    "div": ("Div", [uniform(2, 3), positive(2, 3)], [], {}),
    "pow": ("Pow", [positive(2, 3), uniform(2, 3)], [], {}),
    "neg": ("Neg", [uniform(2, 3)], [], {}),
    "relu": ("Relu", [uniform(3, 4)], [], {}),
    "sigmoid": ("Sigmoid", [uniform(3, 4)], [], {}),
    "tanh": ("Tanh", [uniform(3, 4)], [], {}),
    "exp": ("Exp", [uniform(3, 4)], [], {}),
    "log": ("Log", [positive(3, 4)], [], {}),
    "sqrt": ("Sqrt", [positive(3, 4)], [], {}),
    "reciprocal": ("Reciprocal", [positive(3, 4)], [], {}),
    "abs": ("Abs", [uniform(3, 4)], [], {}),
    "erf": ("Erf", [uniform(3, 4)], [], {}),
    "gelu_tanh": ("Gelu", [uniform(3, 4)], [], {"approximate": "tanh"}),
    "gelu": ("Gelu", [uniform(3, 4)], [], {}),
    "clip": ("Clip", [uniform(3, 4) * 2, np.array(-0.5), np.array(0.7)], [],
             {}),
    "matmul": ("MatMul", [uniform(3, 4), uniform(4, 5)], [], {}),
    "matmul_batched": ("MatMul", [uniform(2, 3, 4), uniform(4, 5)], [], {}),
    "gemm": ("Gemm", [uniform(4, 3), uniform(5, 4), uniform(5)], [],
             {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
    "transpose": ("Transpose", [uniform(2, 3, 4)], [], {"perm": [2, 0, 1]}),
    "reshape": ("Reshape", [uniform(2, 6)], [i64(3, 4)], {}),
    "expand": ("Expand", [uniform(3, 1)], [i64(2, 3, 4)], {}),
    "reduce_sum": ("ReduceSum", [uniform(3, 4, 5)], [i64(1)],
                   {"keepdims": 0}),
    "reduce_mean": ("ReduceMean", [uniform(3, 4, 5)], [i64(0, 2)], {}),
    "softmax": ("Softmax", [uniform(3, 5)], [], {"axis": 1}),
    "log_softmax": ("LogSoftmax", [uniform(3, 5)], [], {"axis": -1}),
    "layer_norm": ("LayerNormalization",
                   [uniform(3, 6), uniform(6), uniform(6)], [],
                   {"axis": -1, "epsilon": 1e-5}),
    "concat": ("Concat", [uniform(2, 3), uniform(2, 2)], [], {"axis": 1}),
    # Only the first piece reaches the loss: the second's gradient is zeros.
    "split": ("Split", [uniform(5, 3)], [i64(2, 3)], {"axis": 0,
                                                  "_outputs": 2}),
    "slice": ("Slice", [uniform(4, 6)], [i64(1, 1), i64(3, 5), i64(0, 1),
                                         i64(1, 1)], {}),
    # An embedding lookup: row 2 is gathered twice, its gradient is the sum.
    "gather": ("Gather", [uniform(5, 3)], [np.array([[0, 2], [2, 4]],
                                                    np.int64)], {"axis": 0}),
    # Along the last axis, a negative index naming column 3 again.
    "gather_axis1": ("Gather", [uniform(2, 4)], [i64(3, 0, -1)],
                     {"axis": 1}),
    # Tables up to 4M (rows x picks) one-hot elements get the GEMM form;
    # this one (4100 rows, 1100 picks with repeats) the scatter.
    "gather_scatter": ("Gather", [uniform(4100, 2)],
                       [np.random.default_rng(3).integers(-4100, 4100, 1100)],
                       {"axis": 0}),
}
# Convolutions: strides, pads and dilations; groups; 1-d; the input, the
# weight and the bias all trained.
CASES["conv"] = ("Conv", [uniform(2, 3, 7, 6), uniform(4, 3, 3, 2),
                          uniform(4)], [],
                 {"strides": [2, 1], "pads": [1, 0, 1, 1],
                  "dilations": [1, 2]})
CASES["conv_grouped"] = ("Conv", [uniform(1, 4, 5, 5), uniform(6, 2, 3, 3)],
                         [], {"group": 2, "pads": [1, 1, 1, 1]})
CASES["conv_1d_stride3"] = ("Conv", [uniform(2, 2, 10), uniform(3, 2, 3)],
                            [], {"strides": [3]})
# Pooling: overlapping windows with pads, ceil_mode, dilations.
CASES["max_pool"] = ("MaxPool", [uniform(2, 3, 7, 7)], [],
                     {"kernel_shape": [3, 3], "strides": [2, 2],
                      "pads": [1, 1, 1, 1]})
CASES["max_pool_ceil"] = ("MaxPool", [uniform(1, 2, 6, 5)], [],
                          {"kernel_shape": [2, 3], "strides": [2, 2],
                           "dilations": [2, 1], "ceil_mode": 1})
CASES["average_pool"] = ("AveragePool", [uniform(2, 2, 6, 6)], [],
                         {"kernel_shape": [3, 3], "strides": [2, 2],
                          "pads": [1, 1, 1, 1]})
CASES["average_pool_pad"] = ("AveragePool", [uniform(1, 2, 5, 7)], [],
                             {"kernel_shape": [2, 3], "strides": [1, 2],
                              "pads": [1, 0, 0, 1], "ceil_mode": 1,
                              "count_include_pad": 1})
CASES["global_average_pool"] = ("GlobalAveragePool", [uniform(2, 3, 4, 4)],
                                [], {})
# Batch normalization with running statistics (all five trained), and
# with the batch's own (training_mode: mean and variance reduce x).
CASES["batch_norm"] = ("BatchNormalization",
                       [uniform(2, 3, 4, 4), uniform(3), uniform(3),
                        uniform(3), positive(3)], [], {"epsilon": 1e-3})
CASES["batch_norm_training"] = ("BatchNormalization",
                                [uniform(4, 3, 2, 2), uniform(3), uniform(3),
                                 uniform(3), positive(3)], [],
                                {"training_mode": 1, "_outputs": 3,
                                 # the running statistics are state
                                 "_trainable": ["p0", "p1", "p2"]})
# Where needs a boolean condition: a constant of its own, first.
WHERE_CONDITION = np.array([[True, False, True], [False, True, True]])
CASES["where"] = ("Where", [uniform(2, 3), uniform(2, 3)], [WHERE_CONDITION],
                  {"_inputs": ["c0", "p0", "p1"]})
# A Cast to its own type folds away: the output is the trained initializer
# itself (the step must read the loss's input after the initializers
# became state).
CASES["cast_folded"] = ("Cast", [uniform(2, 3)], [],
                        {"to": TensorProto.DOUBLE})
# A Cast that stays: a float32 initializer widened to the float64 output,
# its gradient cast back. Float32 cannot take a 1e-5 step, so the values
# and directions lie on grids (multiples of 1/64 and 1/8) that a step of
# 1/2 keeps exact in float32; the loss is quadratic in them, so central
# differences are exact at any step.
CASES["cast_widening"] = ("Cast", [np.round(uniform(2, 3) * 64) / 64], [],
                          {"to": TensorProto.DOUBLE,
                           "_init_dtype": np.float32, "_step": 0.5,
                           "_direction_grid": 8})


# x * x, one value twice (a variance's square, a squared error): its rule
# builds one gradient, 2 dy x, for both uses.
CASES["mul_square"] = ("Mul", [uniform(2, 3)], [], {"_inputs": ["p0", "p0"]})


def build_model(name, op, floats, ints, attrs, dtype=np.float64):
    """The one-node model; dtype is its float type (float32 for
    utils/train/torch_gradcheck.py's packages)."""
    attrs = dict(attrs)
    # A case may store its initializers in another float type than the
    # model's output (a widening Cast).
    init_dtype = attrs.pop("_init_dtype", dtype)
    inits, names = [], []
    for k, value in enumerate(floats):
        names.append(f"p{k}")
        inits.append(numpy_helper.from_array(np.asarray(value, init_dtype),
                                             f"p{k}"))
    for k, value in enumerate(ints):
        names.append(f"c{k}")
        inits.append(numpy_helper.from_array(value, f"c{k}"))
    attrs.pop("_step", None)
    attrs.pop("_direction_grid", None)
    outputs = ["y"] + [f"unused{k}" for k in range(1, attrs.pop("_outputs", 1))]
    attrs.pop("_trainable", None)
    names = attrs.pop("_inputs", names)
    node = helper.make_node(op, names, outputs, **attrs)
    graph = helper.make_graph([node], name, [], [
        helper.make_tensor_value_info(
            "y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None)],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def trainable_names(floats, attrs):
    """Every float initializer (BatchNormalization's statistics train only
    when named), or the case's `_trainable`."""
    return attrs.get("_trainable", [f"p{k}" for k in range(len(floats))])


def run(interp, model, workdir, tag, label_dir, trainable):
    path = os.path.join(workdir, f"{tag}.onnx")
    onnx.save(model, path)
    out = os.path.join(workdir, f"{tag}.out")
    subprocess.run([interp, path, "--train", "--optimizer=none",
                    "--trainable=" + ",".join(trainable), "--inputs",
                    label_dir, "--outputs", out], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def check(interp, workdir, name, op, floats, ints, attrs):
    model = build_model(name, op, floats, ints, attrs)
    out_shape = [d.dim_value for d in
                 model.graph.output[0].type.tensor_type.shape.dim]
    label_dir = os.path.join(workdir, name + ".label")
    os.makedirs(label_dir, exist_ok=True)
    np.save(os.path.join(label_dir, "label.npy"), uniform(*out_shape))
    trainable = trainable_names(floats, attrs)
    base = run(interp, model, workdir, name, label_dir, trainable)
    # An operand the rule gives no gradient (Clip's bounds) is not moved.
    grads = [os.path.join(base, f"grad.p{k}.npy") for k in range(len(floats))]
    step = attrs.get("_step", STEP)
    grid = attrs.get("_direction_grid")
    directions = [uniform(*np.shape(v)) if os.path.exists(g)
                  else np.zeros(np.shape(v)) for v, g in zip(floats, grads)]
    if grid:
        directions = [np.round(d * grid) / grid for d in directions]
    analytic = sum(float(np.sum(np.load(g) * d))
                   for g, d in zip(grads, directions) if os.path.exists(g))

    def loss_at(sign):
        moved = [np.asarray(v) + sign * step * d
                 for v, d in zip(floats, directions)]
        m = build_model(name, op, moved, ints, attrs)
        tag = f"{name}.{'plus' if sign > 0 else 'minus'}"
        return float(np.load(os.path.join(run(interp, m, workdir, tag,
                                              label_dir, trainable),
                                          "loss.npy")))

    numeric = (loss_at(1) - loss_at(-1)) / (2 * step)
    error = abs(analytic - numeric) / max(abs(numeric), 1e-8)
    print(f"{name:16s} analytic {analytic:+.10e} numeric {numeric:+.10e} "
          f"rel {error:.1e} {'ok' if error <= RTOL else 'FAIL'}")
    return error <= RTOL


def main():
    interp, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    cases = dict(CASES)
    failures = 0
    for name, (op, floats, ints, attrs) in cases.items():
        failures += not check(interp, workdir, name, op, floats, ints, attrs)
    print(f"{len(cases) - failures} of {len(cases)} gradient rules match "
          "finite differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
