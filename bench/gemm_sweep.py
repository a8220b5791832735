#!/usr/bin/env python3
"""Measures GEMM tiles (and whole kernels) of the benchmark's shapes against
each other on the GPU, so the cost model's choices rest on timings.

    # build machine: ONNX cases (weights are graph inputs, so the packages
    # carry no weights), each compiled with the cost model's tile and with
    # every tile named by --tiles (cgc --gemm-tile), into DIR
    python3 bench/gemm_sweep.py build --cgc build/bin/cgc --out DIR
    # GPU machine: cgc-run --bench every package, a table and DIR/sweep.json
    python3 bench/gemm_sweep.py run --cgc-run RT/cgc-run --dir DIR

The cases are BERT b8's matrix products (M = 8 x 128 tokens): the QKV
projection, fc1 (with the exact GELU epilogue), fc2 and the output
projection (with bias and residual: split-K may apply), plus its attention
and one whole encoder layer with the cost model's tiles only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

TILES = ["128x128x8x8", "128x96x8x6", "96x128x6x8", "96x96x6x6",
         "128x64x8x4", "64x128x4x8", "96x64x6x4", "64x96x4x6", "64x64x4x4"]
SPLITS = [1, 2, 4]


def _helpers():
    import onnx
    from onnx import TensorProto, helper
    return onnx, TensorProto, helper


def linear(nodes, inputs, x, name, k, n):
    """x @ W + b with W and b graph inputs."""
    onnx, TensorProto, helper = _helpers()
    inputs.append(helper.make_tensor_value_info(name + "_w", TensorProto.FLOAT,
                                                [k, n]))
    inputs.append(helper.make_tensor_value_info(name + "_b", TensorProto.FLOAT,
                                                [n]))
    nodes.append(helper.make_node("MatMul", [x, name + "_w"], [name + "_mm"],
                                  name=name + "/MatMul"))
    nodes.append(helper.make_node("Add", [name + "_mm", name + "_b"],
                                  [name + "_y"], name=name + "/Add"))
    return name + "_y"


def gelu(nodes, inits, x):
    onnx, TensorProto, helper = _helpers()
    for cname, value in (("sqrt2", 1.4142135381698608), ("one", 1.0),
                         ("half", 0.5)):
        if not any(i.name == cname for i in inits):
            inits.append(helper.make_tensor(cname, TensorProto.FLOAT, [],
                                            [value]))
    nodes += [
        helper.make_node("Div", [x, "sqrt2"], [x + "_d"]),
        helper.make_node("Erf", [x + "_d"], [x + "_e"]),
        helper.make_node("Add", [x + "_e", "one"], [x + "_a"]),
        helper.make_node("Mul", [x, x + "_a"], [x + "_m"]),
        helper.make_node("Mul", [x + "_m", "half"], [x + "_g"]),
    ]
    return x + "_g"


def attention(nodes, inits, qkv, seq, d, heads):
    onnx, TensorProto, helper = _helpers()
    hd = d // heads
    inits.append(helper.make_tensor("split", TensorProto.INT64, [3], [d] * 3))
    inits.append(helper.make_tensor("heads_shape", TensorProto.INT64, [4],
                                    [-1, seq, heads, hd]))
    inits.append(helper.make_tensor("merge_shape", TensorProto.INT64, [3],
                                    [-1, seq, d]))
    inits.append(helper.make_tensor("scale", TensorProto.FLOAT, [],
                                    [1.0 / np.sqrt(hd)]))
    nodes.append(helper.make_node("Split", [qkv, "split"], ["q", "k", "v"],
                                  axis=2))
    for t in "qkv":
        nodes.append(helper.make_node("Reshape", [t, "heads_shape"],
                                      [t + "4"]))
    nodes.append(helper.make_node("Transpose", ["q4"], ["qh"],
                                  perm=[0, 2, 1, 3]))
    nodes.append(helper.make_node("Transpose", ["k4"], ["kt"],
                                  perm=[0, 2, 3, 1]))
    nodes.append(helper.make_node("Transpose", ["v4"], ["vh"],
                                  perm=[0, 2, 1, 3]))
    nodes += [
        helper.make_node("MatMul", ["qh", "kt"], ["s"], name="attn/scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vh"], ["o"], name="attn/values"),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", "merge_shape"], ["attn_out"]),
    ]
    return "attn_out"


def layer_norm(nodes, inputs, x, name, d):
    onnx, TensorProto, helper = _helpers()
    for part in ("g", "b"):
        inputs.append(helper.make_tensor_value_info(
            name + "_" + part, TensorProto.FLOAT, [d]))
    nodes.append(helper.make_node("LayerNormalization",
                                  [x, name + "_g", name + "_b"], [name + "_y"],
                                  axis=-1, epsilon=1e-5, name=name))
    return name + "_y"


def make_case(case, batch=8, seq=128, d=384, heads=6):
    """One ONNX model of a BERT b8 piece; every tensor is a graph input."""
    onnx, TensorProto, helper = _helpers()
    nodes, inputs, inits = [], [], []

    def graph_input(name, shape):
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                    shape))
        return name

    if case == "qkv":
        y = linear(nodes, inputs, graph_input("x", [batch, seq, d]), "qkv",
                   d, 3 * d)
    elif case == "fc1":
        y = gelu(nodes, inits, linear(nodes, inputs,
                                      graph_input("x", [batch, seq, d]),
                                      "fc1", d, 4 * d))
    elif case in ("fc2", "proj"):
        k = 4 * d if case == "fc2" else d
        h = graph_input("h", [batch, seq, k])
        r = graph_input("r", [batch, seq, d])
        y0 = linear(nodes, inputs, h, case, k, d)
        nodes.append(helper.make_node("Add", [r, y0], ["y"]))
        y = "y"
    elif case == "attention":
        y = attention(nodes, inits, graph_input("qkv", [batch, seq, 3 * d]),
                      seq, d, heads)
    elif case == "layer":
        x = graph_input("x", [batch, seq, d])
        a = attention(nodes, inits,
                      linear(nodes, inputs, x, "qkv", d, 3 * d),
                      seq, d, heads)
        p = linear(nodes, inputs, a, "proj", d, d)
        nodes.append(helper.make_node("Add", [x, p], ["res1"]))
        x1 = layer_norm(nodes, inputs, "res1", "ln1", d)
        f = linear(nodes, inputs, gelu(nodes, inits, linear(
            nodes, inputs, x1, "fc1", d, 4 * d)), "fc2", 4 * d, d)
        nodes.append(helper.make_node("Add", [x1, f], ["res2"]))
        y = layer_norm(nodes, inputs, "res2", "ln2", d)
    else:
        raise ValueError(case)
    out = helper.make_tensor_value_info(y, TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, case, inputs, [out], initializer=inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def build(args):
    onnx, _, _ = _helpers()
    os.makedirs(args.out, exist_ok=True)
    manifest = []
    for case in args.cases.split(","):
        path = os.path.join(args.out, case + ".onnx")
        onnx.save(make_case(case), path)
        variants = [("model", None)]
        if case in ("qkv", "fc1", "fc2", "proj"):
            splits = SPLITS if case in ("fc2", "proj") else [1]
            variants += [(t + ("/%d" % s if s > 1 else ""),
                          t + ("/%d" % s if s > 1 else ""))
                         for t in args.tiles.split(",") for s in splits]
        for label, tile in variants:
            pkg = os.path.join(args.out, "pkg",
                               case + "__" + label.replace("/", "s"))
            command = [args.cgc, path, "-o", pkg, "--emit=lib"]
            if tile:
                command.append("--gemm-tile=" + tile)
            start = time.time()
            proc = subprocess.run(command, capture_output=True, text=True)
            chosen = re.findall(r"takes (\S+ \(\S+ a thread\), split-K \d+)",
                                proc.stderr)
            manifest.append({"case": case, "tile": label, "package": pkg,
                             "ok": proc.returncode == 0,
                             "stderr": proc.stderr[-400:], "chosen": chosen,
                             "compile_s": round(time.time() - start, 2)})
            print("%-10s %-16s %s %.1fs" % (case, label,
                                            "ok" if proc.returncode == 0
                                            else "FAILED", time.time() - start),
                  flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def run(args):
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    results = []
    for entry in manifest:
        if not entry["ok"]:
            continue
        pkg = os.path.join(args.dir, "pkg", os.path.basename(entry["package"]))
        proc = subprocess.run([args.cgc_run, pkg, "-q", "--bench",
                               str(args.iters)], capture_output=True, text=True)
        m = re.search(r"median ([0-9.]+) us", proc.stdout)
        entry = dict(entry, median_us=float(m.group(1)) if m else None,
                     error=None if m else (proc.stdout + proc.stderr)[-300:])
        results.append(entry)
        print("%-10s %-16s %s" % (entry["case"], entry["tile"],
                                  "%.2f us" % entry["median_us"] if m
                                  else "error: " + entry["error"]), flush=True)
    with open(os.path.join(args.out or args.dir, "sweep.json"), "w") as f:
        json.dump(results, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--cgc", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--cases", default="qkv,fc1,fc2,proj,attention,layer")
    b.add_argument("--tiles", default=",".join(TILES))
    r = sub.add_parser("run")
    r.add_argument("--cgc-run", required=True)
    r.add_argument("--dir", required=True)
    r.add_argument("--out", help="where sweep.json goes (default --dir)")
    r.add_argument("--iters", type=int, default=2000)
    args = parser.parse_args()
    build(args) if args.command == "build" else run(args)


if __name__ == "__main__":
    sys.exit(main())
