#!/usr/bin/env python3
"""Imports every ONNX backend test model with cgc and reports how many import.

Only tests whose ops are all in TARGET_OPS (the op coverage cgc commits to)
count towards the rate; the others are listed as out of scope. Exits non-zero
when the rate is below --min-rate, so a regression fails the test suite.

Many backend tests pass parameters that decide shapes (axes, pads, k, ...)
as graph inputs. An ahead-of-time graph compiler needs those values at
compile time; cgc says so and names the `--bind NAME=FILE.pb` option that
fixes them. Such tests are retried with their parameters bound to the
values of test_data_set_0 and counted separately.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

import onnx

# The ops cgc must import (issue 2's list plus the shared models' ops).
TARGET_OPS = set("""
Abs Neg Exp Log Sqrt Reciprocal Sigmoid Tanh Relu LeakyRelu Elu Selu Gelu Erf
Sin Cos Floor Ceil Round Sign Not HardSigmoid HardSwish Softplus Softsign Clip
IsNaN IsInf Add Sub Mul Div Pow Max Min Mod And Or Xor Equal Less Greater
LessOrEqual GreaterOrEqual Where PRelu Sum Mean ReduceSum ReduceMean ReduceMax
ReduceMin ReduceProd ReduceL2 ReduceLogSumExp ArgMax ArgMin Softmax LogSoftmax
LayerNormalization BatchNormalization InstanceNormalization MatMul Gemm Conv
ConvTranspose MaxPool AveragePool GlobalAveragePool GlobalMaxPool Reshape
Flatten Squeeze Unsqueeze Transpose Concat Split Slice Gather GatherElements
Expand Tile Pad Cast Identity Constant ConstantOfShape Shape Size Range Trilu
DepthToSpace SpaceToDepth Resize Dropout NonZero TopK If Loop
NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss CastLike ReduceL1
ReduceSumSquare ReduceLogSum CumSum Hardmax Einsum Acos Acosh Asin Asinh Atan
Atanh Tan Cosh Sinh ThresholdedRelu Shrink Celu Mish OneHot GatherND
ScatterElements ScatterND EyeLike LRN BitShift Compress
MeanVarianceNormalization LpNormalization GlobalLpPool Unique Upsample
""".split())


def graph_ops(graph):
    ops = set()
    for node in graph.node:
        ops.add(node.op_type if node.domain in ("", "ai.onnx")
                else node.domain + "." + node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                ops |= graph_ops(attr.g)
            for g in attr.graphs:
                ops |= graph_ops(g)
    return ops


def run_cgc(cgc, model_path, extra=()):
    proc = subprocess.run([cgc, model_path, "-o", os.devnull, *extra],
                          capture_output=True, text=True, timeout=120)
    message = proc.stderr.strip().splitlines()
    return proc.returncode == 0, (message[0] if message else "")


def import_one(cgc, model_path):
    """Returns (ok, needed_bind, message). Parameters that cgc asks to bind
    are bound one round at a time (it names the first one it meets)."""
    ok, message = run_cgc(cgc, model_path)
    if ok:
        return True, False, message
    model = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    data = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    bound = set()
    while True:
        names = set(re.findall(r"--bind (\S+?)=FILE\.pb", message)) - bound
        if not names:
            return False, bool(bound), message
        bound |= names
        binds = []
        for name in sorted(bound):
            path = os.path.join(data, f"input_{inputs.index(name)}.pb")
            binds += ["--bind", f"{name}={path}"]
        ok, message = run_cgc(cgc, model_path, binds)
        if ok:
            return True, True, message


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cgc", required=True)
    parser.add_argument("--data", default="/usr/include/onnx/backend/test/data")
    parser.add_argument("--suite", default="node")
    parser.add_argument("--min-rate", type=float, default=0.0)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    suite_dir = os.path.join(args.data, args.suite)
    tests = sorted(d for d in os.listdir(suite_dir)
                   if os.path.exists(os.path.join(suite_dir, d, "model.onnx")))
    in_scope, out_of_scope = [], []
    for test in tests:
        path = os.path.join(suite_dir, test, "model.onnx")
        ops = graph_ops(onnx.load(path, load_external_data=False).graph)
        (in_scope if ops <= TARGET_OPS else out_of_scope).append((test, path))

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda t: (t[0], *import_one(args.cgc, t[1])),
                                in_scope))
    passed = [r for r in results if r[1]]
    bound = [r for r in passed if r[2]]
    for test, ok, needed_bind, message in results:
        if not ok or args.verbose:
            status = ("ok  " if not needed_bind else "bind") if ok else "FAIL"
            print(f"{status} {test} {message}")
    rate = len(passed) / max(len(in_scope), 1)
    print(f"import: {len(passed)} of {len(in_scope)} {args.suite} tests whose "
          f"ops are all supported ({100 * rate:.1f}%); "
          f"{len(passed) - len(bound)} as given, {len(bound)} with shape "
          f"parameters bound by --bind; {len(out_of_scope)} tests use other ops")
    return 0 if rate >= args.min_rate else 1


if __name__ == "__main__":
    sys.exit(main())
