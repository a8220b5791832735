#!/usr/bin/env python3
"""Writes the seed corpus of the importer fuzzers (test/fuzz/corpus).

Seeds are ONNX models made from the in-tree test models (every *.onnxtxt
under test/ and the models of the split-file tests, e.g.
test/Import/ONNX/errors.test), in binary form and as text (*.text), the
bundled example model, and a few models built here for what the tests do
not have in binary form: initializers with raw_data, external data (resolved
against the fuzzers' model folder, which holds a 64-byte weights.bin and
sub/w.bin), nested If and Loop subgraphs.

    build/venv/bin/python utils/fuzz/make_fuzz_corpus.py test/fuzz/corpus
"""

import argparse
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, parser

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def text_models():
    """(name, ONNX text) for the in-tree text models."""
    for folder, _, files in sorted(os.walk(os.path.join(ROOT, "test"))):
        for name in sorted(files):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, os.path.join(ROOT, "test"))
            stem = re.sub(r"[^A-Za-z0-9]+", "-", rel).strip("-")
            if name.endswith(".onnxtxt"):
                yield stem, open(path).read()
            elif name.endswith(".test"):
                # split-file sections: //--- NAME.onnxtxt
                text = open(path).read()
                parts = re.split(r"^//--- (\S+)\n", text, flags=re.M)
                for section, body in zip(parts[1::2], parts[2::2]):
                    if section.endswith(".onnxtxt"):
                        yield stem + "-" + section[: -len(".onnxtxt")], body


def built_models():
    """Models the text tests do not cover."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    opset = [helper.make_opsetid("", 17)]

    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    yield "raw-data-initializer", helper.make_model(
        helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])],
                          "g", [x], [y], [w]), opset_imports=opset)

    ext = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4],
                      data_location=TensorProto.EXTERNAL)
    for key, value in (("location", "weights.bin"), ("offset", "16"),
                       ("length", "16")):
        ext.external_data.add(key=key, value=value)
    yield "external-data", helper.make_model(
        helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"])],
                          "g", [x], [y], [ext]), opset_imports=opset)

    # If nested in If, using a value of the outermost graph.
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    def branch(name, op):
        out = helper.make_tensor_value_info(name + "_out", TensorProto.FLOAT,
                                            [4])
        return helper.make_graph(
            [helper.make_node(op, ["x"], [name + "_out"])], name, [], [out])
    inner = helper.make_node("If", ["c"], ["t_out"],
                             then_branch=branch("ti", "Relu"),
                             else_branch=branch("ei", "Neg"))
    then_graph = helper.make_graph(
        [inner], "t", [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [4])])
    yield "nested-if", helper.make_model(
        helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], then_branch=then_graph,
                              else_branch=branch("e", "Abs"))],
            "g", [x, c], [y]), opset_imports=opset)

    # Loop with a trip count, no condition, one carried value, one scan.
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]),
         helper.make_node("Add", ["v", "x"], ["vo"]),
         helper.make_node("Identity", ["vo"], ["s"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("ci", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
         helper.make_tensor_value_info("vo", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])])
    n = numpy_helper.from_array(np.array(3, dtype=np.int64), "n")
    yield "loop-scan", helper.make_model(
        helper.make_graph(
            [helper.make_node("Loop", ["n", "", "x"], ["y", "scan"],
                              body=body)],
            "g", [x], [y, helper.make_tensor_value_info(
                "scan", TensorProto.FLOAT, [None, 4])], [n]),
        opset_imports=opset)

    # Constant nodes of every attribute kind, feeding shape ops.
    yield "constants-and-shapes", helper.make_model(
        helper.make_graph(
            [helper.make_node("Constant", [], ["shape"],
                              value_ints=[2, 2]),
             helper.make_node("Constant", [], ["k"], value_int=2),
             helper.make_node("Constant", [], ["f"], value_float=0.5),
             helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Mul", ["r", "f"], ["m"]),
             helper.make_node("Flatten", ["m"], ["fl"], axis=0),
             helper.make_node("Squeeze", ["fl", "zero"], ["y"])],
            "g", [x], [y],
            [numpy_helper.from_array(np.array([0], dtype=np.int64), "zero")]),
        opset_imports=opset)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="corpus folder to (re)write")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for old in os.listdir(args.out):
        if old.endswith((".onnx", ".text")):
            os.remove(os.path.join(args.out, old))
    count = 0
    for name, text in text_models():
        try:
            model = parser.parse_model(text)
        except Exception as e:  # not every section is meant to parse
            print(f"skipped {name}: {str(e).splitlines()[0]}", file=sys.stderr)
            continue
        onnx.save(model, os.path.join(args.out, name + ".onnx"))
        count += 1
        # The text itself, for the text parser (the fuzz target reads input
        # that starts with '<' as ONNX text). Not *.onnxtxt: lit would run it.
        body = "".join(line for line in text.splitlines(True)
                       if not line.startswith("#"))
        if body.lstrip().startswith("<"):
            with open(os.path.join(args.out, name + ".text"), "w") as f:
                f.write(body.lstrip())
            count += 1
    for name, model in built_models():
        model.ir_version = 8
        onnx.save(model, os.path.join(args.out, name + ".onnx"))
        count += 1
    example = os.path.join(ROOT, "examples", "tiny_mlp", "model.onnx")
    with open(example, "rb") as src, \
            open(os.path.join(args.out, "example-tiny-mlp.onnx"), "wb") as dst:
        dst.write(src.read())
    count += 1
    print(f"wrote {count} seeds to {args.out}")


if __name__ == "__main__":
    main()
